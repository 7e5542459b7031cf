package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/openai"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Classify the error of a Chat Completions call. The local server stands in
// for the API and answers with a real insufficient_quota body.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
	}))
	defer srv.Close()

	client := oai.NewClient(
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("sk-..."),
		option.WithMaxRetries(0), // the request loop decides, not the SDK
	)
	_, err := client.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hello")},
	})
	if err != nil {
		c := adapter.Classify(err)
		fmt.Println(c.Class, c.Reason, c.Rule)
	}
	// Output: quota quota quota.exhausted
}

// Watch a Responses stream for failures reported in band, then for the
// error that ended it.
func ExampleEventFailure() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: response.failed\n"+
			`data: {"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","status":"failed","model":"gpt-4o","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again."}}}`+"\n\n")
	}))
	defer srv.Close()

	client := oai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-..."), option.WithMaxRetries(0))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-4o",
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hello")},
	})
	defer stream.Close()

	var f erradvisor.Failure
	failed := false
	for stream.Next() {
		if f, failed = adapter.EventFailure(stream.Current()); failed {
			break
		}
	}
	if err := stream.Err(); !failed && err != nil {
		f, failed = adapter.Failure(err), true
	}
	if failed {
		c := erradvisor.Classify(f)
		fmt.Println(c.Class, c.Reason)
	}
	// Output: overflow context_window
}

// Build the Failure yourself to add what the adapter cannot know: the
// model and the host clock's now.
func ExampleFailure() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "644")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)
	}))
	defer srv.Close()

	client := oai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-..."), option.WithMaxRetries(0))
	_, err := client.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hello")},
	})

	f := adapter.Failure(err)
	f.Model = "gpt-4o"
	// f.At = clock.Now()
	c := erradvisor.Classify(f)
	fmt.Println(f.Status, f.Code, c.Class, c.Reason, c.RetryAfter)
	// Output: 429 rate_limit_exceeded transient rate_limit 644ms
}

// Map how a successful answer ended.
func ExampleStopReason() {
	fmt.Println(adapter.StopReason("content_filter"))
	fmt.Println(adapter.StopReason("tool_calls"))
	fmt.Println(adapter.StopReason("")) // null: no finish reason
	// Output:
	// refused
	// toolUse
	// unknown
}

// Map how a Responses API response ended.
func ExampleResponseStopReason() {
	var r responses.Response
	r.Status = responses.ResponseStatusIncomplete
	r.IncompleteDetails.Reason = "max_output_tokens"
	fmt.Println(adapter.ResponseStopReason(r))
	// Output: length
}

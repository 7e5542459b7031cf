package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/anthropic"
)

// Classify the error that ended a Messages stream: here an overload
// reported as an error event inside a 200 stream. The local server stands
// in for the API.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: error\n"+
			`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`+"\n\n")
	}))
	defer srv.Close()

	client := ant.NewClient(
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("sk-ant-..."),
		option.WithMaxRetries(0), // the request loop decides, not the SDK
	)
	stream := client.Messages.NewStreaming(context.Background(), ant.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("hello"))},
	})
	defer stream.Close()
	for stream.Next() {
		// use stream.Current()
	}
	if err := stream.Err(); err != nil {
		c := adapter.Classify(err)
		fmt.Println(c.Class, c.Reason)
	}
	// Output: transient overloaded
}

// Build the Failure yourself to add what the adapter cannot know: the
// model and the host clock's now.
func ExampleFailure() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`)
	}))
	defer srv.Close()

	client := ant.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-..."), option.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), ant.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("hello"))},
	})

	f := adapter.Failure(err)
	f.Model = "claude-sonnet-4-5"
	// f.At = clock.Now()
	c := erradvisor.Classify(f)
	fmt.Println(f.Status, f.Code, c.Class, c.Reason)
	// Output: 400 invalid_request_error overflow context_window
}

// Map a message's stop_reason.
func ExampleStopReason() {
	fmt.Println(adapter.StopReason(ant.StopReasonPauseTurn))
	fmt.Println(adapter.StopReason(ant.StopReasonModelContextWindowExceeded))
	fmt.Println(adapter.StopReason("something_new"))
	// Output:
	// paused
	// contextWindow
	// unknown
}

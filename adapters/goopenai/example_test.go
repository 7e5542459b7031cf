package goopenai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/goopenai"
	openai "github.com/sashabaranov/go-openai"
)

// Classify the error of a chat completion. The local server stands in for
// the API and answers with a real insufficient_quota body.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
	}))
	defer srv.Close()

	cfg := openai.DefaultConfig("sk-...")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg) // go-openai never retries on its own

	_, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello"}},
	})
	if err != nil {
		c := adapter.Classify(err)
		fmt.Println(c.Class, c.Reason, c.Rule)
	}
	// Output: quota quota quota.exhausted
}

// Name the provider when the client talks to an OpenAI-compatible server.
func ExampleFailureFor() {
	err := &openai.APIError{
		HTTPStatusCode: 402,
		Code:           402,
		Message:        "This request requires more credits, or fewer max_tokens. You requested up to 4096 tokens, but can only afford 222. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account",
	}
	f := adapter.FailureFor("openrouter", err)
	f.Model = "openai/gpt-5.4-pro"
	c := erradvisor.Classify(f)
	fmt.Println(f.Provider, f.Status, f.Code, c.Class, c.Reason)
	// Output: openrouter 402 402 billing credits
}

// Map the finish reason of a successful answer.
func ExampleStopReason() {
	fmt.Println(adapter.StopReason(openai.FinishReasonContentFilter))
	fmt.Println(adapter.StopReason(openai.FinishReasonToolCalls))
	fmt.Println(adapter.StopReason("eos"))
	// Output:
	// refused
	// toolUse
	// unknown
}

package genkit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/genkit"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"google.golang.org/genai"
)

// Add the middleware to a Generate call. The model here is a local stand-in
// that answers one 503 UNAVAILABLE as the Gemini SDK reports it, then
// "Hello."; the middleware retries it after the Decision's delay.
func ExampleMiddleware() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	calls := 0
	m := genkit.DefineModel(g, "example/flaky", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			if calls++; calls == 1 {
				return nil, fmt.Errorf("failed to generate contents: %w", genai.APIError{
					Code: 503, Message: "The model is overloaded. Please try again later.", Status: "UNAVAILABLE"})
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("Hello."), FinishReason: ai.FinishReasonStop}, nil
		})

	policy := erradvisor.Conservative()
	policy.BaseDelay = 1 // a nanosecond, for the example; the default is 2 s
	// One middleware per conversation.
	mw := adapter.Middleware(policy,
		adapter.WithTarget("gemini", "gemini-2.5-flash"),
		adapter.WithDecisions(func(d erradvisor.Decision) { fmt.Println(d.Action, d.Cause) }),
	)
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Say hello."), ai.WithMiddleware(mw))
	var e *erradvisor.Error
	switch {
	case errors.As(err, &e):
		fmt.Println("stopped:", e.Classification.Class)
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println(resp.Text())
	}
	// Output:
	// retry retryable
	// none success
	// Hello.
}

// Describe a Gemini RESOURCE_EXHAUSTED with its RetryInfo.
func ExampleFailure() {
	err := fmt.Errorf("failed to generate contents: %w", genai.APIError{
		Code: 429, Status: "RESOURCE_EXHAUSTED",
		Message: "Resource has been exhausted (e.g. check quota).",
		Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}},
	})
	f := adapter.Failure(err)
	c := erradvisor.Classify(f)
	fmt.Println(f.Provider, f.Status, f.Code, f.Header.Get("Retry-After-Ms"))
	fmt.Println(c.Class, c.Reason, c.RetryAfter)
	// Output:
	// gemini 429 RESOURCE_EXHAUSTED 7000
	// transient rate_limit 7s
}

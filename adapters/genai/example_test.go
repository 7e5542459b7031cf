package genai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/genai"
	"github.com/erradvisor/erradvisor/httprec"
	"google.golang.org/genai"
)

// Classify the error of a GenerateContent call, with the response headers
// the SDK's error lacks taken from a Recorder. The local server stands in
// for the Gemini API and answers with a real overload body and a
// Retry-After header.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)
	}))
	defer srv.Close()

	rec := httprec.New(nil)
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "AIza...",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  rec.Client(), // keeps Retry-After and Date of failed responses
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
		// HTTPOptions.RetryOptions left nil: the SDK does not retry.
	})
	if err != nil {
		panic(err)
	}

	rec.Reset() // before each request
	_, err = client.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hello"), nil)
	if err != nil {
		f := adapter.FailureFor(client.ClientConfig().Backend, err)
		f.Model = "gemini-2.5-flash"
		if r, ok := rec.Last(); ok {
			r.Fill(&f) // Header and At from the recorded response
		}
		c := erradvisor.Classify(f)
		fmt.Println(f.Status, f.Code, c.Class, c.Reason, c.RetryAfter)
	}
	// Output: 503 UNAVAILABLE transient overloaded 30s
}

// Map the finish reason of a response.
func ExampleResponseStopReason() {
	resp := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{FinishReason: genai.FinishReasonSafety}}}
	fmt.Println(adapter.ResponseStopReason(resp))
	fmt.Println(adapter.StopReason(genai.FinishReasonMaxTokens), adapter.StopReason(genai.FinishReasonMalformedFunctionCall))
	// Output:
	// refused
	// length unknown
}

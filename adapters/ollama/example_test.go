package ollama_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/ollama"
	"github.com/ollama/ollama/api"
)

// Classify the error of a chat call. The local server stands in for Ollama
// and answers as it does for a model that was never pulled.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"model \"llama3\" not found, try pulling it first"}`)
	}))
	defer srv.Close()

	base, _ := url.Parse(srv.URL)
	client := api.NewClient(base, http.DefaultClient) // the client never retries on its own

	var last api.ChatResponse
	err := client.Chat(context.Background(), &api.ChatRequest{
		Model:    "llama3",
		Messages: []api.Message{{Role: "user", Content: "hello"}},
	}, func(r api.ChatResponse) error { last = r; return nil })
	if err == nil && !last.Done {
		err = adapter.ErrStreamEnded // the connection broke mid-answer
	}
	if err != nil {
		c := adapter.Classify(err)
		fmt.Println(c.Class, c.Reason)
		return
	}
	fmt.Println(adapter.StopReason(last.DoneReason))
	// Output: permanent model_not_found
}

// Build the Failure yourself to add the model and the host clock's now.
func ExampleFailure() {
	err := api.StatusError{StatusCode: 503, Status: "503 Service Unavailable",
		ErrorMessage: "server busy, please try again.  maximum pending requests exceeded"}
	f := adapter.Failure(err)
	f.Model = "llama3"
	// f.At = clock.Now()
	c := erradvisor.Classify(f)
	fmt.Println(f.Status, c.Class, c.Reason)
	// Output: 503 transient overloaded
}

// Map the done_reason of the last response.
func ExampleStopReason() {
	fmt.Println(adapter.StopReason("length"))
	fmt.Println(adapter.StopReason(""))
	// Output:
	// length
	// unknown
}

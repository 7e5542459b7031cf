package httprec_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/httprec"
)

// Give an SDK a client that records failed responses, then fill what its
// error value lacks. The local server stands in for the API: a 503 with a
// Retry-After header that the SDK's error would not carry.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "30")
		w.Header().Set("Date", "Mon, 12 May 2025 11:11:55 GMT")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)
	}))
	defer srv.Close()

	rec := httprec.New(nil)
	client := rec.Client() // hand this to the SDK

	rec.Reset() // before each request
	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body) // the SDK reads the whole body as usual
	resp.Body.Close()

	// What the SDK's error gives: a status and a message, no headers.
	f := erradvisor.Failure{Provider: "gemini", Status: resp.StatusCode, Message: string(body)}
	if r, ok := rec.Last(); ok {
		r.Fill(&f) // adds Header (Retry-After, Date) and At
	}
	c := erradvisor.Classify(f)
	fmt.Println(f.At.Format(time.RFC3339), c.Class, c.Reason, c.RetryAfter)
	// Output: 2025-05-12T11:11:55Z transient overloaded 30s
}

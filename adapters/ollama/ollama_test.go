package ollama_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/ollama"
	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"
)

// Real Ollama error bodies: the server answers {"error": "<text>"}. Each text
// is copied from the source named beside it.
const (
	// https://github.com/ollama/ollama/blob/v0.17.4/server/routes.go#L2511
	// (handleScheduleError: 404 when the model file does not exist)
	bodyModelNotFound = `{"error":"model \"llama3\" not found, try pulling it first"}`
	// https://github.com/valentinfrlch/ha-llmvision/issues/648; the status is
	// 503: https://github.com/ollama/ollama/blob/v0.17.4/server/routes.go#L2509
	bodyServerBusy = `{"error":"server busy, please try again.  maximum pending requests exceeded"}`
	// https://github.com/ollama/ollama/issues/8770 ("500 Internal Server
	// Error: llama runner process has terminated: exit status 2")
	bodyRunnerTerminated = `{"error":"llama runner process has terminated: exit status 2"}`
	// https://github.com/ollama/ollama/issues/15923
	bodyRunnerStopped = `{"error":"model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details"}`
	// https://github.com/nano-step/nano-brain/issues/208 (400)
	bodyInputTooLong = `{"error":"the input length exceeds the context length"}`
	// https://github.com/ollama/ollama/blob/v0.17.4/server/routes.go#L756
	bodyCannotTruncate = `{"error":"input exceeds maximum context length and cannot be truncated further"}`
	// https://github.com/ollama/ollama/issues/14795 (400)
	bodyNoTools = `{"error":"registry.ollama.ai/library/Qwen3.5:0.8b does not support tools"}`
	// https://github.com/ollama/ollama/blob/v0.17.4/server/routes.go#L1890
	// (401 with the sign-in URL; the key is a placeholder)
	bodyUnauthorized = `{"error":"unauthorized","signin_url":"https://ollama.com/connect?name=host&key=placeholder"}`
)

// Stream lines (application/x-ndjson). A failure after the answer began is
// an {"error": ...} line in the 200 stream; the text is the format of
// https://github.com/ollama/ollama/blob/v0.17.4/llm/server.go#L1689 for a
// runner whose output broke off.
const (
	ndChunk = `{"model":"llama3","created_at":"2026-02-27T02:14:29Z","message":{"role":"assistant","content":"Hel"},"done":false}` + "\n"
	ndError = `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n"
)

// jsonError answers with status and a JSON body, as Ollama's gin handlers do.
func jsonError(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// ndjson answers 200 with the given lines.
func ndjson(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		for _, l := range lines {
			fmt.Fprint(w, l)
			w.(http.Flusher).Flush()
		}
	}
}

// cutStream starts a 200 chunked stream, sends lines, then closes the
// connection without the terminating chunk.
func cutStream(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		writeRaw(buf, lines)
	}
}

func writeRaw(buf *bufio.ReadWriter, lines []string) {
	fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
	for _, l := range lines {
		fmt.Fprintf(buf, "%x\r\n%s\r\n", len(l), l)
	}
	buf.Flush()
}

// hold answers nothing until the client goes away.
func hold(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// refusedURL returns the address of a port nothing listens on: an Ollama
// server that is not running.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func newClient(t *testing.T, raw string) *api.Client {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return api.NewClient(u, &http.Client{})
}

// chat runs a Chat call, streaming or not, and returns its error and the
// last response.
func chat(ctx context.Context, c *api.Client, stream bool) (api.ChatResponse, error) {
	var last api.ChatResponse
	err := c.Chat(ctx, &api.ChatRequest{
		Model:    "llama3",
		Messages: []api.Message{{Role: "user", Content: "hello"}},
		Stream:   &stream,
	}, func(r api.ChatResponse) error {
		last = r
		return nil
	})
	return last, err
}

// got is what a test compares.
type got struct {
	Status  int
	Message string
	Class   erradvisor.Class
	Reason  erradvisor.Reason
}

func TestFailureEndToEnd(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: no server running
		stream  bool
		timeout time.Duration
		cancel  time.Duration
		want    got
		anyMsg  bool // Message is a Go error's text, not compared
	}{
		{
			name:    "404 model not found",
			handler: jsonError(404, bodyModelNotFound),
			want:    got{404, `model "llama3" not found, try pulling it first`, erradvisor.Permanent, erradvisor.ReasonModelNotFound},
		},
		{
			name:    "404 model not found on a stream",
			handler: jsonError(404, bodyModelNotFound),
			stream:  true,
			want:    got{404, `model "llama3" not found, try pulling it first`, erradvisor.Permanent, erradvisor.ReasonModelNotFound},
		},
		{
			name:    "503 server busy",
			handler: jsonError(503, bodyServerBusy),
			stream:  true,
			want:    got{503, "server busy, please try again.  maximum pending requests exceeded", erradvisor.Transient, erradvisor.ReasonOverloaded},
		},
		{
			name:    "500 llama runner process has terminated",
			handler: jsonError(500, bodyRunnerTerminated),
			stream:  true,
			want:    got{500, "llama runner process has terminated: exit status 2", erradvisor.Transient, erradvisor.ReasonServer},
		},
		{
			name:    "500 model runner has unexpectedly stopped",
			handler: jsonError(500, bodyRunnerStopped),
			want:    got{500, "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details", erradvisor.Transient, erradvisor.ReasonServer},
		},
		{
			name:    "400 input length exceeds the context length",
			handler: jsonError(400, bodyInputTooLong),
			stream:  true,
			want:    got{400, "the input length exceeds the context length", erradvisor.Overflow, erradvisor.ReasonContextWindow},
		},
		{
			name:    "500 input cannot be truncated further",
			handler: jsonError(500, bodyCannotTruncate),
			want:    got{500, "input exceeds maximum context length and cannot be truncated further", erradvisor.Overflow, erradvisor.ReasonContextWindow},
		},
		{
			name:    "400 model does not support tools",
			handler: jsonError(400, bodyNoTools),
			stream:  true,
			want:    got{400, "registry.ollama.ai/library/Qwen3.5:0.8b does not support tools", erradvisor.Permanent, erradvisor.ReasonInvalidRequest},
		},
		{
			name:    "401 sign-in required (AuthorizationError)",
			handler: jsonError(401, bodyUnauthorized),
			stream:  true,
			want:    got{401, "401 Unauthorized", erradvisor.Permanent, erradvisor.ReasonAuth},
		},
		{
			name: "502 HTML page from a proxy",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "<html><body>502 Bad Gateway</body></html>", http.StatusBadGateway)
			},
			want: got{502, "<html><body>502 Bad Gateway</body></html>", erradvisor.Transient, erradvisor.ReasonServer},
		},
		{
			name:    "error line inside a 200 stream",
			handler: ndjson(ndChunk, ndError),
			stream:  true,
			want:    got{0, "an error was encountered while running the model: unexpected EOF", erradvisor.Transient, erradvisor.ReasonServer},
		},
		{
			name:   "connection refused: server not running",
			stream: true,
			want:   got{Class: erradvisor.Transient, Reason: erradvisor.ReasonNetwork},
			anyMsg: true,
		},
		{
			name:    "context canceled by the caller",
			handler: hold,
			stream:  true,
			cancel:  50 * time.Millisecond,
			want:    got{Class: erradvisor.Canceled, Reason: erradvisor.ReasonAborted},
			anyMsg:  true,
		},
		{
			name:    "deadline exceeded",
			handler: hold,
			timeout: 50 * time.Millisecond,
			want:    got{Class: erradvisor.Transient, Reason: erradvisor.ReasonTimeout},
			anyMsg:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := refusedURL(t)
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				t.Cleanup(srv.Close)
				u = srv.URL
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			_, err := chat(ctx, newClient(t, u), tt.stream)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			f := adapter.Failure(err)
			if f.Err != err || f.Provider != "ollama" || f.Code != "" || f.Message == "" || f.Header != nil || !f.At.IsZero() {
				t.Errorf("Failure(%v) = %+v", err, f)
			}
			c := erradvisor.Classify(f)
			g := got{f.Status, f.Message, c.Class, c.Reason}
			if tt.anyMsg {
				g.Message = ""
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\nfailure: %+v", diff, f)
			}
			if got := adapter.Classify(err); got.Class != tt.want.Class {
				t.Errorf("Classify(err).Class = %v, want %v", got.Class, tt.want.Class)
			}
		})
	}
}

// TestStreamCut checks the gap ErrStreamEnded fills: the client returns nil
// when a stream's connection breaks mid-answer.
func TestStreamCut(t *testing.T) {
	srv := httptest.NewServer(cutStream(ndChunk))
	defer srv.Close()
	last, err := chat(context.Background(), newClient(t, srv.URL), true)
	if err != nil || last.Done {
		t.Fatalf("chat = %+v, %v; want no error and no done response", last, err)
	}
	c := erradvisor.Classify(adapter.Failure(adapter.ErrStreamEnded))
	if diff := cmp.Diff([2]any{erradvisor.Transient, erradvisor.ReasonStream}, [2]any{c.Class, c.Reason}); diff != "" {
		t.Errorf("ErrStreamEnded classification mismatch (-want +got):\n%s", diff)
	}
}

// TestFailureBuiltErrors covers values the client's types allow that a test
// server does not produce: pointers, wrapping, empty fields.
func TestFailureBuiltErrors(t *testing.T) {
	busy := api.StatusError{StatusCode: 503, Status: "503 Service Unavailable", ErrorMessage: "server busy, please try again.  maximum pending requests exceeded"}
	tests := []struct {
		name string
		err  error
		want erradvisor.Failure
	}{
		{"wrapped value", fmt.Errorf("turn 3: %w", busy), erradvisor.Failure{Provider: "ollama", Status: 503, Message: busy.ErrorMessage}},
		{"pointer", &busy, erradvisor.Failure{Provider: "ollama", Status: 503, Message: busy.ErrorMessage}},
		{"status line only", api.StatusError{StatusCode: 502, Status: "502 Bad Gateway"}, erradvisor.Failure{Provider: "ollama", Status: 502, Message: "502 Bad Gateway"}},
		{"empty StatusError", api.StatusError{}, erradvisor.Failure{Provider: "ollama", Message: "something went wrong, please see the ollama server logs for details"}},
		{"negative status", api.StatusError{StatusCode: -1, ErrorMessage: "x"}, erradvisor.Failure{Provider: "ollama", Message: "x"}},
		{"authorization pointer", &api.AuthorizationError{StatusCode: 401}, erradvisor.Failure{Provider: "ollama", Status: 401, Message: "unauthorized"}},
		{"plain error", errors.New("an error was encountered while running the model: unexpected EOF"),
			erradvisor.Failure{Provider: "ollama", Message: "an error was encountered while running the model: unexpected EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := adapter.Failure(tt.err)
			if f.Err != tt.err {
				t.Errorf("Err = %v, want %v", f.Err, tt.err)
			}
			f.Err = nil
			if diff := cmp.Diff(tt.want, f); diff != "" {
				t.Errorf("Failure mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNil(t *testing.T) {
	if diff := cmp.Diff(erradvisor.Failure{}, adapter.Failure(nil)); diff != "" {
		t.Errorf("Failure(nil) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(erradvisor.Classification{}, adapter.Classify(nil)); diff != "" {
		t.Errorf("Classify(nil) mismatch (-want +got):\n%s", diff)
	}
}

// TestStopReason covers every done_reason the server sends
// (https://github.com/ollama/ollama/blob/v0.17.4/llm/server.go#L1490 and
// the load and unload answers of server/routes.go), and others.
func TestStopReason(t *testing.T) {
	tests := []struct {
		reason string
		want   erradvisor.StopReason
	}{
		{"stop", erradvisor.StopEndTurn},
		{"length", erradvisor.StopLength},
		{"load", erradvisor.StopEndTurn},
		{"unload", erradvisor.StopEndTurn},
		{"", erradvisor.StopUnknown},
		{"Stop", erradvisor.StopUnknown},
		{"tool_calls", erradvisor.StopUnknown},
		{"eos", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		if got := adapter.StopReason(tt.reason); got != tt.want {
			t.Errorf("StopReason(%q) = %v, want %v", tt.reason, got, tt.want)
		}
	}
}

// TestStopReasonFromResponse reads done_reason from a real 200 stream
// through the client.
func TestStopReasonFromResponse(t *testing.T) {
	tests := []struct {
		line string
		want erradvisor.StopReason
	}{
		{`{"model":"llama3","message":{"role":"assistant","content":"lo"},"done":true,"done_reason":"length"}`, erradvisor.StopLength},
		{`{"model":"llama3","message":{"role":"assistant","content":"lo"},"done":true,"done_reason":"stop"}`, erradvisor.StopEndTurn},
		// The runner's connection closed: done without a reason.
		{`{"model":"llama3","message":{"role":"assistant","content":"lo"},"done":true}`, erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			srv := httptest.NewServer(ndjson(ndChunk, tt.line+"\n"))
			defer srv.Close()
			last, err := chat(context.Background(), newClient(t, srv.URL), true)
			if err != nil || !last.Done {
				t.Fatalf("chat = %+v, %v", last, err)
			}
			if got := adapter.StopReason(last.DoneReason); got != tt.want {
				t.Errorf("StopReason(%q) = %v, want %v", last.DoneReason, got, tt.want)
			}
		})
	}
}

// FuzzFailure feeds outside text through every field Failure reads.
func FuzzFailure(f *testing.F) {
	f.Add(404, "404 Not Found", `model "llama3" not found, try pulling it first`)
	f.Add(0, "", "")
	f.Fuzz(func(t *testing.T, status int, line, msg string) {
		for _, err := range []error{
			api.StatusError{StatusCode: status, Status: line, ErrorMessage: msg},
			api.AuthorizationError{StatusCode: status, Status: line},
			errors.New(msg),
		} {
			f := adapter.Failure(err)
			if f.Err != err || f.Provider != "ollama" || f.Status < 0 || f.Message == "" && err.Error() != "" {
				t.Fatalf("Failure(%#v) = %+v", err, f)
			}
			_ = erradvisor.Classify(f)
			_ = adapter.StopReason(msg)
		}
	})
}

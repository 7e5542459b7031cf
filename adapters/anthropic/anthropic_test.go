package anthropic_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/anthropic"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Real Anthropic error bodies, each copied from the source beside it (all
// are fixtures of the core module, testdata/fixtures/anthropic.yaml). The
// envelope is the API's: {"type":"error","error":{"type","message"},"request_id"}.
const (
	// https://github.com/anthropics/anthropic-sdk-typescript/issues/616
	bodyOverloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	// https://github.com/OpenHands/OpenHands/issues/9259
	bodyRateLimit = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (0dccdde6-f924-4f1b-bb3b-92ef846e0a5b) of 20,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."}}`
	// https://github.com/earendil-works/pi/issues/102
	bodyPromptTooLong = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`
	// https://github.com/anthropics/claude-code/issues/4684
	bodyCreditTooLow = `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	// https://github.com/eyaltoledano/claude-task-master/issues/222
	bodyInvalidKey = `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
	// https://github.com/anthropics/claude-code/issues/5349
	bodyModelNotFound = `{"type":"error","error":{"type":"not_found_error","message":"model: sonnet4"}}`
	// https://github.com/anthropics/claude-code/issues/17848
	bodyPermission = `{"type":"error","error":{"type":"permission_error","message":"Permission denied"},"request_id":"req_011CX4kyMNYV8HGKS4XAgwkP"}`
	// https://github.com/anthropics/claude-code/issues/28639
	bodyServerError = `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CYVB4LnZmcupS55mD1Jje"}`
	// https://github.com/earendil-works/pi/issues/2734
	bodyRequestTooLarge = `{"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`
	// https://github.com/anthropics/claude-code/issues/38035
	bodySpendLimit = `{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."},"request_id":"req_011CZLrUfBVkVHn5T6EqQaf7"}`
)

// Stream events. The error event is the one of
// https://github.com/envoyproxy/ai-gateway/issues/2697 (an overload inside
// a 200 stream); the others follow the Messages streaming format.
const (
	sseMessageStart = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n"
	ssePing       = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	sseBlockStart = "event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n"
	sseDelta = "event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}` + "\n\n"
	sseOverloaded = "event: error\n" +
		`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n"
)

// jsonError answers with status, the headers and a JSON body.
func jsonError(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_011CVjxiYzEFcAQC4Fk87zw2")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// sse answers 200 with a text/event-stream of the given events.
func sse(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			fmt.Fprint(w, e)
			w.(http.Flusher).Flush()
		}
	}
}

// hangUp takes the connection over and closes it without answering. The
// request body is read first: closing a socket with unread data sends a
// reset instead of an end of stream.
func hangUp(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// cutStream starts a 200 chunked event stream, sends events, then closes the
// connection without the terminating chunk.
func cutStream(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		writeRawStream(buf, events)
	}
}

func writeRawStream(buf *bufio.ReadWriter, events []string) {
	fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	for _, e := range events {
		fmt.Fprintf(buf, "%x\r\n%s\r\n", len(e), e)
	}
	buf.Flush()
}

// hold answers nothing until the client goes away. The body is read first:
// the server notices a closed connection only once the body is consumed.
func hold(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func newClient(t *testing.T, h http.Handler) ant.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return ant.NewClient(
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("sk-ant-test-not-a-key"),
		option.WithMaxRetries(0),
	)
}

var params = ant.MessageNewParams{
	Model:     "claude-sonnet-4-5",
	MaxTokens: 1024,
	Messages:  []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("hello"))},
}

// A call makes one request with the real SDK client and returns the error
// the SDK surfaced.
type call func(ctx context.Context, c ant.Client) error

func newCall(ctx context.Context, c ant.Client) error {
	_, err := c.Messages.New(ctx, params)
	return err
}

func streamCall(ctx context.Context, c ant.Client) error {
	s := c.Messages.NewStreaming(ctx, params)
	defer s.Close()
	for s.Next() {
	}
	return s.Err()
}

func TestClassifyEndToEnd(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		call    call
		timeout time.Duration // a deadline for the call
		cancel  time.Duration // cancel the call after this long
		want    erradvisor.Classification
		// What the Failure must carry besides Provider and Err.
		wantStatus int
		wantCode   string
		wantHeader string // a header the Failure must hold
	}{
		{
			name:       "529 overloaded_error with x-should-retry",
			handler:    jsonError(529, bodyOverloaded, "X-Should-Retry", "true"),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded"},
			wantStatus: 529, wantCode: "overloaded_error", wantHeader: "X-Should-Retry",
		},
		{
			name: "429 rate_limit_error with retry-after and ratelimit headers",
			handler: jsonError(429, bodyRateLimit, "Retry-After", "7", "X-Should-Retry", "true",
				"Anthropic-Ratelimit-Input-Tokens-Limit", "20000", "Anthropic-Ratelimit-Input-Tokens-Remaining", "0",
				"Anthropic-Ratelimit-Input-Tokens-Reset", "2026-11-29T23:59:00Z"),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 7 * time.Second},
			wantStatus: 429, wantCode: "rate_limit_error", wantHeader: "Retry-After",
		},
		{
			name:       "400 prompt is too long",
			handler:    jsonError(400, bodyPromptTooLong, "X-Should-Retry", "false"),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow, Rule: "overflow.stated"},
			wantStatus: 400, wantCode: "invalid_request_error",
		},
		{
			name:       "413 request_too_large",
			handler:    jsonError(413, bodyRequestTooLarge),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow, Rule: "overflow.request_too_large"},
			wantStatus: 413, wantCode: "request_too_large",
		},
		{
			name:       "400 credit balance is too low",
			handler:    jsonError(400, bodyCreditTooLow, "X-Should-Retry", "false"),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Billing, Reason: erradvisor.ReasonCredits, Rule: "billing.credits"},
			wantStatus: 400, wantCode: "invalid_request_error",
		},
		{
			// The core does not read "regain access on <date>" as a reset
			// time, so ResetAt stays zero.
			name:       "400 spend limit",
			handler:    jsonError(400, bodySpendLimit),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Quota, Reason: erradvisor.ReasonBudget, Rule: "quota.budget"},
			wantStatus: 400, wantCode: "invalid_request_error",
		},
		{
			name:       "401 invalid x-api-key",
			handler:    jsonError(401, bodyInvalidKey),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonAuth, Rule: "auth.invalid_credentials"},
			wantStatus: 401, wantCode: "authentication_error",
		},
		{
			name:       "403 permission_error",
			handler:    jsonError(403, bodyPermission),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonPermission, Rule: "permission.denied"},
			wantStatus: 403, wantCode: "permission_error",
		},
		{
			name:       "404 model not found",
			handler:    jsonError(404, bodyModelNotFound),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonModelNotFound, Rule: "anthropic.not_found"},
			wantStatus: 404, wantCode: "not_found_error",
		},
		{
			name:       "500 api_error",
			handler:    jsonError(500, bodyServerError, "X-Should-Retry", "true"),
			call:       newCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonServer, Rule: "anthropic.api_error"},
			wantStatus: 500, wantCode: "api_error",
		},
		{
			name:       "529 on a streaming call",
			handler:    jsonError(529, bodyOverloaded, "X-Should-Retry", "true"),
			call:       streamCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded"},
			wantStatus: 529, wantCode: "overloaded_error", wantHeader: "X-Should-Retry",
		},
		{
			name:     "error event inside a 200 stream",
			handler:  sse(sseMessageStart, ssePing, sseBlockStart, sseDelta, sseOverloaded),
			call:     streamCall,
			want:     erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded"},
			wantCode: "overloaded_error",
		},
		{
			name:    "connection closed by the server before a response",
			handler: hangUp,
			call:    newCall,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonStream, Rule: "go.eof"},
		},
		{
			name:    "connection cut mid-stream",
			handler: cutStream(sseMessageStart, sseBlockStart, sseDelta),
			call:    streamCall,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonStream, Rule: "go.unexpected_eof"},
		},
		{
			name:    "context canceled by the caller",
			handler: hold,
			call:    streamCall,
			cancel:  50 * time.Millisecond,
			want:    erradvisor.Classification{Class: erradvisor.Canceled, Reason: erradvisor.ReasonAborted, Rule: "go.context_canceled"},
		},
		{
			name:    "deadline exceeded",
			handler: hold,
			call:    newCall,
			timeout: 50 * time.Millisecond,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonTimeout, Rule: "go.deadline_exceeded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := newClient(t, tt.handler)
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				time.AfterFunc(tt.cancel, cancel)
			}
			err := tt.call(ctx, client)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			f := adapter.Failure(err)
			if f.Err != err {
				t.Errorf("Failure.Err = %v, want the SDK's error %v", f.Err, err)
			}
			if f.Provider != "anthropic" {
				t.Errorf("Provider = %q, want anthropic", f.Provider)
			}
			if f.Message == "" {
				t.Error("Message is empty")
			}
			gotFields := [2]any{f.Status, f.Code}
			if diff := cmp.Diff([2]any{tt.wantStatus, tt.wantCode}, gotFields); diff != "" {
				t.Errorf("Failure status and code mismatch (-want +got):\n%s", diff)
			}
			if tt.wantHeader != "" && f.Header.Get(tt.wantHeader) == "" {
				t.Errorf("Failure.Header lacks %s: %v", tt.wantHeader, f.Header)
			}
			if tt.wantStatus == 0 && (f.Header != nil || !f.At.IsZero()) {
				// An error event inside a 200 stream: the stream's headers
				// and Date describe its start, not the failure.
				t.Errorf("a failure without a status carries Header %v and At %v", f.Header, f.At)
			}
			if diff := cmp.Diff(tt.want, erradvisor.Classify(f), ignoreEvidence); diff != "" {
				t.Errorf("classification mismatch (-want +got):\n%s\nfailure: %+v", diff, f)
			}
			if diff := cmp.Diff(tt.want, adapter.Classify(err), ignoreEvidence); diff != "" {
				t.Errorf("Classify(err) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailureMessageIsRawBody checks that Message is the body as the server
// sent it.
func TestFailureMessageIsRawBody(t *testing.T) {
	client := newClient(t, jsonError(400, bodyPromptTooLong))
	_, err := client.Messages.New(t.Context(), params)
	var apiErr *ant.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an *anthropic.Error", err)
	}
	if diff := cmp.Diff(bodyPromptTooLong, adapter.Failure(err).Message); diff != "" {
		t.Errorf("Message mismatch (-want +got):\n%s", diff)
	}
}

// TestStreamErrorKeepsNoStatus checks that an error event in a 200 stream
// gives Status 0 and the event's data as Message.
func TestStreamErrorKeepsNoStatus(t *testing.T) {
	client := newClient(t, sse(sseMessageStart, sseOverloaded))
	err := streamCall(t.Context(), client)
	f := adapter.Failure(err)
	want := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	if f.Status != 0 || f.Message != want {
		t.Errorf("Failure = status %d, message %q; want status 0, message %q", f.Status, f.Message, want)
	}
}

// TestFailureWrapped checks that an SDK error wrapped by the host is still
// found, with the wrapping kept in Err.
func TestFailureWrapped(t *testing.T) {
	client := newClient(t, jsonError(401, bodyInvalidKey))
	_, err := client.Messages.New(t.Context(), params)
	wrapped := fmt.Errorf("turn 3: %w", err)
	f := adapter.Failure(wrapped)
	if f.Status != 401 || f.Code != "authentication_error" || f.Err != wrapped || !strings.Contains(f.Message, "invalid x-api-key") {
		t.Errorf("Failure(wrapped) = %+v", f)
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

// ignoreEvidence leaves the classifier's evidence strength out of the
// comparisons: this adapter's tests are about what reaches the classifier.
var ignoreEvidence = cmpopts.IgnoreFields(erradvisor.Classification{}, "Evidence")

package openai_test

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

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/openai"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Real OpenAI error bodies. Each message text is copied from the source
// named beside it (most are fixtures of the core module,
// testdata/fixtures/openai.yaml); the JSON envelope is the one the API
// sends: {"error":{"message","type","param","code"}}.
const (
	// https://github.com/BuilderIO/micro-agent/issues/86 (type "tokens" and
	// code "rate_limit_exceeded" as in https://github.com/TheR1D/shell_gpt/issues/653)
	bodyRateLimit = `{
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "type": "tokens",
        "param": null,
        "code": "rate_limit_exceeded"
    }
}`
	// https://github.com/Chanzhaoyu/chatgpt-web/issues/1858
	bodyInsufficientQuota = `{
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": null,
        "code": "insufficient_quota"
    }
}`
	// https://github.com/bytedance/deer-flow/issues/310
	bodyContextLength = `{
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 202868 tokens (202767 in the messages, 101 in the functions). Please reduce the length of the messages or functions.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded"
    }
}`
	// https://github.com/chatanywhere/GPT_API_free/issues/62
	bodyInvalidKey = `{"error":{"message":"Incorrect API key provided: sk-VKMIs***************************************wjh3. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	// https://github.com/rd-1-2022/ai-openai-helloworld/issues/9
	bodyModelNotFound = `{
    "error": {
        "message": "The model ` + "`gpt-4o`" + ` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "param": null,
        "code": "model_not_found"
    }
}`
	// https://github.com/openai/openai-cua-sample-app/issues/54
	bodyServerError = `{
  "error": {
    "message": "The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error. (Please include the request ID req_540c6eaab7f4556b2baa22bcba915d51 in your email.)",
    "type": "server_error",
    "param": null,
    "code": null
  }
}`
	// https://github.com/ikechan8370/chatgpt-plugin/issues/125
	bodyOverloaded = `{
  "error": {
    "message": "That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID 500d9fff2057e4af93a280f67002c342 in your message.)",
    "type": "server_error",
    "param": null,
    "code": null
  }
}`
)

// https://github.com/openai/codex/issues/9110 (core fixture
// local-gateway-cloudflare-502-codex): a gateway page, not JSON.
const bodyCloudflare502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"

// Stream events. The Chat Completions stream carries an error as a data
// line holding an "error" object; the Responses stream as an "error" event
// or a "response.failed" event (shapes of responses.ResponseErrorEvent and
// responses.ResponseFailedEvent; the failed-response text and code are those
// of https://github.com/openai/codex/issues/2921, which codex-rs's own tests
// send as a response.failed event).
const (
	sseChatChunk = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}` + "\n\n"
	sseChatError = `data: {"error":{"message":"The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error. (Please include the request ID req_540c6eaab7f4556b2baa22bcba915d51 in your email.)","type":"server_error","param":null,"code":null}}` + "\n\n"

	sseRespCreated = "event: response.created\n" +
		`data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"gpt-4o","output":[]}}` + "\n\n"
	sseRespDelta = "event: response.output_text.delta\n" +
		`data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}` + "\n\n"
	sseRespErrorFlat = "event: error\n" +
		`data: {"type":"error","sequence_number":2,"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms.","param":null}` + "\n\n"
	sseRespErrorNested = "event: error\n" +
		`data: {"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}` + "\n\n"
	sseRespFailed = "event: response.failed\n" +
		`data: {"type":"response.failed","sequence_number":2,"response":{"id":"resp_1","object":"response","created_at":1,"status":"failed","model":"gpt-4o","output":[],"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again."}}}` + "\n\n"
)

// jsonError answers with status, the headers and a JSON body.
func jsonError(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_540c6eaab7f4556b2baa22bcba915d51")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// htmlError answers with status and an HTML page.
func htmlError(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
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

func newClient(t *testing.T, h http.Handler) oai.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return oai.NewClient(
		option.WithBaseURL(srv.URL+"/v1/"),
		option.WithAPIKey("sk-test-not-a-key"),
		option.WithMaxRetries(0),
	)
}

var chatParams = oai.ChatCompletionNewParams{
	Model:    "gpt-4o",
	Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hello")},
}

var respParams = responses.ResponseNewParams{
	Model: "gpt-4o",
	Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hello")},
}

// A call makes one request with the real SDK client and returns the
// error the SDK surfaced, or the failure found in the stream's events.
type call func(ctx context.Context, c oai.Client) (*erradvisor.Failure, error)

func chatCall(ctx context.Context, c oai.Client) (*erradvisor.Failure, error) {
	_, err := c.Chat.Completions.New(ctx, chatParams)
	return nil, err
}

func chatStreamCall(ctx context.Context, c oai.Client) (*erradvisor.Failure, error) {
	s := c.Chat.Completions.NewStreaming(ctx, chatParams)
	defer s.Close()
	for s.Next() {
	}
	return nil, s.Err()
}

func responsesStreamCall(ctx context.Context, c oai.Client) (*erradvisor.Failure, error) {
	s := c.Responses.NewStreaming(ctx, respParams)
	defer s.Close()
	for s.Next() {
		if f, ok := adapter.EventFailure(s.Current()); ok {
			return &f, nil
		}
	}
	return nil, s.Err()
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
			name:    "429 rate limit with retry-after-ms",
			handler: jsonError(429, bodyRateLimit, "Retry-After-Ms", "644", "X-Ratelimit-Remaining-Tokens", "63", "X-Ratelimit-Reset-Tokens", "644ms"),
			call:    chatCall,
			want: erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit,
				Rule: "transient.rate_limit", RetryAfter: 644 * time.Millisecond},
			wantStatus: 429, wantCode: "rate_limit_exceeded", wantHeader: "Retry-After-Ms",
		},
		{
			name:       "429 insufficient_quota",
			handler:    jsonError(429, bodyInsufficientQuota),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Quota, Reason: erradvisor.ReasonQuota, Rule: "quota.exhausted"},
			wantStatus: 429, wantCode: "insufficient_quota",
		},
		{
			name:       "400 context_length_exceeded",
			handler:    jsonError(400, bodyContextLength),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow, Rule: "overflow.stated"},
			wantStatus: 400, wantCode: "context_length_exceeded",
		},
		{
			name:       "401 invalid api key",
			handler:    jsonError(401, bodyInvalidKey),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonAuth, Rule: "auth.invalid_credentials"},
			wantStatus: 401, wantCode: "invalid_api_key",
		},
		{
			name:       "404 model not found",
			handler:    jsonError(404, bodyModelNotFound),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonModelNotFound, Rule: "model.not_found"},
			wantStatus: 404, wantCode: "model_not_found",
		},
		{
			name:       "500 server error",
			handler:    jsonError(500, bodyServerError),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonServer, Rule: "transient.server"},
			wantStatus: 500, wantCode: "server_error",
		},
		{
			name:       "502 gateway HTML page",
			handler:    htmlError(502, bodyCloudflare502),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonServer, Rule: "transient.server"},
			wantStatus: 502,
		},
		{
			name:       "503 model overloaded with retry-after",
			handler:    jsonError(503, bodyOverloaded, "Retry-After", "2"),
			call:       chatCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded", RetryAfter: 2 * time.Second},
			wantStatus: 503, wantCode: "server_error", wantHeader: "Retry-After",
		},
		{
			name:       "429 on a streaming call",
			handler:    jsonError(429, bodyRateLimit, "Retry-After-Ms", "644"),
			call:       responsesStreamCall,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 644 * time.Millisecond},
			wantStatus: 429, wantCode: "rate_limit_exceeded", wantHeader: "Retry-After-Ms",
		},
		{
			name:     "chat stream: error object mid-stream in a 200",
			handler:  sse(sseChatChunk, sseChatError),
			call:     chatStreamCall,
			want:     erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonServer, Rule: "transient.server"},
			wantCode: "server_error",
		},
		{
			name:     "responses stream: error event",
			handler:  sse(sseRespCreated, sseRespDelta, sseRespErrorFlat),
			call:     responsesStreamCall,
			want:     erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 644 * time.Millisecond},
			wantCode: "rate_limit_exceeded",
		},
		{
			name:     "responses stream: error event with an error object",
			handler:  sse(sseRespCreated, sseRespErrorNested),
			call:     responsesStreamCall,
			want:     erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow, Rule: "overflow.stated"},
			wantCode: "context_length_exceeded",
		},
		{
			name:     "responses stream: response.failed",
			handler:  sse(sseRespCreated, sseRespFailed),
			call:     responsesStreamCall,
			want:     erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow, Rule: "overflow.stated"},
			wantCode: "context_length_exceeded",
		},
		{
			name:    "connection closed by the server before a response",
			handler: hangUp,
			call:    chatCall,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonStream, Rule: "go.eof"},
		},
		{
			name:    "connection cut mid-stream",
			handler: cutStream(sseRespCreated, sseRespDelta),
			call:    responsesStreamCall,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonStream, Rule: "go.unexpected_eof"},
		},
		{
			name:    "context canceled by the caller",
			handler: hold,
			call:    chatCall,
			cancel:  50 * time.Millisecond,
			want:    erradvisor.Classification{Class: erradvisor.Canceled, Reason: erradvisor.ReasonAborted, Rule: "go.context_canceled"},
		},
		{
			name:    "deadline exceeded",
			handler: hold,
			call:    chatStreamCall,
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
			ev, err := tt.call(ctx, client)

			var f erradvisor.Failure
			switch {
			case ev != nil:
				f = *ev
				if err != nil {
					t.Fatalf("stream reported an event failure and an error %v", err)
				}
			case err != nil:
				f = adapter.Failure(err)
				if f.Err != err {
					t.Errorf("Failure.Err = %v, want the SDK's error %v", f.Err, err)
				}
				if got := adapter.Classify(err); !cmp.Equal(got, tt.want, ignoreEvidence) {
					t.Errorf("Classify(err) mismatch (-want +got):\n%s", cmp.Diff(tt.want, got, ignoreEvidence))
				}
			default:
				t.Fatal("the call succeeded")
			}

			if f.Provider != "openai" {
				t.Errorf("Provider = %q, want openai", f.Provider)
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
			if diff := cmp.Diff(tt.want, erradvisor.Classify(f), ignoreEvidence); diff != "" {
				t.Errorf("classification mismatch (-want +got):\n%s\nfailure: %+v", diff, f)
			}
		})
	}
}

// TestFailureMessageIsRawBody checks that Message is the body as the server
// sent it and that the SDK error's response stays readable afterwards.
func TestFailureMessageIsRawBody(t *testing.T) {
	client := newClient(t, jsonError(400, bodyContextLength))
	_, err := client.Chat.Completions.New(t.Context(), chatParams)
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an *openai.Error", err)
	}
	for range 2 {
		if diff := cmp.Diff(bodyContextLength, adapter.Failure(err).Message); diff != "" {
			t.Fatalf("Message mismatch (-want +got):\n%s", diff)
		}
	}
	if dump := string(apiErr.DumpResponse(true)); !strings.Contains(dump, "context_length_exceeded") {
		t.Errorf("DumpResponse after Failure lost the body:\n%s", dump)
	}
}

// TestFailureWrapped checks that an SDK error wrapped by the host is still
// found, with the wrapping kept in Err.
func TestFailureWrapped(t *testing.T) {
	client := newClient(t, jsonError(401, bodyInvalidKey))
	_, err := client.Chat.Completions.New(t.Context(), chatParams)
	wrapped := fmt.Errorf("turn 3: %w", err)
	f := adapter.Failure(wrapped)
	if f.Status != 401 || f.Code != "invalid_api_key" || f.Err != wrapped {
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

// TestEventFailureIgnoresOrdinaryEvents checks that only failure events
// report true.
func TestEventFailureIgnoresOrdinaryEvents(t *testing.T) {
	client := newClient(t, sse(sseRespCreated, sseRespDelta,
		"event: response.incomplete\n"+`data: {"type":"response.incomplete","sequence_number":2,"response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`+"\n\n"))
	s := client.Responses.NewStreaming(t.Context(), respParams)
	defer s.Close()
	n := 0
	for s.Next() {
		n++
		if f, ok := adapter.EventFailure(s.Current()); ok {
			t.Errorf("EventFailure(%s) = %+v, true", s.Current().Type, f)
		}
	}
	if err := s.Err(); err != nil || n != 3 {
		t.Errorf("stream: %d events, err %v; want 3 events, no error", n, err)
	}
}

// ignoreEvidence leaves the classifier's evidence strength out of the
// comparisons: this adapter's tests are about what reaches the classifier.
var ignoreEvidence = cmpopts.IgnoreFields(erradvisor.Classification{}, "Evidence")

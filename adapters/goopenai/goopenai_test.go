package goopenai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/goopenai"
	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// Real error bodies. Each message text is copied from the source named
// beside it; the OpenAI envelope {"error":{"message","type","param","code"}}
// is the one the API sends.
const (
	// https://github.com/BuilderIO/micro-agent/issues/86 (type "tokens" and
	// code "rate_limit_exceeded" as in https://github.com/TheR1D/shell_gpt/issues/653)
	bodyRateLimit = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	// https://github.com/Chanzhaoyu/chatgpt-web/issues/1858
	bodyInsufficientQuota = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	// https://github.com/bytedance/deer-flow/issues/310
	bodyContextLength = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 202868 tokens (202767 in the messages, 101 in the functions). Please reduce the length of the messages or functions.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	// https://github.com/chatanywhere/GPT_API_free/issues/62
	bodyInvalidKey = `{"error":{"message":"Incorrect API key provided: sk-VKMIs***************************************wjh3. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	// https://github.com/openai/openai-cua-sample-app/issues/54
	bodyServerError = `{"error":{"message":"The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error. (Please include the request ID req_540c6eaab7f4556b2baa22bcba915d51 in your email.)","type":"server_error","param":null,"code":null}}`
	// Text: https://github.com/continuedev/continue/issues/11154; OpenRouter's
	// envelope with a numeric code: https://openrouter.ai/docs/api-reference/errors
	bodyOpenRouterCredits = `{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 4096 tokens, but can only afford 222. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account","code":402}}`
	// https://github.com/openai/codex/issues/9110: a gateway page, not JSON.
	bodyCloudflare502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"
)

// Stream lines. A Chat Completions stream carries an error as a data line
// holding an "error" object (the text of bodyServerError); OpenRouter keeps
// a slow stream open with SSE comment lines
// (https://openrouter.ai/docs/api-reference/streaming), which go-openai
// counts as empty messages.
const (
	sseChunk      = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}` + "\n\n"
	sseError      = "data: " + bodyServerError + "\n\n"
	sseProcessing = ": OPENROUTER PROCESSING\n\n"
)

func jsonError(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func htmlError(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

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

// hangUp closes the connection without answering, after reading the
// request body (closing with unread data sends a reset instead).
func hangUp(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// hold answers nothing until the client goes away.
func hold(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func newClient(url string) *openai.Client {
	cfg := openai.DefaultConfig("sk-test-not-a-key")
	cfg.BaseURL = url + "/v1"
	cfg.EmptyMessagesLimit = 3
	return openai.NewClientWithConfig(cfg)
}

// refusedURL returns the address of a port nothing listens on.
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

var chatReq = openai.ChatCompletionRequest{
	Model:    "gpt-4o",
	Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello"}},
}

func chatCall(ctx context.Context, c *openai.Client) error {
	_, err := c.CreateChatCompletion(ctx, chatReq)
	return err
}

func streamCall(ctx context.Context, c *openai.Client) error {
	s, err := c.CreateChatCompletionStream(ctx, chatReq)
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// got is what a test compares: the Failure's fields besides Err and the
// verdict.
type got struct {
	Provider string
	Status   int
	Code     string
	Message  string // only when the test names one
	Class    erradvisor.Class
	Reason   erradvisor.Reason
}

func TestFailureEndToEnd(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc // nil: nothing listens
		provider string           // FailureFor's provider; "" calls Failure
		stream   bool
		timeout  time.Duration
		cancel   time.Duration
		want     got
		wantMsg  bool // compare Message too
	}{
		{
			name:    "429 rate limit",
			handler: jsonError(429, bodyRateLimit, "Retry-After-Ms", "644"),
			want:    got{Provider: "openai", Status: 429, Code: "rate_limit_exceeded", Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit},
		},
		{
			name:    "429 insufficient_quota",
			handler: jsonError(429, bodyInsufficientQuota),
			want:    got{Provider: "openai", Status: 429, Code: "insufficient_quota", Class: erradvisor.Quota, Reason: erradvisor.ReasonQuota},
		},
		{
			name:    "400 context_length_exceeded, message written back as the API sent it",
			handler: jsonError(400, bodyContextLength),
			want: got{Provider: "openai", Status: 400, Code: "context_length_exceeded", Message: bodyContextLength,
				Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow},
			wantMsg: true,
		},
		{
			name:    "401 invalid api key",
			handler: jsonError(401, bodyInvalidKey),
			want:    got{Provider: "openai", Status: 401, Code: "invalid_api_key", Class: erradvisor.Permanent, Reason: erradvisor.ReasonAuth},
		},
		{
			name:    "500 server error with a null code",
			handler: jsonError(500, bodyServerError),
			want:    got{Provider: "openai", Status: 500, Code: "server_error", Class: erradvisor.Transient, Reason: erradvisor.ReasonServer},
		},
		{
			name:    "502 gateway HTML page: RequestError with the raw body",
			handler: htmlError(502, bodyCloudflare502),
			want: got{Provider: "openai", Status: 502, Message: strings.TrimSpace(bodyCloudflare502),
				Class: erradvisor.Transient, Reason: erradvisor.ReasonServer},
			wantMsg: true,
		},
		{
			name:     "OpenRouter 402 with a numeric code",
			handler:  jsonError(402, bodyOpenRouterCredits),
			provider: "openrouter",
			want:     got{Provider: "openrouter", Status: 402, Code: "402", Class: erradvisor.Billing, Reason: erradvisor.ReasonCredits},
		},
		{
			name:    "429 on a streaming call",
			handler: jsonError(429, bodyInsufficientQuota),
			stream:  true,
			want:    got{Provider: "openai", Status: 429, Code: "insufficient_quota", Class: erradvisor.Quota, Reason: erradvisor.ReasonQuota},
		},
		{
			name:    "stream: error object mid-stream in a 200",
			handler: sse(sseChunk, sseError),
			stream:  true,
			want: got{Provider: "openai", Code: "server_error", Message: bodyServerError,
				Class: erradvisor.Transient, Reason: erradvisor.ReasonServer},
			wantMsg: true,
		},
		{
			name:    "stream: too many empty messages",
			handler: sse(sseChunk, sseProcessing, sseProcessing, sseProcessing),
			stream:  true,
			want: got{Provider: "openai", Message: "stream error: stream has sent too many empty messages",
				Class: erradvisor.Transient, Reason: erradvisor.ReasonStream},
			wantMsg: true,
		},
		{
			name: "connection refused: no server running",
			want: got{Provider: "openai", Class: erradvisor.Transient, Reason: erradvisor.ReasonNetwork},
		},
		{
			name:    "connection closed before a response",
			handler: hangUp,
			want:    got{Provider: "openai", Class: erradvisor.Transient, Reason: erradvisor.ReasonStream},
		},
		{
			name:    "context canceled by the caller",
			handler: hold,
			cancel:  50 * time.Millisecond,
			want:    got{Provider: "openai", Class: erradvisor.Canceled, Reason: erradvisor.ReasonAborted},
		},
		{
			name:    "deadline exceeded on a stream",
			handler: hold,
			stream:  true,
			timeout: 50 * time.Millisecond,
			want:    got{Provider: "openai", Class: erradvisor.Transient, Reason: erradvisor.ReasonTimeout},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := refusedURL(t)
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				t.Cleanup(srv.Close)
				url = srv.URL
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
			call := chatCall
			if tt.stream {
				call = streamCall
			}
			err := call(ctx, newClient(url))
			if err == nil {
				t.Fatal("the call succeeded")
			}
			f := adapter.Failure(err)
			if tt.provider != "" {
				f = adapter.FailureFor(tt.provider, err)
			}
			if f.Err != err {
				t.Errorf("Failure.Err = %v, want the client's error %v", f.Err, err)
			}
			if f.Message == "" {
				t.Error("Message is empty")
			}
			if f.Header != nil || !f.At.IsZero() {
				t.Errorf("Header %v, At %v: want none, the client keeps no response", f.Header, f.At)
			}
			c := erradvisor.Classify(f)
			g := got{Provider: f.Provider, Status: f.Status, Code: f.Code, Class: c.Class, Reason: c.Reason}
			if tt.wantMsg {
				g.Message = f.Message
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\nfailure: %+v", diff, f)
			}
		})
	}
}

// TestFailureBuiltErrors covers error values the client builds that the
// server cannot provoke on purpose: a RequestError wrapping an APIError, a
// code of another JSON type, a wrapped error.
func TestFailureBuiltErrors(t *testing.T) {
	param := "messages"
	azure := &openai.APIError{Code: "content_filter", Message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
		Param: &param, Type: "", HTTPStatusCode: 400,
		InnerError: &openai.InnerError{Code: "ResponsibleAIPolicyViolation"}}
	tests := []struct {
		name string
		err  error
		want erradvisor.Failure
	}{
		{
			name: "RequestError wrapping an APIError keeps the raw body and takes the code",
			err: &openai.RequestError{HTTPStatusCode: 400, Body: []byte(" " + bodyContextLength + "\n"),
				Err: &openai.APIError{Code: "context_length_exceeded", Type: "invalid_request_error"}},
			want: erradvisor.Failure{Provider: "openai", Status: 400, Code: "context_length_exceeded", Message: bodyContextLength},
		},
		{
			name: "RequestError with an empty body",
			err:  &openai.RequestError{HTTPStatus: "503 Service Unavailable", HTTPStatusCode: 503},
			want: erradvisor.Failure{Provider: "openai", Status: 503,
				Message: "error, status code: 503, status: 503 Service Unavailable, message: %!s(<nil>), body: "},
		},
		{
			name: "Azure content filter with innererror",
			err:  fmt.Errorf("turn 2: %w", azure),
			want: erradvisor.Failure{Provider: "openai", Status: 400, Code: "content_filter",
				Message: `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":"","param":"messages","code":"content_filter","innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false},"self_harm":{"filtered":false},"sexual":{"filtered":false},"violence":{"filtered":false},"jailbreak":{"filtered":false,"detected":false},"profanity":{"filtered":false,"detected":false}}}}}`},
		},
		{
			name: "float code",
			err:  &openai.APIError{Code: float64(429), Type: "rate_limit", Message: "slow down"},
			want: erradvisor.Failure{Provider: "openai", Code: "429", Message: `{"error":{"message":"slow down","type":"rate_limit","param":null,"code":429}}`},
		},
		{
			name: "code of an odd type falls back to the type",
			err:  &openai.APIError{Code: []any{"x"}, Type: "server_error", Message: "m"},
			want: erradvisor.Failure{Provider: "openai", Code: "server_error", Message: `{"error":{"message":"m","type":"server_error","param":null,"code":["x"]}}`},
		},
		{
			name: "a plain Go error",
			err:  context.Canceled,
			want: erradvisor.Failure{Provider: "openai", Message: "context canceled"},
		},
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
	if diff := cmp.Diff(erradvisor.Failure{}, adapter.FailureFor("groq", nil)); diff != "" {
		t.Errorf("FailureFor(nil) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(erradvisor.Classification{}, adapter.Classify(nil)); diff != "" {
		t.Errorf("Classify(nil) mismatch (-want +got):\n%s", diff)
	}
}

func TestClassify(t *testing.T) {
	c := adapter.Classify(&openai.APIError{Code: "insufficient_quota", Type: "insufficient_quota",
		Message: "You exceeded your current quota, please check your plan and billing details.", HTTPStatusCode: 429})
	if c.Class != erradvisor.Quota {
		t.Errorf("Classify = %+v, want quota", c)
	}
}

// TestStopReason covers every finish reason go-openai declares, and others.
func TestStopReason(t *testing.T) {
	tests := []struct {
		reason openai.FinishReason
		want   erradvisor.StopReason
	}{
		{openai.FinishReasonStop, erradvisor.StopEndTurn},
		{openai.FinishReasonLength, erradvisor.StopLength},
		{openai.FinishReasonFunctionCall, erradvisor.StopToolUse},
		{openai.FinishReasonToolCalls, erradvisor.StopToolUse},
		{openai.FinishReasonContentFilter, erradvisor.StopRefused},
		{openai.FinishReasonNull, erradvisor.StopUnknown},
		{"", erradvisor.StopUnknown},
		{"STOP", erradvisor.StopUnknown},
		{"end_turn", erradvisor.StopUnknown},
		{"eos", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		if got := adapter.StopReason(tt.reason); got != tt.want {
			t.Errorf("StopReason(%q) = %v, want %v", tt.reason, got, tt.want)
		}
	}
}

// TestStopReasonFromResponse reads the finish reason of a real 200 answer
// through the client, for each reason that is not a plain stop.
func TestStopReasonFromResponse(t *testing.T) {
	tests := []struct {
		reason string // as sent; "" sends null
		want   erradvisor.StopReason
	}{
		{"length", erradvisor.StopLength},
		{"tool_calls", erradvisor.StopToolUse},
		{"function_call", erradvisor.StopToolUse},
		{"content_filter", erradvisor.StopRefused},
		{"", erradvisor.StopUnknown},
		// vLLM and other servers send reasons OpenAI does not declare.
		{"abort", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			reason := "null"
			if tt.reason != "" {
				reason = `"` + tt.reason + `"`
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":%s}]}`, reason)
			}))
			defer srv.Close()
			resp, err := newClient(srv.URL).CreateChatCompletion(context.Background(), chatReq)
			if err != nil {
				t.Fatal(err)
			}
			if got := adapter.StopReason(resp.Choices[0].FinishReason); got != tt.want {
				t.Errorf("StopReason(%q) = %v, want %v", resp.Choices[0].FinishReason, got, tt.want)
			}
		})
	}
}

// FuzzFailure feeds outside text through every field Failure reads.
func FuzzFailure(f *testing.F) {
	f.Add(502, []byte(bodyCloudflare502), "rate_limit_exceeded", "tokens", "msg", int64(0))
	f.Add(0, []byte(nil), "", "", "", int64(402))
	f.Fuzz(func(t *testing.T, status int, body []byte, code, typ, msg string, num int64) {
		var c any = code
		if num != 0 {
			c = float64(num)
		}
		for _, err := range []error{
			&openai.RequestError{HTTPStatusCode: status, Body: body},
			&openai.APIError{HTTPStatusCode: status, Code: c, Type: typ, Message: msg, Param: &msg},
			&openai.RequestError{HTTPStatusCode: status, Body: body, Err: &openai.APIError{Code: c, Type: typ, Message: msg}},
		} {
			f := adapter.FailureFor(code, err)
			if f.Err != err || f.Provider != code || f.Message == "" {
				t.Fatalf("FailureFor(%v) = %+v", err, f)
			}
			if len(f.Message) > 64<<10+len(msg)*6+1024 {
				t.Fatalf("Message of %d bytes", len(f.Message))
			}
		}
	})
}

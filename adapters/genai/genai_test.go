package genai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/genai"
	"github.com/erradvisor/erradvisor/httprec"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"
)

// Real Gemini API error bodies. Each body is the one quoted at the URL beside
// it (unwrapped from the quoting tool's own envelope where it had one); the
// shape is the API's: {"error":{"code","message","status","details"}}.
const (
	// https://github.com/RooCodeInc/Roo-Code/issues/3883
	bodyPerMinuteQuota = `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count",
            "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier",
            "quotaDimensions": {
              "location": "global",
              "model": "gemini-2.5-flash"
            },
            "quotaValue": "250000"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [
          {
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "26s"
      }
    ]
  }
}
`
	// https://github.com/googleapis/python-genai/issues/2065
	bodyResourceExhausted = `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}`
	// https://github.com/google-gemini/gemini-cli/issues/4231
	bodyTokenCountExceeds = `{
  "error": {
    "code": 400,
    "message": "The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).",
    "status": "INVALID_ARGUMENT"
  }
}
`
	// https://github.com/zeroclaw-labs/zeroclaw/issues/194
	bodyAPIKeyInvalid = `{
  "error": {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {
          "service": "generativelanguage.googleapis.com"
        }
      },
      {
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": "API key not valid. Please pass a valid API key."
      }
    ]
  }
}
`
	// https://github.com/google-gemini/gemini-cli/issues/25607
	bodyPermissionDenied = `{
  "error": {
    "code": 403,
    "message": "The caller does not have permission",
    "errors": [
      {
        "message": "The caller does not have permission",
        "domain": "global",
        "reason": "forbidden"
      }
    ],
    "status": "PERMISSION_DENIED"
  }
}
`
	// https://github.com/wwardaww/gnome-gemini-ai/issues/22
	bodyModelNotFound = `{
  "error": {
    "code": 404,
    "message": "models/gemini-pro is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.",
    "status": "NOT_FOUND"
  }
}
`
	// https://genuineartificialintelligence.com/2025/08/06/empty-response-by-gemini-llms-are-considered-500-internal-error
	bodyInternal = `{
  "error": {
    "code": 500,
    "message": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    "status": "INTERNAL"
  }
}
`
	// https://github.com/google-gemini/gemini-cli/issues/4360
	bodyOverloaded = `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
)

// A successful response whose candidate was cut by the safety filter, as
// posted at https://github.com/CherryHQ/cherry-studio/issues/664 (the post
// is cut inside usageMetadata; totalTokenCount is the sum of the two counts).
const respSafety = `{
  "candidates": [
    {
      "finishReason": "SAFETY",
      "safetyRatings": [
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
        {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "HIGH", "blocked": true}
      ]
    }
  ],
  "usageMetadata": {"promptTokenCount": 752, "candidatesTokenCount": 16, "totalTokenCount": 768}
}`

// A prompt blocked before any candidate: the prompt feedback of
// https://github.com/google-gemini/deprecated-generative-ai-python/issues/126,
// written in the REST API's JSON.
const respPromptBlocked = `{
  "promptFeedback": {
    "blockReason": "SAFETY",
    "safetyRatings": [
      {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
      {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"},
      {"category": "HARM_CATEGORY_HARASSMENT", "probability": "MEDIUM"},
      {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"}
    ]
  }
}`

// Stream chunks: server-sent events whose data is a GenerateContentResponse,
// or an error object sent in the 200 stream.
const (
	sseChunk     = `data: {"candidates": [{"content": {"parts": [{"text": "Hel"}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash"}` + "\r\n\r\n"
	sseOverload  = `data: {"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}` + "\r\n\r\n"
	sseFinalStop = `data: {"candidates": [{"content": {"parts": [{"text": "lo"}],"role": "model"},"finishReason": "STOP","index": 0}],"modelVersion": "gemini-2.5-flash"}` + "\r\n\r\n"
)

// jsonError answers with status, the headers and a JSON body.
func jsonError(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
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

// hangUp takes the connection over and closes it without answering.
func hangUp(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

// cutStream starts a chunked 200 event stream, sends events, and closes the
// connection without the last chunk.
func cutStream(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for _, e := range events {
			fmt.Fprintf(buf, "%x\r\n%s\r\n", len(e), e)
		}
		buf.Flush()
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

// newClient returns a real genai client for the Gemini API backend whose
// requests go to h through a Recorder.
func newClient(t *testing.T, h http.Handler, backend genai.Backend) (*genai.Client, *httprec.Recorder) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rec := httprec.New(nil)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "test-key-not-a-key",
		Backend:     backend,
		HTTPClient:  rec.Client(),
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// A call makes one request with the real client and returns the error.
type call func(ctx context.Context, c *genai.Client) error

func generate(ctx context.Context, c *genai.Client) error {
	_, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hello"), nil)
	return err
}

func stream(ctx context.Context, c *genai.Client) error {
	off := false
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: &off}
	for _, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hello"), cfg) {
		if err != nil {
			return err
		}
	}
	return nil
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
		wantText   string // text the Message must hold
	}{
		{
			name:    "429 RESOURCE_EXHAUSTED per-minute quota with RetryInfo",
			handler: jsonError(429, bodyPerMinuteQuota),
			call:    generate,
			want: erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit,
				Rule: "quota.per_minute_is_rate", RetryAfter: 26 * time.Second},
			wantStatus: 429, wantCode: "RESOURCE_EXHAUSTED", wantText: "GenerateContentInputTokensPerModelPerMinute-FreeTier",
		},
		{
			name:       "429 RESOURCE_EXHAUSTED without details",
			handler:    jsonError(429, bodyResourceExhausted),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, Rule: "transient.rate_limit"},
			wantStatus: 429, wantCode: "RESOURCE_EXHAUSTED",
		},
		{
			name:       "400 INVALID_ARGUMENT input token count exceeds",
			handler:    jsonError(400, bodyTokenCountExceeds),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow, Rule: "overflow.stated"},
			wantStatus: 400, wantCode: "INVALID_ARGUMENT",
		},
		{
			name:       "400 INVALID_ARGUMENT API key not valid",
			handler:    jsonError(400, bodyAPIKeyInvalid),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonAuth, Rule: "auth.invalid_credentials"},
			wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantText: "API_KEY_INVALID",
		},
		{
			name:       "403 PERMISSION_DENIED",
			handler:    jsonError(403, bodyPermissionDenied),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonPermission, Rule: "permission.denied"},
			wantStatus: 403, wantCode: "PERMISSION_DENIED",
		},
		{
			name:       "404 NOT_FOUND model",
			handler:    jsonError(404, bodyModelNotFound),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Permanent, Reason: erradvisor.ReasonModelNotFound, Rule: "model.not_found"},
			wantStatus: 404, wantCode: "NOT_FOUND",
		},
		{
			name:       "500 INTERNAL",
			handler:    jsonError(500, bodyInternal),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonServer, Rule: "transient.server"},
			wantStatus: 500, wantCode: "INTERNAL",
		},
		{
			name:       "503 UNAVAILABLE model overloaded, Retry-After through the recorder",
			handler:    jsonError(503, bodyOverloaded, "Retry-After", "30"),
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded", RetryAfter: 30 * time.Second},
			wantStatus: 503, wantCode: "UNAVAILABLE",
		},
		{
			name:       "503 on a streaming call",
			handler:    jsonError(503, bodyOverloaded),
			call:       stream,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded"},
			wantStatus: 503, wantCode: "UNAVAILABLE",
		},
		{
			name:       "stream: error object after a chunk in a 200",
			handler:    sse(sseChunk, sseOverload),
			call:       stream,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "transient.overloaded"},
			wantStatus: 503, wantCode: "UNAVAILABLE",
		},
		{
			name: "HTML gateway page, not JSON",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(502)
				fmt.Fprint(w, "<html><body>502 Bad Gateway</body></html>")
			},
			call:       generate,
			want:       erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonServer, Rule: "transient.server"},
			wantStatus: 502, wantText: "Bad Gateway",
		},
		{
			name:    "connection closed before a response",
			handler: hangUp,
			call:    generate,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonStream, Rule: "go.eof"},
		},
		{
			name:    "stream cut mid-way",
			handler: cutStream(sseChunk),
			call:    stream,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonStream, Rule: "go.unexpected_eof"},
		},
		{
			name:    "context canceled by the caller",
			handler: hold,
			call:    generate,
			cancel:  50 * time.Millisecond,
			want:    erradvisor.Classification{Class: erradvisor.Canceled, Reason: erradvisor.ReasonAborted, Rule: "go.context_canceled"},
		},
		{
			name:    "deadline exceeded",
			handler: hold,
			call:    stream,
			timeout: 50 * time.Millisecond,
			want:    erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonTimeout, Rule: "go.deadline_exceeded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client, rec := newClient(t, tt.handler, genai.BackendGeminiAPI)
			ctx := context.Background()
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
			if !sameError(f.Err, err) || f.Provider != "gemini" || f.Message == "" {
				t.Errorf("Failure = %+v; want Err the SDK's error, Provider gemini, a Message", f)
			}
			if f.Header != nil || !f.At.IsZero() {
				t.Errorf("Failure has Header %v and At %v; the SDK's error carries neither", f.Header, f.At)
			}
			if diff := cmp.Diff([2]any{tt.wantStatus, tt.wantCode}, [2]any{f.Status, f.Code}); diff != "" {
				t.Errorf("Failure status and code (-want +got):\n%s", diff)
			}
			if !strings.Contains(f.Message, tt.wantText) {
				t.Errorf("Message lacks %q:\n%s", tt.wantText, f.Message)
			}
			if r, ok := rec.Last(); ok {
				r.Fill(&f)
			}
			f.At = time.Now()
			if diff := cmp.Diff(tt.want, erradvisor.Classify(f), ignoreEvidence); diff != "" {
				t.Errorf("classification (-want +got):\n%s\nfailure: %+v", diff, f)
			}
		})
	}
}

// TestRecorderSuppliesHeaders checks the wiring the package documents: the
// SDK's error has no headers, the recorder gives back Retry-After and Date.
func TestRecorderSuppliesHeaders(t *testing.T) {
	date := "Mon, 12 May 2025 11:11:55 GMT"
	client, rec := newClient(t, jsonError(429, bodyResourceExhausted, "Retry-After", "17", "Date", date), genai.BackendGeminiAPI)
	err := generate(context.Background(), client)
	f := adapter.Failure(err)
	r, ok := rec.Last()
	if !ok {
		t.Fatal("the recorder saw no failed response")
	}
	r.Fill(&f)
	want, _ := http.ParseTime(date)
	if f.Header.Get("Retry-After") != "17" || !f.At.Equal(want) || f.Status != 429 {
		t.Errorf("filled Failure = %+v; want Retry-After 17, At %v", f, want)
	}
	if c := erradvisor.Classify(f); c.RetryAfter != 17*time.Second {
		t.Errorf("RetryAfter = %v, want 17s", c.RetryAfter)
	}
}

// TestMessageIsErrorObject checks that Message renders the parsed error with
// its details, so the classifier reads them.
func TestMessageIsErrorObject(t *testing.T) {
	client, _ := newClient(t, jsonError(429, bodyResourceExhausted), genai.BackendGeminiAPI)
	f := adapter.Failure(generate(context.Background(), client))
	want := `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`
	if diff := cmp.Diff(want, f.Message); diff != "" {
		t.Errorf("Message (-want +got):\n%s", diff)
	}
}

func TestFailureFor(t *testing.T) {
	err := genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."}
	for _, tt := range []struct {
		backend genai.Backend
		want    string
	}{
		{genai.BackendUnspecified, "gemini"},
		{genai.BackendGeminiAPI, "gemini"},
		{genai.BackendVertexAI, "vertex"},
		{genai.BackendEnterprise, "vertex"},
	} {
		f := adapter.FailureFor(tt.backend, err)
		if f.Provider != tt.want || f.Status != 503 || f.Code != "UNAVAILABLE" {
			t.Errorf("FailureFor(%v) = %+v, want provider %s", tt.backend, f, tt.want)
		}
		if c := erradvisor.Classify(f); c.Class != erradvisor.Transient {
			t.Errorf("FailureFor(%v): class %v, want transient", tt.backend, c.Class)
		}
	}
}

// TestVertexExpressMode runs a client on Vertex AI (API key, express mode)
// against the test server.
func TestVertexExpressMode(t *testing.T) {
	client, _ := newClient(t, jsonError(400, bodyTokenCountExceeds), genai.BackendVertexAI)
	err := generate(context.Background(), client)
	f := adapter.FailureFor(client.ClientConfig().Backend, err)
	if f.Provider != "vertex" || f.Status != 400 {
		t.Fatalf("Failure = %+v", f)
	}
	if c := erradvisor.Classify(f); c.Class != erradvisor.Overflow {
		t.Errorf("class %v, want overflow", c.Class)
	}
}

func TestFailureWrappedAndPointer(t *testing.T) {
	e := genai.APIError{Code: 404, Status: "NOT_FOUND", Message: "models/gemini-pro is not found for API version v1beta"}
	for _, err := range []error{fmt.Errorf("turn 3: %w", e), &e, fmt.Errorf("x: %w", &e)} {
		f := adapter.Failure(err)
		if f.Status != 404 || f.Code != "NOT_FOUND" || !sameError(f.Err, err) || !strings.Contains(f.Message, `"status":"NOT_FOUND"`) {
			t.Errorf("Failure(%v) = %+v", err, f)
		}
	}
	noStatus := adapter.Failure(genai.APIError{Code: 429, Message: "Resource has been exhausted (e.g. check quota)."})
	if want := `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota)."}}`; noStatus.Message != want || noStatus.Code != "" || noStatus.Status != 429 {
		t.Errorf("Failure of an error object without a status word = %+v", noStatus)
	}
	var nilPtr *genai.APIError
	if f := adapter.Failure(fmt.Errorf("x: %w", nilPtr)); f.Status != 0 {
		t.Errorf("Failure of a nil *APIError = %+v", f)
	}
}

func TestNil(t *testing.T) {
	if diff := cmp.Diff(erradvisor.Failure{}, adapter.Failure(nil)); diff != "" {
		t.Errorf("Failure(nil) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(erradvisor.Classification{}, adapter.Classify(nil)); diff != "" {
		t.Errorf("Classify(nil) (-want +got):\n%s", diff)
	}
}

func TestClassify(t *testing.T) {
	client, _ := newClient(t, jsonError(400, bodyTokenCountExceeds), genai.BackendGeminiAPI)
	if c := adapter.Classify(generate(context.Background(), client)); c.Class != erradvisor.Overflow {
		t.Errorf("Classify = %+v, want overflow", c)
	}
	if c := adapter.Classify(context.Canceled); c.Class != erradvisor.Canceled {
		t.Errorf("Classify(context.Canceled) = %+v", c)
	}
	if c := adapter.Classify(fmt.Errorf("doRequest: error sending request: %w", io.ErrUnexpectedEOF)); c.Class != erradvisor.Transient {
		t.Errorf("Classify(unexpected EOF) = %+v", c)
	}
}

// TestStopReason covers every finish reason the SDK declares, and values it
// does not.
func TestStopReason(t *testing.T) {
	tests := []struct {
		in   genai.FinishReason
		want erradvisor.StopReason
	}{
		{genai.FinishReasonUnspecified, erradvisor.StopUnknown},
		{genai.FinishReasonStop, erradvisor.StopEndTurn},
		{genai.FinishReasonMaxTokens, erradvisor.StopLength},
		{genai.FinishReasonSafety, erradvisor.StopRefused},
		{genai.FinishReasonRecitation, erradvisor.StopRefused},
		{genai.FinishReasonLanguage, erradvisor.StopRefused},
		{genai.FinishReasonOther, erradvisor.StopUnknown},
		{genai.FinishReasonBlocklist, erradvisor.StopRefused},
		{genai.FinishReasonProhibitedContent, erradvisor.StopRefused},
		{genai.FinishReasonSPII, erradvisor.StopRefused},
		{genai.FinishReasonMalformedFunctionCall, erradvisor.StopUnknown},
		{genai.FinishReasonImageSafety, erradvisor.StopRefused},
		{genai.FinishReasonUnexpectedToolCall, erradvisor.StopUnknown},
		{genai.FinishReasonTooManyToolCalls, erradvisor.StopUnknown},
		{genai.FinishReasonImageProhibitedContent, erradvisor.StopRefused},
		{genai.FinishReasonNoImage, erradvisor.StopUnknown},
		{genai.FinishReasonImageRecitation, erradvisor.StopRefused},
		{genai.FinishReasonImageOther, erradvisor.StopUnknown},
		{genai.FinishReasonContinuation, erradvisor.StopPaused},
		{"", erradvisor.StopUnknown},
		{"SOMETHING_NEW", erradvisor.StopUnknown},
		{"stop", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		if got := adapter.StopReason(tt.in); got != tt.want {
			t.Errorf("StopReason(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestResponseStopReason reads real responses through the real client.
func TestResponseStopReason(t *testing.T) {
	ok := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    erradvisor.StopReason
	}{
		{"finishReason SAFETY", ok(respSafety), erradvisor.StopRefused},
		{"prompt blocked", ok(respPromptBlocked), erradvisor.StopRefused},
		{"STOP", ok(strings.TrimPrefix(strings.TrimSpace(sseFinalStop), "data: ")), erradvisor.StopEndTurn},
		{"function call", ok(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}],"role":"model"},"finishReason":"STOP","index":0}]}`), erradvisor.StopToolUse},
		{"MAX_TOKENS", ok(`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}]}`), erradvisor.StopLength},
		{"MALFORMED_FUNCTION_CALL", ok(`{"candidates":[{"content":{},"finishReason":"MALFORMED_FUNCTION_CALL","index":0}]}`), erradvisor.StopUnknown},
		{"no candidates", ok(`{}`), erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := newClient(t, tt.handler, genai.BackendGeminiAPI)
			resp, err := client.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hello"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := adapter.ResponseStopReason(resp); got != tt.want {
				t.Errorf("ResponseStopReason = %v, want %v", got, tt.want)
			}
		})
	}
	if got := adapter.ResponseStopReason(nil); got != erradvisor.StopUnknown {
		t.Errorf("ResponseStopReason(nil) = %v", got)
	}
}

// FuzzFailure feeds error bodies through the SDK's own parsing and the
// adapter; nothing may panic, and a failed status always reaches Failure.
func FuzzFailure(f *testing.F) {
	for _, b := range []string{bodyPerMinuteQuota, bodyTokenCountExceeds, bodyOverloaded, "<html>", "", `{"error":{}}`, `{"error":{"code":"x"}}`} {
		f.Add(429, b)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 400 || status > 599 {
			status = 500
		}
		resp := &http.Response{StatusCode: status, Status: fmt.Sprint(status), Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) { resp.Request = r; return resp, nil })
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey: "k", Backend: genai.BackendGeminiAPI,
			HTTPClient: &http.Client{Transport: base}, HTTPOptions: genai.HTTPOptions{BaseURL: "http://example.invalid"},
		})
		if err != nil {
			t.Fatal(err)
		}
		callErr := generate(context.Background(), c)
		if callErr == nil {
			t.Fatal("a failed status gave no error")
		}
		fl := adapter.Failure(callErr)
		if !sameError(fl.Err, callErr) || fl.Message == "" {
			t.Fatalf("Failure = %+v", fl)
		}
		_ = erradvisor.Classify(fl)
	})
}

// sameError reports whether a and b are the same error value. genai.APIError
// holds a slice, so errors holding it cannot be compared with ==.
func sameError(a, b error) bool {
	return fmt.Sprintf("%T %#v", a, a) == fmt.Sprintf("%T %#v", b, b)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoSDKRetries checks what the README says: with RetryOptions nil (the
// default) or Attempts 1, the SDK sends a failed request once.
func TestNoSDKRetries(t *testing.T) {
	one := int32(1)
	for _, opts := range []*genai.HTTPRetryOptions{nil, {Attempts: &one}} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			jsonError(503, bodyOverloaded)(w, r)
		}))
		defer srv.Close()
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey: "k", Backend: genai.BackendGeminiAPI,
			HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL, RetryOptions: opts},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := generate(context.Background(), c); err == nil {
			t.Fatal("the call succeeded")
		}
		if got := n.Load(); got != 1 {
			t.Errorf("RetryOptions %+v: %d requests, want 1", opts, got)
		}
	}
}

// ignoreEvidence leaves the classifier's evidence strength out of the
// comparisons: this adapter's tests are about what reaches the classifier.
var ignoreEvidence = cmpopts.IgnoreFields(erradvisor.Classification{}, "Evidence")

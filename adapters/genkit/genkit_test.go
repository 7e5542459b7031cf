package genkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/genkit"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/googlegenai"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

// Real Gemini API error bodies, each from the source beside it (they are
// fixtures of the core module too, testdata/fixtures). Where the source
// shows the body wrapped by a client or gateway, the body alone is kept.
const (
	// https://github.com/google-gemini/gemini-cli/issues/4360
	bodyOverloaded = `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
	// https://github.com/google-gemini/gemini-cli/issues/4231
	bodyTooManyTokens = `{"error":{"code":400,"message":"The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`
	// https://github.com/RooCodeInc/Roo-Code/issues/3883: a per-minute
	// input-token limit, with a 26 s RetryInfo.
	bodyPerMinute = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count","quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"250000"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}}`
	// https://oppl.ai/llms/gemini_complex_1/JE00B3XR4V72.json: the free
	// tier's requests per day, with a 22 s RetryInfo that does not help.
	bodyPerDay = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"250"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"22s"}]}}`
	// A generateContent answer, in the shape of
	// https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse.
	bodyAnswer = `{"candidates":[{"content":{"parts":[{"text":"Hello."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6},"modelVersion":"gemini-2.5-flash"}`
)

// apiError is the error the Gemini SDK returns for body: it decodes the
// body's "error" object into a genai.APIError, as the SDK does.
func apiError(t *testing.T, body string) error {
	t.Helper()
	var v struct {
		Error genai.APIError `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	// The googlegenai plugin wraps it so (plugins/googlegenai/gemini.go).
	return fmt.Errorf("failed to generate contents: %w", v.Error)
}

// fast is Conservative with millisecond delays.
func fast() erradvisor.Policy {
	p := erradvisor.Conservative()
	p.BaseDelay, p.MaxDelay, p.MaxRetryAfter = time.Millisecond, 4*time.Millisecond, time.Minute
	return p
}

// step is one scripted answer of the fake model.
type step struct {
	resp   *ai.ModelResponse
	err    error
	chunks []string // streamed before resp or err
}

// fakeModel is a Genkit model function with a script, recording the
// messages of every call.
type fakeModel struct {
	mu     sync.Mutex
	script []step
	calls  []string
}

func (f *fakeModel) fn(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	f.mu.Lock()
	var parts []string
	for _, m := range req.Messages {
		parts = append(parts, string(m.Role)+":"+short(m.Text()))
	}
	f.calls = append(f.calls, strings.Join(parts, " "))
	s := step{err: errors.New("script exhausted")}
	if len(f.script) > 0 {
		s, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	for _, c := range s.chunks {
		if cb == nil {
			break
		}
		if err := cb(ctx, &ai.ModelResponseChunk{Role: ai.RoleModel, Content: []*ai.Part{ai.NewTextPart(c)}}); err != nil {
			return nil, err
		}
	}
	if s.resp != nil {
		s.resp.Request = req
	}
	return s.resp, s.err
}

func (f *fakeModel) record() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// short keeps the first words of a text, enough to tell notes apart.
func short(s string) string {
	if f := strings.Fields(s); len(f) > 4 {
		return strings.Join(f[:4], " ") + "…"
	}
	return s
}

func answer(text string, r ai.FinishReason) *ai.ModelResponse {
	return &ai.ModelResponse{Message: ai.NewModelTextMessage(text), FinishReason: r}
}

// define registers fm as a Genkit model named after the test.
func define(t *testing.T, g *genkit.Genkit, fm *fakeModel) ai.Model {
	name := strings.ReplaceAll(t.Name(), "/", "_")
	return genkit.DefineModel(g, "fake/"+name, &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, SystemRole: true}}, fm.fn)
}

// run calls a fake model through genkit.Generate with the middleware.
func run(t *testing.T, g *genkit.Genkit, fm *fakeModel, mw ai.ModelMiddleware, opts ...ai.GenerateOption) (*ai.ModelResponse, error) {
	t.Helper()
	opts = append([]ai.GenerateOption{ai.WithModel(define(t, g, fm)), ai.WithMiddleware(mw)}, opts...)
	return genkit.Generate(context.Background(), g, opts...)
}

func TestMiddleware(t *testing.T) {
	g := genkit.Init(context.Background())
	continuing := fast()
	continuing.ContinueOnLength = true
	compact := func(_ context.Context, msgs []*ai.Message) ([]*ai.Message, error) {
		return msgs[len(msgs)-1:], nil // the system prompt is dropped
	}
	tests := []struct {
		name      string
		policy    erradvisor.Policy
		compactor adapter.Compactor
		script    func(t *testing.T) []step
		want      string
		wantClass erradvisor.Class
		wantCalls []string
	}{{
		name:   "overloaded, then an answer",
		policy: fast(),
		script: func(t *testing.T) []step {
			return []step{{err: apiError(t, bodyOverloaded)}, {resp: answer("hi", ai.FinishReasonStop)}}
		},
		want:      "hi",
		wantCalls: []string{"system:be brief user:hello", "system:be brief user:hello"},
	}, {
		name:   "requests per day: stop at once",
		policy: fast(),
		script: func(t *testing.T) []step {
			return []step{{err: apiError(t, bodyPerDay)}}
		},
		wantClass: erradvisor.Quota,
		wantCalls: []string{"system:be brief user:hello"},
	}, {
		name:      "input token count exceeded: compact, then one fresh attempt",
		policy:    fast(),
		compactor: compact,
		script: func(t *testing.T) []step {
			return []step{{err: apiError(t, bodyTooManyTokens)}, {resp: answer("ok", ai.FinishReasonStop)}}
		},
		want:      "ok",
		wantCalls: []string{"system:be brief user:hello", "user:hello[advisory] The conversation exceeded…"},
	}, {
		name:   "input token count exceeded without a compactor",
		policy: fast(),
		script: func(t *testing.T) []step {
			return []step{{err: apiError(t, bodyTooManyTokens)}}
		},
		wantClass: erradvisor.Overflow,
		wantCalls: []string{"system:be brief user:hello"},
	}, {
		name:   "a Genkit error with a stated wait",
		policy: fast(),
		script: func(*testing.T) []step {
			e := core.NewError(core.UNAVAILABLE, "The model is overloaded. Please try again later.")
			e.Details["retryDelay"] = "0.002s"
			return []step{{err: e}, {resp: answer("hi", ai.FinishReasonStop)}}
		},
		want:      "hi",
		wantCalls: []string{"system:be brief user:hello", "system:be brief user:hello"},
	}, {
		name:   "length stop continued",
		policy: continuing,
		script: func(*testing.T) []step {
			return []step{{resp: answer("Once upon ", ai.FinishReasonLength)}, {resp: answer("a time.", ai.FinishReasonStop)}}
		},
		want:      "Once upon a time.",
		wantCalls: []string{"system:be brief user:hello", "system:be brief user:hello model:Once upon  user:continue"},
	}, {
		name:   "blocked: the answer as it is",
		policy: fast(),
		script: func(*testing.T) []step {
			return []step{{resp: answer("", ai.FinishReasonBlocked)}}
		},
		wantCalls: []string{"system:be brief user:hello"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{script: tt.script(t)}
			mw := adapter.Middleware(tt.policy, adapter.WithTarget("gemini", "gemini-2.5-flash"), adapter.WithCompactor(tt.compactor))
			resp, err := run(t, g, fm, mw, ai.WithSystem("be brief"), ai.WithPrompt("hello"))
			var got string
			var gotClass erradvisor.Class
			if err != nil {
				var e *erradvisor.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *erradvisor.Error", err)
				}
				gotClass = e.Classification.Class
			} else {
				got = resp.Text()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClass, gotClass); diff != "" {
				t.Errorf("class (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, fm.record()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// After a call gives up, the user's next message carries a note about it,
// added to that message in the request only.
func TestMiddlewareNotesAfterStop(t *testing.T) {
	g := genkit.Init(context.Background())
	fm := &fakeModel{script: []step{{err: apiError(t, bodyPerDay)}, {resp: answer("ok", ai.FinishReasonStop)}}}
	mw := adapter.Middleware(fast(), adapter.WithTarget("gemini", "gemini-2.5-flash"))
	m := define(t, g, fm)
	ctx := context.Background()
	history := []*ai.Message{ai.NewUserTextMessage("hello")}
	if _, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMiddleware(mw), ai.WithMessages(history...)); err == nil {
		t.Fatal("want an error")
	}
	history = append(history, ai.NewUserTextMessage("try again"))
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMiddleware(mw), ai.WithMessages(history...))
	if err != nil {
		t.Fatal(err)
	}
	// The response's history is the conversation without the note.
	var kept []string
	for _, msg := range resp.History() {
		kept = append(kept, string(msg.Role)+":"+msg.Text())
	}
	if diff := cmp.Diff([]string{"user:hello", "user:try again", "model:ok"}, kept); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	want := []string{"user:hello", "user:hello user:try again[advisory] The previous…"}
	if diff := cmp.Diff(want, fm.record()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := len(history[1].Content); got != 1 {
		t.Errorf("the caller's message changed: %d parts", got)
	}
}

// A streamed call is retried only while nothing reached the caller.
func TestMiddlewareStreaming(t *testing.T) {
	g := genkit.Init(context.Background())
	tests := []struct {
		name      string
		script    func(t *testing.T) []step
		want      []string
		wantClass erradvisor.Class
		calls     int
	}{{
		name: "fails before the first chunk, then streams",
		script: func(t *testing.T) []step {
			return []step{{err: apiError(t, bodyOverloaded)}, {chunks: []string{"Hel", "lo"}, resp: answer("Hello", ai.FinishReasonStop)}}
		},
		want:  []string{"Hel", "lo"},
		calls: 2,
	}, {
		name: "fails after a chunk: not retried",
		script: func(t *testing.T) []step {
			return []step{{chunks: []string{"Hel"}, err: apiError(t, bodyOverloaded)}}
		},
		want:      []string{"Hel"},
		wantClass: erradvisor.Transient,
		calls:     1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{script: tt.script(t)}
			mw := adapter.Middleware(fast(), adapter.WithTarget("gemini", "gemini-2.5-flash"))
			var got []string
			_, err := run(t, g, fm, mw, ai.WithPrompt("hello"), ai.WithStreaming(func(_ context.Context, c *ai.ModelResponseChunk) error {
				got = append(got, c.Text())
				return nil
			}))
			var gotClass erradvisor.Class
			var e *erradvisor.Error
			if errors.As(err, &e) {
				gotClass = e.Classification.Class
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClass, gotClass); diff != "" {
				t.Errorf("class (-want +got):\n%s", diff)
			}
			if got := len(fm.record()); got != tt.calls {
				t.Errorf("got %d calls, want %d", got, tt.calls)
			}
		})
	}
}

// The googlegenai plugin against a local server standing in for the Gemini
// API: the real SDK error reaches the middleware.
func TestGoogleAIPlugin(t *testing.T) {
	tests := []struct {
		name      string
		replies   []reply
		want      string
		wantClass erradvisor.Class
		// wantDecisions are the actions and delays decided.
		wantDecisions []string
	}{{
		name:          "503 overloaded, then an answer",
		replies:       []reply{{503, bodyOverloaded}, {200, bodyAnswer}},
		want:          "Hello.",
		wantDecisions: []string{"retry 1ms", "none 0s"},
	}, {
		name:          "429 requests per day: stop, the RetryInfo notwithstanding",
		replies:       []reply{{429, bodyPerDay}},
		wantClass:     erradvisor.Quota,
		wantDecisions: []string{"stop 0s"},
	}, {
		name:          "400 input token count: overflow, for the host to compact",
		replies:       []reply{{400, bodyTooManyTokens}},
		wantClass:     erradvisor.Overflow,
		wantDecisions: []string{"compact 0s"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gemini(t, tt.replies)
			t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
			t.Setenv("GEMINI_API_KEY", "test-key")
			ctx := context.Background()
			g := genkit.Init(ctx, genkit.WithPlugins(&googlegenai.GoogleAI{}))
			var got []string
			mw := adapter.Middleware(fast(), adapter.WithTarget("gemini", "gemini-2.5-flash"),
				adapter.WithDecisions(func(d erradvisor.Decision) { got = append(got, fmt.Sprint(d.Action, " ", d.Delay)) }))
			resp, err := genkit.Generate(ctx, g, ai.WithModelName("googleai/gemini-2.5-flash"), ai.WithPrompt("hello"), ai.WithMiddleware(mw))
			var text string
			var gotClass erradvisor.Class
			if err != nil {
				var e *erradvisor.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *erradvisor.Error", err)
				}
				gotClass = e.Classification.Class
			} else {
				text = resp.Text()
			}
			if diff := cmp.Diff(tt.want, text); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClass, gotClass); diff != "" {
				t.Errorf("class (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDecisions, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// A RESOURCE_EXHAUSTED per-minute limit is retried after its RetryInfo
// delay: the Decision waits the 26 s the server asked for (the test
// cancels the wait).
func TestRetryInfoHonoured(t *testing.T) {
	srv := gemini(t, []reply{{429, bodyPerMinute}})
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	t.Setenv("GEMINI_API_KEY", "test-key")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := genkit.Init(ctx, genkit.WithPlugins(&googlegenai.GoogleAI{}))
	var got []string
	mw := adapter.Middleware(erradvisor.Conservative(), adapter.WithTarget("gemini", "gemini-2.5-flash"),
		adapter.WithDecisions(func(d erradvisor.Decision) {
			got = append(got, fmt.Sprint(d.Action, " ", d.Delay, " ", d.Classification.Class))
			cancel()
		}))
	_, err := genkit.Generate(ctx, g, ai.WithModelName("googleai/gemini-2.5-flash"), ai.WithPrompt("hello"), ai.WithMiddleware(mw))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the cancel", err)
	}
	if diff := cmp.Diff([]string{"retry 26s transient"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

type reply struct {
	status int
	body   string
}

// gemini serves replies, in order, to generateContent calls.
func gemini(t *testing.T, replies []reply) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !strings.HasSuffix(r.URL.Path, ":generateContent") || len(replies) == 0 {
			http.Error(w, "unexpected request "+r.URL.Path, http.StatusTeapot)
			return
		}
		rep := replies[0]
		replies = replies[1:]
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(rep.status)
		fmt.Fprint(w, rep.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestContent(t *testing.T) {
	tool := ai.NewToolRequestPart(&ai.ToolRequest{Name: "lookup"})
	tests := []struct {
		name string
		msg  *ai.Message
		want erradvisor.Content
	}{
		{"nil", nil, erradvisor.ContentNone},
		{"empty", &ai.Message{Role: ai.RoleModel}, erradvisor.ContentNone},
		{"empty text", ai.NewModelTextMessage(""), erradvisor.ContentNone},
		{"text", ai.NewModelTextMessage("hi"), erradvisor.ContentText},
		{"media", ai.NewModelMessage(ai.NewMediaPart("image/png", "data:image/png;base64,AA==")), erradvisor.ContentText},
		{"tool request", ai.NewModelMessage(tool), erradvisor.ContentToolCalls},
		{"reasoning only", ai.NewModelMessage(ai.NewReasoningPart("thinking", nil)), erradvisor.ContentThinking},
		{"all", ai.NewModelMessage(ai.NewReasoningPart("t", nil), ai.NewTextPart("hi"), tool),
			erradvisor.ContentText | erradvisor.ContentToolCalls | erradvisor.ContentThinking},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, adapter.Content(tt.msg)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

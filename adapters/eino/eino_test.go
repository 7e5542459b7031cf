package eino_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/eino"
	"github.com/google/go-cmp/cmp"
)

// Real Anthropic error bodies, each from the source beside it (they are
// fixtures of the core module too, testdata/fixtures/anthropic.yaml).
// eino-ext's Claude model returns the SDK's error wrapped as
// fmt.Errorf("create new message fail: %w", err)
// (https://github.com/cloudwego/eino-ext/blob/main/components/model/claude/claude.go),
// so the fake model wraps them the same way.
const (
	// https://github.com/anthropics/anthropic-sdk-typescript/issues/616
	bodyOverloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	// https://github.com/earendil-works/pi/issues/102
	bodyPromptTooLong = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`
	// https://github.com/anthropics/claude-code/issues/4684
	bodyCreditTooLow = `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	// https://github.com/eyaltoledano/claude-task-master/issues/222
	bodyInvalidKey = `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
)

// claudeErr is an SDK error as eino-ext's Claude model returns it.
func claudeErr(status int, body string) error {
	return fmt.Errorf("create new message fail: %w", &apiError{status: status, body: body})
}

// apiError stands for an SDK's HTTP error: a status and the raw body.
type apiError struct {
	status int
	body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// failure is a WithFailure function for apiError, as an SDK adapter's
// Failure would be.
func failure(err error) erradvisor.Failure {
	var e *apiError
	if errors.As(err, &e) {
		return erradvisor.Failure{Status: e.status, Message: e.body, Err: err}
	}
	return erradvisor.Failure{Err: err}
}

// step is one scripted answer of the fake model.
type step struct {
	out *schema.Message
	err error
	// For Stream: the chunks, then cut (an error after them) or EOF.
	chunks []*schema.Message
	cut    error
}

// fakeModel implements Eino's model.ToolCallingChatModel with a script,
// recording the input of every call.
type fakeModel struct {
	mu     sync.Mutex
	script []step
	inputs [][]*schema.Message
}

var _ model.ToolCallingChatModel = (*fakeModel)(nil)

func (f *fakeModel) next(input []*schema.Message) step {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, append([]*schema.Message(nil), input...))
	if len(f.script) == 0 {
		return step{err: errors.New("script exhausted")}
	}
	s := f.script[0]
	f.script = f.script[1:]
	return s
}

func (f *fakeModel) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	s := f.next(input)
	return s.out, s.err
}

func (f *fakeModel) Stream(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	s := f.next(input)
	if s.err != nil {
		return nil, s.err
	}
	r, w := schema.Pipe[*schema.Message](len(s.chunks) + 1)
	for _, c := range s.chunks {
		w.Send(c, nil)
	}
	if s.cut != nil {
		w.Send(nil, s.cut)
	}
	w.Close()
	return r, nil
}

func (f *fakeModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return f, nil }

// roles sums up the inputs the model received: one string per call, the
// roles of its messages, with the text of user messages.
func (f *fakeModel) roles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, in := range f.inputs {
		var parts []string
		for _, m := range in {
			if m.Role == schema.User {
				parts = append(parts, "user:"+short(m.Content))
			} else {
				parts = append(parts, string(m.Role)+":"+short(m.Content))
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// short keeps the first words of a text, enough to tell notes apart.
func short(s string) string {
	if f := strings.Fields(s); len(f) > 3 {
		return strings.Join(f[:3], " ") + "…"
	}
	return s
}

func answer(text, finish string) *schema.Message {
	return &schema.Message{Role: schema.Assistant, Content: text, ResponseMeta: &schema.ResponseMeta{FinishReason: finish}}
}

// fast is Conservative with millisecond delays.
func fast() erradvisor.Policy {
	p := erradvisor.Conservative()
	p.BaseDelay, p.MaxDelay = time.Millisecond, 4*time.Millisecond
	return p
}

func TestGenerate(t *testing.T) {
	continuing := fast()
	continuing.ContinueOnLength = true
	nudging := fast()
	nudging.NudgeEmpty = true
	compact := func(_ context.Context, in []*schema.Message) ([]*schema.Message, error) {
		return in[len(in)-1:], nil // the system prompt is dropped
	}
	tests := []struct {
		name      string
		policy    erradvisor.Policy
		compactor adapter.Compactor
		script    []step
		want      string // the answer's content
		wantClass erradvisor.Class
		wantCalls []string
	}{{
		name:   "overloaded twice, then an answer",
		policy: fast(),
		script: []step{{err: claudeErr(529, bodyOverloaded)}, {err: claudeErr(529, bodyOverloaded)}, {out: answer("hi", "end_turn")}},
		want:   "hi",
		wantCalls: []string{
			"system:be brief user:hello", "system:be brief user:hello", "system:be brief user:hello",
		},
	}, {
		name:      "overloaded until the retries run out",
		policy:    fast(),
		script:    []step{{err: claudeErr(529, bodyOverloaded)}, {err: claudeErr(529, bodyOverloaded)}, {err: claudeErr(529, bodyOverloaded)}, {err: claudeErr(529, bodyOverloaded)}},
		wantClass: erradvisor.Transient,
		wantCalls: []string{"system:be brief user:hello", "system:be brief user:hello", "system:be brief user:hello", "system:be brief user:hello"},
	}, {
		name:      "credit balance too low stops at once",
		policy:    fast(),
		script:    []step{{err: claudeErr(400, bodyCreditTooLow)}},
		wantClass: erradvisor.Billing,
		wantCalls: []string{"system:be brief user:hello"},
	}, {
		name:      "invalid key stops at once",
		policy:    fast(),
		script:    []step{{err: claudeErr(401, bodyInvalidKey)}},
		wantClass: erradvisor.Permanent,
		wantCalls: []string{"system:be brief user:hello"},
	}, {
		name:      "prompt too long: compact, then one fresh attempt",
		policy:    fast(),
		compactor: compact,
		script:    []step{{err: claudeErr(400, bodyPromptTooLong)}, {out: answer("short now", "end_turn")}},
		want:      "short now",
		// The fresh attempt carries the note on the recovery.
		wantCalls: []string{"system:be brief user:hello", "user:hello user:[advisory] The conversation…"},
	}, {
		name:      "prompt too long twice: one recovery only",
		policy:    fast(),
		compactor: compact,
		script:    []step{{err: claudeErr(400, bodyPromptTooLong)}, {err: claudeErr(400, bodyPromptTooLong)}},
		wantClass: erradvisor.Overflow,
		wantCalls: []string{"system:be brief user:hello", "user:hello user:[advisory] The conversation…"},
	}, {
		name:      "prompt too long without a compactor: the host's turn",
		policy:    fast(),
		script:    []step{{err: claudeErr(400, bodyPromptTooLong)}},
		wantClass: erradvisor.Overflow,
		wantCalls: []string{"system:be brief user:hello"},
	}, {
		name:   "length stop continued",
		policy: continuing,
		script: []step{{out: answer("Once upon ", "length")}, {out: answer("a time.", "stop")}},
		want:   "Once upon a time.",
		wantCalls: []string{
			"system:be brief user:hello",
			"system:be brief user:hello assistant:Once upon  user:continue",
		},
	}, {
		name:      "empty stop nudged once",
		policy:    nudging,
		script:    []step{{out: answer("", "stop")}, {out: answer("done", "stop")}},
		want:      "done",
		wantCalls: []string{"system:be brief user:hello", "system:be brief user:hello user:continue"},
	}, {
		name:      "content filter: the answer as it is",
		policy:    fast(),
		script:    []step{{out: answer("", "content_filter")}},
		want:      "",
		wantCalls: []string{"system:be brief user:hello"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{script: tt.script}
			m := adapter.Wrap(fm, tt.policy, adapter.WithTarget("anthropic", "claude-sonnet-4-5"),
				adapter.WithFailure(failure), adapter.WithCompactor(tt.compactor))
			input := []*schema.Message{schema.SystemMessage("be brief"), schema.UserMessage("hello")}
			out, err := m.Generate(context.Background(), input)
			var got string
			var gotClass erradvisor.Class
			if err != nil {
				var e *erradvisor.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *erradvisor.Error", err)
				}
				gotClass = e.Classification.Class
			} else if out != nil {
				got = out.Content
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClass, gotClass); diff != "" {
				t.Errorf("class (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, fm.roles()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if len(input) != 2 {
				t.Errorf("the caller's input changed: %d messages", len(input))
			}
		})
	}
}

// After a call gives up, the next call (the user's next message) tells the
// model what happened, in a user message at the end of that call only.
func TestGenerateNotesAfterStop(t *testing.T) {
	fm := &fakeModel{script: []step{{err: claudeErr(400, bodyCreditTooLow)}, {out: answer("ok", "end_turn")}, {out: answer("fine", "end_turn")}}}
	m := adapter.Wrap(fm, fast(), adapter.WithTarget("anthropic", "claude-sonnet-4-5"), adapter.WithFailure(failure))
	ctx := context.Background()
	history := []*schema.Message{schema.UserMessage("hello")}
	if _, err := m.Generate(ctx, history); !errors.Is(err, errors.Unwrap(err)) || erradvisor.IsRetryable(err) {
		t.Fatalf("first call: got %v, want a non-retryable error", err)
	}
	history = append(history, schema.UserMessage("I topped up, try again"))
	out, err := m.Generate(ctx, history)
	if err != nil {
		t.Fatal(err)
	}
	history = append(history, out, schema.UserMessage("thanks"))
	if _, err := m.Generate(ctx, history); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user:hello",
		"user:hello user:I topped up,… user:[advisory] The previous…",
		"user:hello user:I topped up,… assistant:ok user:thanks",
	}
	if diff := cmp.Diff(want, fm.roles()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestGenerateCancelDuringBackoff(t *testing.T) {
	p := erradvisor.Conservative() // 2 s before the first retry
	fm := &fakeModel{script: []step{{err: claudeErr(529, bodyOverloaded)}}}
	m := adapter.Wrap(fm, p, adapter.WithTarget("anthropic", "claude-sonnet-4-5"), adapter.WithFailure(failure))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, []*schema.Message{schema.UserMessage("hello")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
	if got := len(fm.roles()); got != 1 {
		t.Errorf("got %d calls, want 1", got)
	}
}

// Without WithFailure the error is read from its text alone.
func TestGenerateWithoutFailureFunc(t *testing.T) {
	fm := &fakeModel{script: []step{{err: claudeErr(400, bodyPromptTooLong)}}}
	m := adapter.Wrap(fm, fast(), adapter.WithTarget("anthropic", "claude-sonnet-4-5"))
	_, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage("hello")})
	if !erradvisor.IsOverflow(err) {
		t.Fatalf("got %v, want an overflow", err)
	}
}

func TestStream(t *testing.T) {
	cut := errors.New("unexpected EOF")
	tests := []struct {
		name      string
		script    []step
		want      []string // the chunks read
		wantClass erradvisor.Class
		calls     int
	}{{
		name:   "fails to open, then streams",
		script: []step{{err: claudeErr(529, bodyOverloaded)}, {chunks: []*schema.Message{answer("Hel", ""), answer("lo", "end_turn")}}},
		want:   []string{"Hel", "lo"},
		calls:  2,
	}, {
		name:   "error before the first chunk, then streams",
		script: []step{{cut: fmt.Errorf("read stream: %w", &apiError{status: 0, body: bodyOverloaded})}, {chunks: []*schema.Message{answer("Hi", "end_turn")}}},
		want:   []string{"Hi"},
		calls:  2,
	}, {
		name:      "cut after a chunk: passed on, not retried",
		script:    []step{{chunks: []*schema.Message{answer("Hel", "")}, cut: io.ErrUnexpectedEOF}},
		want:      []string{"Hel"},
		wantClass: erradvisor.Transient,
		calls:     1,
	}, {
		name:      "invalid key when opening",
		script:    []step{{err: claudeErr(401, bodyInvalidKey)}},
		wantClass: erradvisor.Permanent,
		calls:     1,
	}}
	_ = cut
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{script: tt.script}
			m := adapter.Wrap(fm, fast(), adapter.WithTarget("anthropic", "claude-sonnet-4-5"), adapter.WithFailure(failure))
			sr, err := m.Stream(context.Background(), []*schema.Message{schema.UserMessage("hello")})
			var got []string
			var gotClass erradvisor.Class
			if err == nil {
				for {
					chunk, rerr := sr.Recv()
					if rerr == io.EOF {
						break
					}
					if rerr != nil {
						err = rerr
						break
					}
					got = append(got, chunk.Content)
				}
				sr.Close()
			}
			if err != nil {
				var e *erradvisor.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *erradvisor.Error", err)
				}
				gotClass = e.Classification.Class
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClass, gotClass); diff != "" {
				t.Errorf("class (-want +got):\n%s", diff)
			}
			if got := len(fm.roles()); got != tt.calls {
				t.Errorf("got %d calls, want %d", got, tt.calls)
			}
		})
	}
}

// Every finish reason Eino documents on schema.ResponseMeta.FinishReason,
// and the providers' own names that eino-ext models pass through.
func TestStopReason(t *testing.T) {
	tests := map[string]erradvisor.StopReason{
		// Eino's documented values (schema/message.go, ResponseMeta).
		"stop":           erradvisor.StopEndTurn,
		"length":         erradvisor.StopLength,
		"tool_calls":     erradvisor.StopToolUse,
		"content_filter": erradvisor.StopRefused,
		"null":           erradvisor.StopUnknown,
		"":               erradvisor.StopUnknown,
		// OpenAI's legacy value.
		"function_call": erradvisor.StopToolUse,
		// Anthropic stop_reason values.
		"end_turn":                      erradvisor.StopEndTurn,
		"stop_sequence":                 erradvisor.StopEndTurn,
		"max_tokens":                    erradvisor.StopLength,
		"tool_use":                      erradvisor.StopToolUse,
		"refusal":                       erradvisor.StopRefused,
		"pause_turn":                    erradvisor.StopPaused,
		"model_context_window_exceeded": erradvisor.StopContextWindow,
		// Gemini FinishReason values.
		"STOP":                      erradvisor.StopEndTurn,
		"MAX_TOKENS":                erradvisor.StopLength,
		"SAFETY":                    erradvisor.StopRefused,
		"RECITATION":                erradvisor.StopRefused,
		"BLOCKLIST":                 erradvisor.StopRefused,
		"PROHIBITED_CONTENT":        erradvisor.StopRefused,
		"SPII":                      erradvisor.StopRefused,
		"IMAGE_SAFETY":              erradvisor.StopRefused,
		"MALFORMED_FUNCTION_CALL":   erradvisor.StopUnknown,
		"OTHER":                     erradvisor.StopUnknown,
		"FINISH_REASON_UNSPECIFIED": erradvisor.StopUnknown,
		"something new":             erradvisor.StopUnknown,
	}
	got := map[string]erradvisor.StopReason{}
	for in := range tests {
		got[in] = adapter.StopReason(in)
	}
	if diff := cmp.Diff(tests, got); diff != "" {
		t.Errorf("StopReason (-want +got):\n%s", diff)
	}
}

func TestRetryable(t *testing.T) {
	overloaded := claudeErr(529, bodyOverloaded)
	tests := []struct {
		name string
		err  error
		want [2]bool // Conservative, Persistent
	}{
		{"nil", nil, [2]bool{false, false}},
		{"overloaded (text)", errors.New(bodyOverloaded), [2]bool{true, true}},
		{"overloaded with a verdict", &erradvisor.Error{Err: overloaded, Classification: erradvisor.Classification{Class: erradvisor.Transient}}, [2]bool{true, true}},
		{"credit balance too low", errors.New(bodyCreditTooLow), [2]bool{false, true}},
		{"prompt too long", errors.New(bodyPromptTooLong), [2]bool{false, false}},
		{"invalid key", errors.New(bodyInvalidKey), [2]bool{false, false}},
		{"canceled", context.Canceled, [2]bool{false, false}},
		{"a wait longer than honoured", &erradvisor.Error{Err: overloaded, Classification: erradvisor.Classification{Class: erradvisor.Transient, RetryAfter: time.Hour}}, [2]bool{false, false}},
	}
	conservative := adapter.Retryable(erradvisor.Conservative())
	persistent := adapter.Retryable(erradvisor.Persistent())
	for _, tt := range tests {
		got := [2]bool{conservative(context.Background(), tt.err), persistent(context.Background(), tt.err)}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if got, want := adapter.IsRetryAble(context.Background(), errors.New(bodyOverloaded)), true; got != want {
		t.Errorf("IsRetryAble(overloaded) = %v, want %v", got, want)
	}
}

func TestRetryConfig(t *testing.T) {
	c := adapter.RetryConfig(erradvisor.Conservative())
	ctx := context.Background()
	other, cancel := context.WithCancel(ctx)
	defer cancel()
	// An error carrying a verdict: a rate limit whose server asked for 5 s.
	stated := &erradvisor.Error{Err: errors.New("rate limited"),
		Classification: erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, RetryAfter: 5 * time.Second}}
	var got []any
	got = append(got, c.MaxRetries, c.BackoffFunc(ctx, 1), c.BackoffFunc(ctx, 3))
	// The stated wait lengthens the next delay in the same context, once.
	got = append(got, c.IsRetryAble(ctx, stated), c.BackoffFunc(ctx, 1), c.BackoffFunc(ctx, 1))
	// Another context does not get it.
	got = append(got, c.IsRetryAble(ctx, stated), c.BackoffFunc(other, 1))
	// A shorter stated wait leaves the backoff as it is.
	got = append(got, c.IsRetryAble(ctx, stated), c.BackoffFunc(ctx, 3))
	want := []any{3, 2 * time.Second, 8 * time.Second,
		true, 5 * time.Second, 2 * time.Second,
		true, 2 * time.Second,
		true, 8 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RetryConfig (-want +got):\n%s", diff)
	}
}

func FuzzStopReason(f *testing.F) {
	for _, s := range []string{"stop", "length", "tool_calls", "content_filter", "null", "", "MAX_TOKENS", " Pause_Turn "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := adapter.StopReason(s)
		if r != erradvisor.StopUnknown && r == adapter.StopReason(s+"x") {
			t.Errorf("%q and %q both map to %v", s, s+"x", r)
		}
	})
}

func TestContent(t *testing.T) {
	tests := []struct {
		name string
		msg  *schema.Message
		want erradvisor.Content
	}{
		{"nil", nil, erradvisor.ContentNone},
		{"empty", &schema.Message{Role: schema.Assistant}, erradvisor.ContentNone},
		{"text", answer("hi", "stop"), erradvisor.ContentText},
		{"multi-content text", &schema.Message{AssistantGenMultiContent: []schema.MessageOutputPart{{Type: schema.ChatMessagePartTypeText, Text: "hi"}}}, erradvisor.ContentText},
		{"tool calls", &schema.Message{ToolCalls: []schema.ToolCall{{ID: "1"}}}, erradvisor.ContentToolCalls},
		{"reasoning only", &schema.Message{ReasoningContent: "thinking"}, erradvisor.ContentThinking},
		{"all", &schema.Message{Content: "hi", ReasoningContent: "t", ToolCalls: []schema.ToolCall{{ID: "1"}}},
			erradvisor.ContentText | erradvisor.ContentToolCalls | erradvisor.ContentThinking},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, adapter.Content(tt.msg)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// Package eino wires erradvisor into CloudWeGo Eino
// (github.com/cloudwego/eino): a ChatModel wrapper that decides what to do
// when a model call fails or ends oddly, and plug-ins for the ADK's own
// retry hook.
//
// Wrap returns a model.ToolCallingChatModel that, on every Generate:
//
//   - adds the Session's advisory notes, as one user message, to the end of
//     the input of that call only (the caller's slice is never changed);
//   - calls the inner model; on an error it classifies the failure once,
//     waits the Decision's delay and retries a transient failure, compacts
//     (through the host's Compactor) and makes one fresh attempt on a context
//     overflow, and returns an *erradvisor.Error carrying the verdict when
//     the Session says Stop;
//   - reads the response's ResponseMeta.FinishReason (see StopReason) and,
//     when the Policy asks for it, continues a cut or empty turn by sending
//     the Decision's text as a hidden user message, a bounded number of
//     times, returning the joined answer.
//
// Stream retries failures that happen before the first chunk; a stream cut
// after chunks were delivered is returned as an *erradvisor.Error, since
// the caller already holds part of the answer.
//
// For the ADK's ChatModelAgent, which has its own retry loop
// (adk.ModelRetryConfig), RetryConfig and IsRetryAble plug erradvisor's
// verdict into that hook instead.
//
// Turn the retries of the provider SDK under the Eino model off, and do not
// stack Wrap with adk.ModelRetryConfig: stacked retry layers multiply the
// attempts and hide quota errors.
package eino

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/erradvisor/erradvisor"
)

// Compactor compacts a conversation after a context overflow. It receives
// the input messages of the failed call (a copy: it may reuse or change
// the slice) and returns the messages of the fresh attempt, typically a
// summary of the older turns followed by the latest ones.
type Compactor func(ctx context.Context, input []*schema.Message) ([]*schema.Message, error)

// DefaultMaxContinuations is the number of continuations and nudges one
// Generate call makes at most, unless WithMaxContinuations says otherwise.
// The Policy's own cap (MaxContinuations) applies as well.
const DefaultMaxContinuations = 4

// Option configures Wrap.
type Option func(*config)

type config struct {
	session          *erradvisor.Session
	target           erradvisor.Target
	failure          func(error) erradvisor.Failure
	compact          Compactor
	contextWindow    int
	maxOutput        int
	now              func() time.Time
	maxContinuations int
	observe          func(erradvisor.Decision)
}

// WithSession makes the model decide with s instead of a Session of its
// own, so that the host can share it (with its own request paths, or with
// CommandFailed reports). The policy passed to Wrap is then unused.
func WithSession(s *erradvisor.Session) Option {
	return func(c *config) {
		if s != nil {
			c.session = s
		}
	}
}

// WithTarget names the provider id and model the inner ChatModel calls. The
// provider id enables erradvisor's provider-specific rules ("openai",
// "anthropic", "gemini", "ark", ...); the model is reported in notes.
func WithTarget(provider, model string) Option {
	return func(c *config) { c.target = erradvisor.Target{Provider: provider, Model: model} }
}

// WithFailure sets the function that describes an error of the inner model
// as an erradvisor.Failure, typically an SDK adapter's Failure, which reads
// the status, body and headers of the SDK's error wherever it sits in the
// chain (eino-ext's models wrap SDK errors with %w; the adapter must be for
// the SDK's major version the model uses). Without it the error is
// classified by its Go error chain and its text, as erradvisor.ClassifyError
// does. Fields the function leaves empty are filled from WithTarget and the
// clock.
func WithFailure(f func(error) erradvisor.Failure) Option {
	return func(c *config) { c.failure = f }
}

// WithCompactor sets the compaction to run when the Session asks for an
// overflow recovery. Without one, a context overflow is returned as an
// *erradvisor.Error whose verdict is Overflow (erradvisor.IsOverflow
// reports it), for the host to compact and call again.
func WithCompactor(f Compactor) Option {
	return func(c *config) { c.compact = f }
}

// WithLimits states the model's context window and the request's output
// limit (max_tokens), in tokens. The Session needs them to tell a length
// stop that filled the window from one that came early, and a turn whose
// usage already exceeds the window. Zero means not known.
func WithLimits(contextWindow, maxOutput int) Option {
	return func(c *config) { c.contextWindow, c.maxOutput = contextWindow, maxOutput }
}

// WithClock sets the clock the Session's decisions and notes use; the
// default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithDecisions makes every Decision the Session takes go to f as well, for
// streaming its lifecycle events (Decision.Events) to a UI or logging
// Decision.Explain. f runs on the calling goroutine, before the Decision is
// acted on (before a retry's wait, say).
func WithDecisions(f func(erradvisor.Decision)) Option {
	return func(c *config) { c.observe = f }
}

// WithMaxContinuations bounds the continuations and nudges of one Generate
// call; zero or less turns them off. The default is
// DefaultMaxContinuations.
func WithMaxContinuations(n int) Option {
	return func(c *config) { c.maxContinuations = max(n, 0) }
}

// ChatModel is a model.ToolCallingChatModel that consults an
// erradvisor.Session around every call of the model it wraps. Make one per
// conversation (or share one Session with WithSession): the Session counts
// retries, continuations and the one overflow recovery per user message.
// It is safe for concurrent use, but concurrent calls share that state.
type ChatModel struct {
	inner model.ToolCallingChatModel
	cfg   *config
	st    *state
}

// state is what one conversation's wrappers share: the failure the last
// call gave up on, for the next call's notes.
type state struct {
	mu sync.Mutex
	// failed is the failed call's transcript entry, and failedAt the number
	// of input messages it followed; hasFail says whether there is one.
	failed   erradvisor.Entry
	failedAt int
	hasFail  bool
}

var (
	_ model.ToolCallingChatModel = (*ChatModel)(nil)
	_ components.Typer           = (*ChatModel)(nil)
	_ components.Checker         = (*ChatModel)(nil)
)

// Wrap returns inner wrapped with a new Session deciding under policy (or
// the one given with WithSession).
func Wrap(inner model.ToolCallingChatModel, policy erradvisor.Policy, opts ...Option) *ChatModel {
	c := &config{now: time.Now, maxContinuations: DefaultMaxContinuations}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.session == nil {
		c.session = erradvisor.NewSession(policy)
	}
	return &ChatModel{inner: inner, cfg: c, st: &state{}}
}

// Session returns the Session the model decides with.
func (m *ChatModel) Session() *erradvisor.Session { return m.cfg.session }

// WithTools implements model.ToolCallingChatModel: it binds tools to the
// inner model and wraps the result with the same Session and options.
func (m *ChatModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.inner.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &ChatModel{inner: inner, cfg: m.cfg, st: m.st}, nil
}

// GetType implements components.Typer with the inner model's type.
func (m *ChatModel) GetType() string {
	if t, ok := m.inner.(components.Typer); ok {
		return t.GetType()
	}
	return "ErrAdvisor"
}

// IsCallbacksEnabled implements components.Checker: it reports whether the
// inner model runs Eino's callbacks itself (then once per attempt).
func (m *ChatModel) IsCallbacksEnabled() bool {
	return components.IsCallbacksEnabled(m.inner)
}

// Generate implements model.BaseChatModel; see the package documentation.
func (m *ChatModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	msgs := input
	after := m.begin(input)
	var parts []*schema.Message
	continuations := 0
	for {
		req := m.withNotes(msgs)
		out, err := m.inner.Generate(ctx, req, opts...)
		now := m.cfg.now()
		if err != nil {
			d := m.decide(m.failureOutcome(ctx, err, now), now)
			next, stop := m.onFailure(ctx, d, err, msgs, now)
			if stop != nil {
				return nil, stop
			}
			if d.Action == erradvisor.Compact {
				// The fresh attempt after a recovery starts the turn over.
				parts, after = nil, erradvisor.AfterUser
			}
			msgs = next
			continue
		}
		m.clearFailure()
		d := m.decide(m.successOutcome(out, after), now)
		switch d.Action {
		case erradvisor.Continue, erradvisor.Nudge:
			if continuations >= m.cfg.maxContinuations {
				return join(parts, out), nil
			}
			continuations++
			parts = append(parts, out)
			msgs = appendTurn(msgs, out, d.Text)
			after = erradvisor.AfterContinuation
			continue
		case erradvisor.Compact:
			if d.Compaction == erradvisor.CompactionOverflow {
				// An early length stop or a full context window: the
				// answer is cut; compact and make the one fresh attempt.
				if next, ok := m.recover(ctx, msgs, now); ok {
					msgs, parts, after = next, nil, erradvisor.AfterUser
					continue
				}
			}
		}
		return join(parts, out), nil
	}
}

// onFailure acts on the Decision d about err, a failed call with input
// msgs. It returns the input of the next attempt, or the error to return.
func (m *ChatModel) onFailure(ctx context.Context, d erradvisor.Decision, err error, msgs []*schema.Message, now time.Time) ([]*schema.Message, error) {
	switch d.Action {
	case erradvisor.Retry:
		if werr := erradvisor.Wait(ctx, d.Delay); werr != nil {
			m.cfg.session.Cancel(m.cfg.now())
			return nil, &erradvisor.Error{Err: errors.Join(werr, err), Classification: erradvisor.ClassifyError(werr)}
		}
		return msgs, nil
	case erradvisor.Compact:
		if next, ok := m.recover(ctx, msgs, now); ok {
			return next, nil
		}
	}
	c := d.Classification
	if c == (erradvisor.Classification{}) {
		c = erradvisor.ClassifyError(err)
	}
	if c.Class != erradvisor.Canceled {
		m.recordFailure(err, c, len(msgs), now)
	}
	return nil, &erradvisor.Error{Err: err, Classification: c}
}

// begin records a user message when input ends with one, and says what
// precedes the coming turn.
func (m *ChatModel) begin(input []*schema.Message) erradvisor.Preceding {
	if len(input) == 0 || input[len(input)-1] == nil {
		return erradvisor.AfterOther
	}
	switch input[len(input)-1].Role {
	case schema.User:
		m.cfg.session.UserMessage(m.cfg.now())
		return erradvisor.AfterUser
	case schema.Tool:
		return erradvisor.AfterToolResult
	}
	return erradvisor.AfterOther
}

// withNotes returns msgs followed by the Session's notes as one user
// message, or msgs itself when there are none.
func (m *ChatModel) withNotes(msgs []*schema.Message) []*schema.Message {
	m.st.mu.Lock()
	failed, failedAt, hasFail := m.st.failed, m.st.failedAt, m.st.hasFail
	m.st.mu.Unlock()
	notes := m.cfg.session.Notes(m.cfg.now(), m.cfg.target, view(msgs, failed, failedAt, hasFail))
	if len(notes) == 0 {
		return msgs
	}
	texts := make([]string, len(notes))
	for i, n := range notes {
		texts[i] = n.Text
	}
	out := make([]*schema.Message, len(msgs), len(msgs)+1)
	copy(out, msgs)
	return append(out, schema.UserMessage(strings.Join(texts, "\n")))
}

// recover runs the host's compaction for an overflow recovery, reporting it
// to the Session, and returns the input of the fresh attempt.
func (m *ChatModel) recover(ctx context.Context, msgs []*schema.Message, now time.Time) ([]*schema.Message, bool) {
	if m.cfg.compact == nil {
		return nil, false
	}
	s := m.cfg.session
	s.CompactionStarted(erradvisor.CompactionOverflow, now)
	next, err := m.cfg.compact(ctx, append([]*schema.Message(nil), msgs...))
	var res *erradvisor.CompactionResult
	if err == nil {
		if len(next) == 0 {
			err = errors.New("the compaction returned no messages")
		} else {
			res = &erradvisor.CompactionResult{TokensBefore: estimate(msgs), EstimatedTokensAfter: estimate(next)}
		}
	}
	end := s.CompactionEnded(res, err, m.cfg.now())
	return next, end.WillRetry
}

// estimate is a rough token count of msgs (four characters a token), so
// that a compaction that did not shrink the input is not retried.
func estimate(msgs []*schema.Message) int {
	n := 0
	for _, msg := range msgs {
		if msg == nil {
			continue
		}
		n += len(msg.Content) + len(msg.ReasoningContent)
		for _, p := range msg.UserInputMultiContent {
			n += len(p.Text)
		}
		for _, tc := range msg.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	return n/4 + 1
}

// failureOutcome describes the failed call's err as an Outcome.
func (m *ChatModel) failureOutcome(ctx context.Context, err error, now time.Time) erradvisor.Outcome {
	t := m.cfg.target
	var f erradvisor.Failure
	if m.cfg.failure != nil {
		f = m.cfg.failure(err)
	}
	if f.Err == nil {
		f.Err = err
	}
	if f.Provider == "" {
		f.Provider = t.Provider
	}
	if f.Model == "" {
		f.Model = t.Model
	}
	if f.At.IsZero() {
		f.At = now
	}
	o := erradvisor.Outcome{Stop: erradvisor.StopError, Failure: f, Provider: t.Provider, Model: t.Model, CurrentModel: t.Model}
	var e *erradvisor.Error
	if errors.As(err, &e) && e != nil {
		o.Classification = e.Classification
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		o.Stop = erradvisor.StopAborted
	}
	return o
}

// successOutcome describes a finished turn as an Outcome.
func (m *ChatModel) successOutcome(msg *schema.Message, after erradvisor.Preceding) erradvisor.Outcome {
	t := m.cfg.target
	o := erradvisor.Outcome{
		Stop:     erradvisor.StopUnknown,
		Provider: t.Provider, Model: t.Model, CurrentModel: t.Model,
		Content: Content(msg),
		After:   after,
		Usage:   erradvisor.TokenUsage{ContextWindow: m.cfg.contextWindow, MaxOutput: m.cfg.maxOutput},
	}
	if msg == nil || msg.ResponseMeta == nil {
		return o
	}
	o.Stop = StopReason(msg.ResponseMeta.FinishReason)
	if u := msg.ResponseMeta.Usage; u != nil {
		cached := min(max(u.PromptTokenDetails.CachedTokens, 0), u.PromptTokens)
		o.Usage.Input = u.PromptTokens - cached
		o.Usage.CacheRead = cached
		o.Usage.Output = u.CompletionTokens
	}
	return o
}

// Content says what msg, an assistant message, produced.
func Content(msg *schema.Message) erradvisor.Content {
	if msg == nil {
		return erradvisor.ContentNone
	}
	var c erradvisor.Content
	text := msg.Content != ""
	for _, p := range msg.AssistantGenMultiContent {
		text = text || p.Text != ""
	}
	if text {
		c |= erradvisor.ContentText
	}
	if len(msg.ToolCalls) > 0 {
		c |= erradvisor.ContentToolCalls
	}
	if msg.ReasoningContent != "" {
		c |= erradvisor.ContentThinking
	}
	if c == 0 {
		c = erradvisor.ContentNone
	}
	return c
}

// StopReason maps an Eino finish reason (schema.ResponseMeta.FinishReason)
// to an erradvisor.StopReason. Eino leaves the value to the model
// implementation; it documents "stop", "length", "tool_calls",
// "content_filter" and "null" (the OpenAI names), and the providers' own
// names are read too: Anthropic stop reasons ("end_turn", "max_tokens",
// "tool_use", "refusal", "pause_turn", "model_context_window_exceeded") and
// Gemini finish reasons ("STOP", "MAX_TOKENS", "SAFETY", ...). Case is
// ignored. Anything else, the empty string and "null" included, is
// StopUnknown, never a normal end.
func StopReason(reason string) erradvisor.StopReason {
	switch strings.ToLower(strings.TrimSpace(reason)) {
	case "stop", "end_turn", "stop_sequence":
		return erradvisor.StopEndTurn
	case "length", "max_tokens":
		return erradvisor.StopLength
	case "tool_calls", "function_call", "tool_use":
		return erradvisor.StopToolUse
	case "content_filter", "refusal", "safety", "recitation", "blocklist",
		"prohibited_content", "spii", "image_safety":
		return erradvisor.StopRefused
	case "pause_turn":
		return erradvisor.StopPaused
	case "model_context_window_exceeded":
		return erradvisor.StopContextWindow
	}
	return erradvisor.StopUnknown
}

// recordFailure keeps the failure a call gave up on, for the notes of the
// next call.
func (m *ChatModel) recordFailure(err error, c erradvisor.Classification, at int, now time.Time) {
	t := m.cfg.target
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	m.st.failed = erradvisor.Entry{
		Kind: erradvisor.EntryAssistant, StopReason: erradvisor.StopError,
		ErrorMessage: m.failureText(err), Classification: c,
		Provider: t.Provider, Model: t.Model, Time: now,
	}
	m.st.failedAt, m.st.hasFail = at, true
}

// failureText is the text a note quotes for err: the Failure's message (a
// raw response body, from WithFailure), else the error's text.
func (m *ChatModel) failureText(err error) string {
	if m.cfg.failure != nil {
		if f := m.cfg.failure(err); f.Message != "" {
			return f.Message
		}
	}
	return err.Error()
}

func (m *ChatModel) clearFailure() {
	m.st.mu.Lock()
	m.st.hasFail = false
	m.st.mu.Unlock()
}

// view describes msgs to the Session, newest first, with the failed call
// (when there is one) after the first failedAt messages.
func view(msgs []*schema.Message, failed erradvisor.Entry, failedAt int, hasFail bool) iter.Seq[erradvisor.Entry] {
	failedAt = min(failedAt, len(msgs))
	return func(yield func(erradvisor.Entry) bool) {
		for i := len(msgs); i >= 0; i-- {
			if hasFail && i == failedAt && !yield(failed) {
				return
			}
			if i == 0 {
				return
			}
			if !yield(entry(msgs[i-1])) {
				return
			}
		}
	}
}

// entry describes one Eino message to the Session.
func entry(msg *schema.Message) erradvisor.Entry {
	if msg == nil {
		return erradvisor.Entry{}
	}
	switch msg.Role {
	case schema.User:
		return erradvisor.Entry{Kind: erradvisor.EntryUser}
	case schema.Tool:
		return erradvisor.Entry{Kind: erradvisor.EntryToolResult}
	case schema.Assistant:
		e := erradvisor.Entry{Kind: erradvisor.EntryAssistant, Content: Content(msg)}
		if msg.ResponseMeta != nil {
			e.StopReason = StopReason(msg.ResponseMeta.FinishReason)
		}
		return e
	}
	return erradvisor.Entry{}
}

// appendTurn returns a copy of msgs followed by out (when it holds
// anything) and the hidden user message text (when not empty).
func appendTurn(msgs []*schema.Message, out *schema.Message, text string) []*schema.Message {
	next := make([]*schema.Message, len(msgs), len(msgs)+2)
	copy(next, msgs)
	if out != nil && (out.Content != "" || len(out.ToolCalls) > 0 || out.ReasoningContent != "") {
		next = append(next, out)
	}
	if text != "" {
		next = append(next, schema.UserMessage(text))
	}
	return next
}

// join returns the answer of a turn made of parts (continued turns) and
// last: the text and reasoning joined, the tool calls of all, and last's
// role, metadata and finish reason, with the usage summed.
func join(parts []*schema.Message, last *schema.Message) *schema.Message {
	if len(parts) == 0 || last == nil {
		return last
	}
	out := *last
	var content, reasoning strings.Builder
	var calls []schema.ToolCall
	var usage *schema.TokenUsage
	for _, p := range append(parts, last) {
		if p == nil {
			continue
		}
		content.WriteString(p.Content)
		reasoning.WriteString(p.ReasoningContent)
		calls = append(calls, p.ToolCalls...)
		if p.ResponseMeta != nil && p.ResponseMeta.Usage != nil {
			if usage == nil {
				usage = &schema.TokenUsage{}
			}
			u := p.ResponseMeta.Usage
			usage.PromptTokens += u.PromptTokens
			usage.CompletionTokens += u.CompletionTokens
			usage.TotalTokens += u.TotalTokens
		}
	}
	out.Content, out.ReasoningContent, out.ToolCalls = content.String(), reasoning.String(), calls
	if last.ResponseMeta != nil {
		meta := *last.ResponseMeta
		meta.Usage = usage
		out.ResponseMeta = &meta
	}
	return &out
}

// decide asks the Session for the Decision on o, and shows it to the
// WithDecisions function.
func (m *ChatModel) decide(o erradvisor.Outcome, now time.Time) erradvisor.Decision {
	d := m.cfg.session.Decide(o, now)
	if m.cfg.observe != nil {
		m.cfg.observe(d)
	}
	return d
}

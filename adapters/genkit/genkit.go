// Package genkit wires erradvisor into Genkit for Go
// (github.com/firebase/genkit/go) as a model middleware.
//
// Middleware returns an ai.ModelMiddleware (pass it with ai.WithMiddleware,
// or wrap a model function with it) that, around every model call:
//
//   - adds the Session's advisory notes to the end of that request's
//     messages only (the request and its slices are never changed);
//   - on an error, classifies the failure once (Failure reads
//     core.GenkitError, core.UserFacingError and the Gemini SDK's
//     genai.APIError, whose google.rpc.RetryInfo states the wait of a
//     RESOURCE_EXHAUSTED), waits the Decision's delay, which honours that
//     wait, and retries a transient failure; compacts through the host's
//     Compactor and makes one fresh attempt on a context overflow; and
//     returns an *erradvisor.Error carrying the verdict when the Session says
//     Stop;
//   - reads the response's FinishReason (see StopReason) and, when the
//     Policy asks for it, continues a cut or empty turn with the Decision's
//     text as a hidden user message, a bounded number of times, returning
//     the joined answer.
//
// A streamed call is retried only while no chunk has reached the caller;
// a failure after that is returned as an *erradvisor.Error. Streamed turns
// are not continued.
package genkit

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/firebase/genkit/go/ai"
)

// Compactor compacts a conversation after a context overflow. It receives
// the messages of the failed request (a copy of the slice) and returns the
// messages of the fresh attempt.
type Compactor func(ctx context.Context, msgs []*ai.Message) ([]*ai.Message, error)

// DefaultMaxContinuations is the number of continuations and nudges one
// model call makes at most, unless WithMaxContinuations says otherwise. The
// Policy's own cap (MaxContinuations) applies as well.
const DefaultMaxContinuations = 4

// Option configures Middleware.
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

// WithSession makes the middleware decide with s instead of a Session of
// its own. The policy passed to Middleware is then unused.
func WithSession(s *erradvisor.Session) Option {
	return func(c *config) {
		if s != nil {
			c.session = s
		}
	}
}

// WithTarget names the provider id and model the middleware's requests go
// to. The provider id enables erradvisor's provider-specific rules
// ("gemini", "vertex", "openai", "anthropic", ...); the model is reported
// in notes. A model middleware does not see the model's name otherwise.
func WithTarget(provider, model string) Option {
	return func(c *config) { c.target = erradvisor.Target{Provider: provider, Model: model} }
}

// WithFailure replaces Failure as the function that describes a model
// error, for a plugin whose SDK error an adapter reads better (an SDK
// adapter's Failure, say). Fields it leaves empty are filled from
// WithTarget and the clock.
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
// limit (maxOutputTokens), in tokens; zero means not known. The Session
// needs them to tell a length stop that filled the window from one that
// came early.
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

// WithMaxContinuations bounds the continuations and nudges of one model
// call; zero or less turns them off. The default is
// DefaultMaxContinuations.
func WithMaxContinuations(n int) Option {
	return func(c *config) { c.maxContinuations = max(n, 0) }
}

// advisor is one middleware's configuration and the failure its last call
// gave up on, for the next call's notes.
type advisor struct {
	cfg config

	mu       sync.Mutex
	failed   erradvisor.Entry
	failedAt int
	hasFail  bool
}

// Middleware returns a model middleware that consults a new Session
// deciding under policy (or the one given with WithSession) around every
// model call. Make one per conversation: the Session counts retries,
// continuations and the one overflow recovery per user message. The
// middleware is safe for concurrent use, but concurrent calls share that
// state.
//
// Genkit applies it around the model action, inside the tool loop of
// genkit.Generate, so each model turn of a tool-calling conversation is
// decided on its own.
func Middleware(policy erradvisor.Policy, opts ...Option) ai.ModelMiddleware {
	a := &advisor{cfg: config{now: time.Now, maxContinuations: DefaultMaxContinuations}}
	for _, o := range opts {
		if o != nil {
			o(&a.cfg)
		}
	}
	if a.cfg.session == nil {
		a.cfg.session = erradvisor.NewSession(policy)
	}
	return func(next ai.ModelFunc) ai.ModelFunc {
		return func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			return a.call(ctx, next, req, cb)
		}
	}
}

// call runs one model call with its retries, recovery and continuations.
func (a *advisor) call(ctx context.Context, next ai.ModelFunc, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	if req == nil {
		return next(ctx, req, cb)
	}
	s := a.cfg.session
	msgs := req.Messages
	after := a.begin(msgs)
	var parts []*ai.ModelResponse
	continuations := 0
	for {
		r := *req
		r.Messages = a.withNotes(msgs)
		// sent says whether a chunk reached the caller; a model may stream
		// from a goroutine of its own.
		var sent atomic.Bool
		var wcb ai.ModelStreamCallback
		if cb != nil {
			wcb = func(ctx context.Context, chunk *ai.ModelResponseChunk) error {
				sent.Store(true)
				return cb(ctx, chunk)
			}
		}
		resp, err := next(ctx, &r, wcb)
		now := a.cfg.now()
		if err != nil {
			d := a.decide(a.failureOutcome(ctx, err, now), now)
			if sent.Load() && d.Action == erradvisor.Retry {
				// Part of the answer reached the caller: nothing is
				// repeated under it.
				s.Cancel(now)
				d.Action = erradvisor.Stop
			}
			if sent.Load() && d.Action == erradvisor.Compact {
				d.Action = erradvisor.Stop
			}
			nextMsgs, stop := a.onFailure(ctx, d, err, msgs, now)
			if stop != nil {
				return nil, stop
			}
			if d.Action == erradvisor.Compact {
				parts, after = nil, erradvisor.AfterUser
			}
			msgs = nextMsgs
			continue
		}
		a.clearFailure()
		d := a.decide(a.successOutcome(resp, after), now)
		switch d.Action {
		case erradvisor.Continue, erradvisor.Nudge:
			if cb != nil || continuations >= a.cfg.maxContinuations || resp == nil {
				return withRequest(join(parts, resp), req), nil
			}
			continuations++
			parts = append(parts, resp)
			msgs = appendTurn(msgs, resp.Message, d.Text)
			after = erradvisor.AfterContinuation
			continue
		case erradvisor.Compact:
			if d.Compaction == erradvisor.CompactionOverflow && !sent.Load() {
				if nextMsgs, ok := a.recover(ctx, msgs, now); ok {
					msgs, parts, after = nextMsgs, nil, erradvisor.AfterUser
					continue
				}
			}
		}
		return withRequest(join(parts, resp), req), nil
	}
}

// onFailure acts on the Decision d about err, a failed call with messages
// msgs. It returns the messages of the next attempt, or the error to
// return.
func (a *advisor) onFailure(ctx context.Context, d erradvisor.Decision, err error, msgs []*ai.Message, now time.Time) ([]*ai.Message, error) {
	switch d.Action {
	case erradvisor.Retry:
		if werr := erradvisor.Wait(ctx, d.Delay); werr != nil {
			a.cfg.session.Cancel(a.cfg.now())
			return nil, &erradvisor.Error{Err: errors.Join(werr, err), Classification: erradvisor.ClassifyError(werr)}
		}
		return msgs, nil
	case erradvisor.Compact:
		if next, ok := a.recover(ctx, msgs, now); ok {
			return next, nil
		}
	}
	c := d.Classification
	if c == (erradvisor.Classification{}) {
		c = erradvisor.ClassifyError(err)
	}
	if c.Class != erradvisor.Canceled {
		a.recordFailure(err, c, len(msgs), now)
	}
	return nil, &erradvisor.Error{Err: err, Classification: c}
}

// begin records a user message when msgs ends with one, and says what
// precedes the coming turn.
func (a *advisor) begin(msgs []*ai.Message) erradvisor.Preceding {
	if len(msgs) == 0 || msgs[len(msgs)-1] == nil {
		return erradvisor.AfterOther
	}
	switch msgs[len(msgs)-1].Role {
	case ai.RoleUser:
		a.cfg.session.UserMessage(a.cfg.now())
		return erradvisor.AfterUser
	case ai.RoleTool:
		return erradvisor.AfterToolResult
	}
	return erradvisor.AfterOther
}

// withNotes returns msgs with the Session's notes added: as text parts of
// a copy of the last message when that is a user message (some providers
// want user and model turns to alternate), else as a new user message. It
// returns msgs itself when there are no notes.
func (a *advisor) withNotes(msgs []*ai.Message) []*ai.Message {
	a.mu.Lock()
	failed, failedAt, hasFail := a.failed, a.failedAt, a.hasFail
	a.mu.Unlock()
	notes := a.cfg.session.Notes(a.cfg.now(), a.cfg.target, view(msgs, failed, failedAt, hasFail))
	if len(notes) == 0 {
		return msgs
	}
	parts := make([]*ai.Part, len(notes))
	for i, n := range notes {
		parts[i] = ai.NewTextPart(n.Text)
	}
	out := make([]*ai.Message, len(msgs), len(msgs)+1)
	copy(out, msgs)
	if last := len(out) - 1; last >= 0 && out[last] != nil && out[last].Role == ai.RoleUser {
		m := *out[last]
		m.Content = append(append(make([]*ai.Part, 0, len(m.Content)+len(parts)), m.Content...), parts...)
		out[last] = &m
		return out
	}
	return append(out, ai.NewUserMessage(parts...))
}

// recover runs the host's compaction for an overflow recovery, reporting it
// to the Session, and returns the messages of the fresh attempt.
func (a *advisor) recover(ctx context.Context, msgs []*ai.Message, now time.Time) ([]*ai.Message, bool) {
	if a.cfg.compact == nil {
		return nil, false
	}
	s := a.cfg.session
	s.CompactionStarted(erradvisor.CompactionOverflow, now)
	next, err := a.cfg.compact(ctx, append([]*ai.Message(nil), msgs...))
	var res *erradvisor.CompactionResult
	if err == nil {
		if len(next) == 0 {
			err = errors.New("the compaction returned no messages")
		} else {
			res = &erradvisor.CompactionResult{TokensBefore: estimate(msgs), EstimatedTokensAfter: estimate(next)}
		}
	}
	end := s.CompactionEnded(res, err, a.cfg.now())
	return next, end.WillRetry
}

// estimate is a rough token count of the text in msgs (four characters a
// token), so that a compaction that did not shrink them is not retried.
func estimate(msgs []*ai.Message) int {
	n := 0
	for _, m := range msgs {
		if m == nil {
			continue
		}
		for _, p := range m.Content {
			if p != nil {
				n += len(p.Text)
			}
		}
	}
	return n/4 + 1
}

// failureOutcome describes the failed call's err as an Outcome.
func (a *advisor) failureOutcome(ctx context.Context, err error, now time.Time) erradvisor.Outcome {
	t := a.cfg.target
	describe := a.cfg.failure
	if describe == nil {
		describe = Failure
	}
	f := describe(err)
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
func (a *advisor) successOutcome(resp *ai.ModelResponse, after erradvisor.Preceding) erradvisor.Outcome {
	t := a.cfg.target
	o := erradvisor.Outcome{
		Stop:     erradvisor.StopUnknown,
		Provider: t.Provider, Model: t.Model, CurrentModel: t.Model,
		Content: erradvisor.ContentNone,
		After:   after,
		Usage:   erradvisor.TokenUsage{ContextWindow: a.cfg.contextWindow, MaxOutput: a.cfg.maxOutput},
	}
	if resp == nil {
		return o
	}
	o.Stop = StopReason(resp.FinishReason)
	o.Content = Content(resp.Message)
	if u := resp.Usage; u != nil {
		cached := min(max(u.CachedContentTokens, 0), u.InputTokens)
		o.Usage.Input = u.InputTokens - cached
		o.Usage.CacheRead = cached
		// Gemini counts thinking against maxOutputTokens.
		o.Usage.Output = u.OutputTokens + u.ThoughtsTokens
	}
	return o
}

// Content says what msg, a model message, produced: text (or media or
// data), tool requests, reasoning.
func Content(msg *ai.Message) erradvisor.Content {
	if msg == nil {
		return erradvisor.ContentNone
	}
	var c erradvisor.Content
	for _, p := range msg.Content {
		switch {
		case p == nil:
		case p.IsToolRequest():
			c |= erradvisor.ContentToolCalls
		case p.IsReasoning():
			if p.Text != "" {
				c |= erradvisor.ContentThinking
			}
		case p.IsMedia(), p.IsData(), p.IsCustom(), p.IsResource():
			c |= erradvisor.ContentText
		case p.Text != "":
			c |= erradvisor.ContentText
		}
	}
	if c == 0 {
		c = erradvisor.ContentNone
	}
	return c
}

// StopReason maps a Genkit finish reason to an erradvisor.StopReason:
//
//   - "stop": StopEndTurn;
//   - "length": StopLength;
//   - "blocked" (Gemini SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT,
//     SPII, ... in the googlegenai plugin): StopRefused;
//   - "interrupted": StopToolUse. Genkit sets it when a tool call was
//     interrupted for the application to resolve (a confirmation, say): the
//     turn ended on tool requests, as intended;
//   - "other" (Gemini MALFORMED_FUNCTION_CALL, OTHER, ...), "unknown", the
//     empty string and anything else: StopUnknown, never a normal end.
func StopReason(r ai.FinishReason) erradvisor.StopReason {
	switch r {
	case ai.FinishReasonStop:
		return erradvisor.StopEndTurn
	case ai.FinishReasonLength:
		return erradvisor.StopLength
	case ai.FinishReasonBlocked:
		return erradvisor.StopRefused
	case ai.FinishReasonInterrupted:
		return erradvisor.StopToolUse
	}
	return erradvisor.StopUnknown
}

// recordFailure keeps the failure a call gave up on, for the notes of the
// next call.
func (a *advisor) recordFailure(err error, c erradvisor.Classification, at int, now time.Time) {
	t := a.cfg.target
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failed = erradvisor.Entry{
		Kind: erradvisor.EntryAssistant, StopReason: erradvisor.StopError,
		ErrorMessage: a.failureText(err), Classification: c,
		Provider: t.Provider, Model: t.Model, Time: now,
	}
	a.failedAt, a.hasFail = at, true
}

// failureText is the text a note quotes for err: the Failure's message (the
// error's body or message), else the error's text.
func (a *advisor) failureText(err error) string {
	describe := a.cfg.failure
	if describe == nil {
		describe = Failure
	}
	if f := describe(err); f.Message != "" {
		return f.Message
	}
	return err.Error()
}

func (a *advisor) clearFailure() {
	a.mu.Lock()
	a.hasFail = false
	a.mu.Unlock()
}

// view describes msgs to the Session, newest first, with the failed call
// (when there is one) after the first failedAt messages.
func view(msgs []*ai.Message, failed erradvisor.Entry, failedAt int, hasFail bool) iter.Seq[erradvisor.Entry] {
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

// entry describes one Genkit message to the Session.
func entry(m *ai.Message) erradvisor.Entry {
	if m == nil {
		return erradvisor.Entry{}
	}
	switch m.Role {
	case ai.RoleUser:
		return erradvisor.Entry{Kind: erradvisor.EntryUser}
	case ai.RoleTool:
		return erradvisor.Entry{Kind: erradvisor.EntryToolResult}
	case ai.RoleModel:
		return erradvisor.Entry{Kind: erradvisor.EntryAssistant, Content: Content(m)}
	}
	return erradvisor.Entry{}
}

// appendTurn returns a copy of msgs followed by out (when it holds
// anything) and the hidden user message text (when not empty).
func appendTurn(msgs []*ai.Message, out *ai.Message, text string) []*ai.Message {
	next := make([]*ai.Message, len(msgs), len(msgs)+2)
	copy(next, msgs)
	if out != nil && Content(out) != erradvisor.ContentNone {
		next = append(next, out)
	}
	if text != "" {
		next = append(next, ai.NewUserTextMessage(text))
	}
	return next
}

// join returns the response of a turn made of parts (continued turns) and
// last: the message parts of all, in order, and last's finish reason and
// metadata, with the token counts summed.
func join(parts []*ai.ModelResponse, last *ai.ModelResponse) *ai.ModelResponse {
	if len(parts) == 0 || last == nil {
		return last
	}
	out := *last
	msg := &ai.Message{Role: ai.RoleModel}
	if last.Message != nil {
		msg.Role, msg.Metadata = last.Message.Role, last.Message.Metadata
	}
	var usage *ai.GenerationUsage
	for _, p := range append(parts, last) {
		if p == nil {
			continue
		}
		if p.Message != nil {
			msg.Content = append(msg.Content, p.Message.Content...)
		}
		if u := p.Usage; u != nil {
			if usage == nil {
				usage = &ai.GenerationUsage{}
			}
			usage.InputTokens += u.InputTokens
			usage.OutputTokens += u.OutputTokens
			usage.ThoughtsTokens += u.ThoughtsTokens
			usage.CachedContentTokens += u.CachedContentTokens
			usage.TotalTokens += u.TotalTokens
		}
	}
	out.Message, out.Usage = msg, usage
	return &out
}

// decide asks the Session for the Decision on o, and shows it to the
// WithDecisions function.
func (a *advisor) decide(o erradvisor.Outcome, now time.Time) erradvisor.Decision {
	d := a.cfg.session.Decide(o, now)
	if a.cfg.observe != nil {
		a.cfg.observe(d)
	}
	return d
}

// withRequest returns resp with its Request set to req, the request as the
// middleware received it, when the model set one: models (the googlegenai
// plugin's among them) record the request they were sent, notes included,
// and ModelResponse.History is built from it. Notes belong to one request
// only and must not reach a history the caller keeps.
func withRequest(resp *ai.ModelResponse, req *ai.ModelRequest) *ai.ModelResponse {
	if resp == nil || resp.Request == nil || resp.Request == req {
		return resp
	}
	out := *resp
	out.Request = req
	return &out
}

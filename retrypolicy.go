package erradvisor

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Unlimited, as Policy.MaxRetries or Policy.MaxContinuations, removes the
// limit.
const Unlimited = -1

// Default values the presets use, taken from the reference agent and its
// extensions.
const (
	// DefaultBaseDelay is the delay before the first retry.
	DefaultBaseDelay = 2 * time.Second
	// DefaultMaxDelay caps each computed delay. The presets also honour
	// server-requested waits up to it, and no longer.
	DefaultMaxDelay = 60 * time.Second
	// DefaultMultiplier is the growth factor of the delay between retries.
	DefaultMultiplier = 2.0
	// DefaultJitterFraction is the largest share of a delay that
	// JitterProportional removes, as the official provider SDKs do.
	DefaultJitterFraction = 0.25
	// DefaultMinRemainingTokens is the context, in tokens, that must remain
	// free for a length stop to be continued rather than left to compaction.
	DefaultMinRemainingTokens = 16384
	// DefaultMaxContinuations is the cap on automatic continuations that a
	// zero Policy.MaxContinuations stands for.
	DefaultMaxContinuations = 99
	// DefaultContinueText is the hidden user message sent to continue or
	// nudge a turn.
	DefaultContinueText = "continue"
)

// Jitter selects how a backoff delay is randomised.
type Jitter uint8

// The jitter modes.
const (
	// JitterNone uses the computed delay as is.
	JitterNone Jitter = iota
	// JitterProportional removes up to Policy.JitterFraction of the delay.
	JitterProportional
	// JitterFull picks a delay uniformly between zero and the computed delay.
	JitterFull
)

// String returns "none", "proportional" or "full".
func (j Jitter) String() string {
	switch j {
	case JitterNone:
		return "none"
	case JitterProportional:
		return "proportional"
	case JitterFull:
		return "full"
	}
	return "jitter(" + strconv.Itoa(int(j)) + ")"
}

// ClassSet is a set of classes, one bit per Class.
type ClassSet uint16

// Classes returns the set holding cs.
func Classes(cs ...Class) ClassSet {
	var s ClassSet
	for _, c := range cs {
		if c.Valid() {
			s |= 1 << c
		}
	}
	return s
}

// Has reports whether c is in s.
func (s ClassSet) Has(c Class) bool { return c.Valid() && s&(1<<c) != 0 }

// Policy says which turns a Retrier repeats, recovers, continues or stops.
// It is plain data: copy it, compare it, edit a preset's fields.
//
// The zero Policy automates nothing: every failure but an abort is a Stop
// that says why, every other turn is None, and delays are zero. Conservative and Persistent
// return the two reference behaviours.
type Policy struct {
	// Retry holds the classes retried with backoff. Permanent, Quota and
	// Canceled are never retried, even when present.
	Retry ClassSet
	// MaxRetries is the number of retries in one streak of failures; 0
	// retries nothing and Unlimited (or any negative value) never gives up.
	MaxRetries int
	// BaseDelay is the delay before the first retry.
	BaseDelay time.Duration
	// MaxDelay caps each computed delay; zero or negative means no cap
	// beyond the largest Duration.
	MaxDelay time.Duration
	// Multiplier is the growth factor between delays; values below 1
	// (including zero and NaN) mean 2.
	Multiplier float64
	// Jitter selects the randomisation of delays.
	Jitter Jitter
	// JitterFraction is the largest share of a delay JitterProportional
	// removes; zero means DefaultJitterFraction, values above 1 mean 1.
	JitterFraction float64
	// MaxRetryAfter is the longest server-requested wait the Retrier honours.
	// A longer one is a Stop that states the wait. Zero means MaxDelay.
	MaxRetryAfter time.Duration

	// RecoverOverflow makes a context overflow a Compact: compact the
	// conversation, then one fresh attempt, at most once per user message and
	// only when the failing turn used the current model.
	RecoverOverflow bool
	// RecoverEarlyLength treats a length stop whose output stayed below the
	// model's intended maximum output as an overflow to recover from.
	RecoverEarlyLength bool
	// RetryStatuses lists HTTP statuses (such as 400 and 413) for which a
	// failure classified Overflow or Unknown is retried unchanged, as a
	// transient fault, instead of compacted or stopped.
	RetryStatuses []int

	// ContinueOnLength continues a length stop with ContinueText, as long as
	// more than MinRemainingTokens of the context window remain free.
	ContinueOnLength bool
	// MinRemainingTokens is that threshold. When the remaining context is at
	// or below it, the length stop is deferred to the host's compaction. Zero
	// disables the guard.
	MinRemainingTokens int
	// ContinueOnThinkingOnly continues a normal stop that produced only
	// thinking: no text, no tool calls.
	ContinueOnThinkingOnly bool
	// ContinueOnSilentStop continues a normal stop that produced nothing at
	// all right after a user message, a tool result or an automatic
	// continuation.
	ContinueOnSilentStop bool
	// MaxContinuations caps the automatic continuations between two user
	// messages; zero means DefaultMaxContinuations and Unlimited (or any
	// negative value) removes the cap. When the cap is reached the Retrier
	// stops.
	MaxContinuations int
	// ContinueText is the hidden user message a Continue carries; empty
	// means DefaultContinueText.
	ContinueText string

	// NudgeEmpty sends NudgeText once per user message after a normal stop
	// with no text and no tool calls that no continuation knob handled; a
	// second such stop is given up (None).
	NudgeEmpty bool
	// NudgeText is the hidden user message a Nudge carries; empty means
	// ContinueText.
	NudgeText string

	// DeferPatterns are case-insensitive substrings of error messages that
	// the host's own retry layer handles; a matching failure is a Defer.
	DeferPatterns []string
}

// Conservative returns the reference agent's policy: transient failures are
// retried up to 3 times after 2 s, 4 s and 8 s (each delay capped at 60 s,
// no jitter); an overflow or an early length stop gets one compact-and-retry
// per user message; quota, billing, permanent and unknown failures stop.
func Conservative() Policy {
	return Policy{
		Retry:              Classes(Transient),
		MaxRetries:         3,
		BaseDelay:          DefaultBaseDelay,
		MaxDelay:           DefaultMaxDelay,
		Multiplier:         DefaultMultiplier,
		Jitter:             JitterNone,
		MaxRetryAfter:      DefaultMaxDelay,
		RecoverOverflow:    true,
		RecoverEarlyLength: true,
		ContinueText:       DefaultContinueText,
	}
}

// Persistent returns the retry-everything policy: transient, billing and
// unknown failures are retried without limit, 2 s doubling to a 60 s cap (a
// top-up resumes a billing loop); overflow keeps its single recovery;
// length stops are continued without cap while more than 16384 tokens of
// context remain; an empty or thinking-only stop is nudged once. Permanent,
// quota and canceled failures are never retried. Retrying 400 and 413
// unchanged is available through RetryStatuses and off by default, since a
// genuine overflow retried unchanged never succeeds.
func Persistent() Policy {
	return Policy{
		Retry:              Classes(Transient, Billing, Unknown),
		MaxRetries:         Unlimited,
		BaseDelay:          DefaultBaseDelay,
		MaxDelay:           DefaultMaxDelay,
		Multiplier:         DefaultMultiplier,
		Jitter:             JitterNone,
		MaxRetryAfter:      DefaultMaxDelay,
		RecoverOverflow:    true,
		RecoverEarlyLength: true,
		ContinueOnLength:   true,
		MinRemainingTokens: DefaultMinRemainingTokens,
		MaxContinuations:   Unlimited,
		ContinueText:       DefaultContinueText,
		NudgeEmpty:         true,
	}
}

// retries reports whether p retries class c.
func (p *Policy) retries(c Class) bool {
	switch c {
	case Permanent, Quota, Canceled:
		return false
	}
	return p.Retry.Has(c)
}

func (p *Policy) retryStatus(status int) bool {
	if status == 0 {
		return false
	}
	for _, s := range p.RetryStatuses {
		if s == status {
			return true
		}
	}
	return false
}

func (p *Policy) retryAfterCeiling() time.Duration {
	if p.MaxRetryAfter > 0 {
		return p.MaxRetryAfter
	}
	if p.MaxDelay > 0 {
		return p.MaxDelay
	}
	return math.MaxInt64
}

func (p *Policy) continueText() string {
	if p.ContinueText != "" {
		return p.ContinueText
	}
	return DefaultContinueText
}

func (p *Policy) nudgeText() string {
	if p.NudgeText != "" {
		return p.NudgeText
	}
	return p.continueText()
}

// Backoff returns the delay before retry number attempt (counting from 1)
// under p, with rnd, a value in [0, 1) from the host's random source, used
// by the jitter modes. It is a pure function: never negative, never above
// p.MaxDelay when that is positive, non-decreasing in attempt for a fixed rnd
// until it reaches the cap, and safe for any attempt. An attempt below 1 gives
// zero; rnd outside [0, 1) is clamped into it.
func Backoff(p Policy, attempt int, rnd float64) time.Duration {
	if attempt < 1 || p.BaseDelay <= 0 {
		return 0
	}
	limit := time.Duration(math.MaxInt64)
	if p.MaxDelay > 0 {
		limit = p.MaxDelay
	}
	mult := p.Multiplier
	if !(mult >= 1) { // also catches NaN
		mult = DefaultMultiplier
	}
	d := limit
	// With a factor of at least 2, 64 doublings of even 1ns exceed any
	// Duration: skip math.Pow, which is slow for large exponents.
	if mult < 2 || attempt <= 64 {
		if v := float64(p.BaseDelay) * math.Pow(mult, float64(attempt-1)); v < float64(limit) {
			d = time.Duration(v)
		}
	}
	if d < p.BaseDelay && p.BaseDelay <= limit {
		d = p.BaseDelay
	}
	switch {
	case !(rnd > 0): // also catches NaN
		rnd = 0
	case rnd >= 1:
		rnd = math.Nextafter(1, 0)
	}
	switch p.Jitter {
	case JitterProportional:
		frac := p.JitterFraction
		switch {
		case !(frac > 0):
			frac = DefaultJitterFraction
		case frac > 1:
			frac = 1
		}
		d -= scale(d, frac*rnd)
	case JitterFull:
		d = scale(d, rnd)
	}
	return max(d, 0)
}

// scale returns d*x for x in [0, 1] without overflowing.
func scale(d time.Duration, x float64) time.Duration {
	v := float64(d) * x
	if v >= float64(d) {
		return d
	}
	if v <= 0 {
		return 0
	}
	return time.Duration(v)
}

// Wait blocks for d or until ctx is done, whichever comes first. It returns
// nil after the full delay and ctx.Err() when ctx ends first; it stops its
// timer either way. A delay of zero or less returns ctx.Err() at once.
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Action is what the host does next.
type Action uint8

// The actions.
const (
	// None: nothing to do; the turn stands as it is.
	None Action = iota
	// Retry: wait Decision.Delay, then send the same request again.
	Retry
	// Compact: compact the conversation (reporting it to the tracker with
	// CompactionOverflow), then make one fresh attempt.
	Compact
	// Continue: send Decision.Text as a hidden user message to let the model
	// carry on.
	Continue
	// Nudge: send Decision.Text once as a hidden user message after a turn
	// that produced nothing usable.
	Nudge
	// Stop: do not repeat the request; report Decision.Explain to the user.
	Stop
	// Defer: leave the turn to another mechanism of the host (its own retry
	// layer or its threshold compaction).
	Defer

	numActions
)

var actionNames = [numActions]string{
	None:     "none",
	Retry:    "retry",
	Compact:  "compact",
	Continue: "continue",
	Nudge:    "nudge",
	Stop:     "stop",
	Defer:    "defer",
}

// String returns the lower-case name of the action.
func (a Action) String() string {
	if a < numActions {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// StopReason is how an assistant turn ended, in the reference agent's terms.
type StopReason uint8

// The stop reasons. The zero value is StopEndTurn.
const (
	// StopEndTurn: the model ended its turn normally ("stop").
	StopEndTurn StopReason = iota
	// StopLength: the output hit a token limit ("length").
	StopLength
	// StopToolUse: the turn ended with tool calls ("toolUse").
	StopToolUse
	// StopError: the request failed ("error").
	StopError
	// StopAborted: the user aborted the request ("aborted").
	StopAborted
	// StopRefused: the response ended without an answer because the model
	// refused or a content filter or safety check cut it (Anthropic
	// "refusal", OpenAI "content_filter", Gemini "SAFETY", "RECITATION",
	// "BLOCKLIST", "PROHIBITED_CONTENT"). Repeating the request gives the
	// same answer.
	StopRefused
	// StopPaused: the provider paused a long-running turn and expects the
	// conversation to be sent again as it is to let the model carry on
	// (Anthropic "pause_turn").
	StopPaused
	// StopContextWindow: generation stopped because the context window was
	// full (Anthropic "model_context_window_exceeded", Bedrock's context
	// window stop). It is read as a context overflow.
	StopContextWindow
	// StopUnknown: the provider gave a stop or finish reason the host does
	// not recognise, or one that marks an unusable turn (Gemini
	// "MALFORMED_FUNCTION_CALL", "OTHER"). It is never read as a normal end.
	StopUnknown
)

// String returns the reference agent's name: "stop", "length", "toolUse",
// "error" or "aborted"; and "refused", "paused", "contextWindow" or
// "unknown" for the reasons the reference agent does not have.
func (s StopReason) String() string {
	switch s {
	case StopEndTurn:
		return "stop"
	case StopLength:
		return "length"
	case StopToolUse:
		return "toolUse"
	case StopError:
		return "error"
	case StopAborted:
		return "aborted"
	case StopRefused:
		return "refused"
	case StopPaused:
		return "paused"
	case StopContextWindow:
		return "contextWindow"
	case StopUnknown:
		return "unknown"
	}
	return "stopReason(" + strconv.Itoa(int(s)) + ")"
}

// Preceding is the message just before the assistant turn.
type Preceding uint8

// The kinds of preceding message. The zero value is AfterOther.
const (
	// AfterOther: anything else, or not known.
	AfterOther Preceding = iota
	// AfterUser: a message the user typed.
	AfterUser
	// AfterToolResult: a tool result.
	AfterToolResult
	// AfterContinuation: a hidden continuation or nudge sent on a Decision.
	AfterContinuation
)

// TokenUsage is the token accounting of one assistant turn. Zero means not
// known.
type TokenUsage struct {
	// Input is the number of uncached prompt tokens.
	Input int
	// CacheRead is the number of prompt tokens read from the cache.
	CacheRead int
	// Output is the number of generated tokens.
	Output int
	// ContextWindow is the model's context window.
	ContextWindow int
	// MaxOutput is the output limit the request asked for.
	MaxOutput int
}

// Used returns the tokens the turn occupied in the context window.
func (u TokenUsage) Used() int { return u.Input + u.CacheRead + u.Output }

// Outcome is one assistant turn as the Retrier needs to see it. The host fills
// it from its own message.
type Outcome struct {
	// Stop is how the turn ended.
	Stop StopReason
	// Classification is the verdict on the failure when Stop is StopError.
	Classification Classification
	// Status is the HTTP status of the failure, or 0.
	Status int
	// Message is the error text of the failure; it goes into events and is
	// matched against Policy.DeferPatterns.
	Message string
	// Provider is the provider id of the turn.
	Provider string
	// Model is the model the turn used.
	Model string
	// CurrentModel is the model the next request will use. When both Model
	// and CurrentModel are set and differ, no overflow recovery is attempted.
	CurrentModel string
	// Usage is the turn's token accounting.
	Usage TokenUsage
	// HasText reports visible text in the turn.
	HasText bool
	// HasToolCalls reports tool calls in the turn.
	HasToolCalls bool
	// HasThinking reports thinking content in the turn.
	HasThinking bool
	// After is the kind of message before the turn.
	After Preceding
}

// cause says why a Decision was taken; Explain turns it into text.
type cause uint8

const (
	causeNone cause = iota
	causeSuccess
	causeAborted
	causeCanceledRetry
	causeRetry
	causeExhausted
	causeNotRetried
	causeQuota
	causeWaitTooLong
	causeCompactOverflow
	causeCompactLength
	causeRecoverySpent
	causeModelChanged
	causeNoRecovery
	causeDeferPattern
	causeLengthLowContext
	causeContinueLength
	causeContinueThinking
	causeContinueSilent
	causeContinuationCap
	causeNudge
	causeNudgeSpent
	causeLengthStop
	causeOverWindow
)

// Decision is the Retrier's answer to one Outcome.
//
// Decisions are values; building one does not allocate. The text of
// Explain, LogValue and the slice of Events are built when asked for.
type Decision struct {
	// Action is what to do.
	Action Action
	// Delay is how long to wait before a Retry.
	Delay time.Duration
	// Attempt is the retry number for Retry and Stop after retries, and the
	// continuation number for Continue and Nudge; it counts from 1.
	Attempt int
	// Max is the policy's limit for Attempt, or 0 when there is none.
	Max int
	// Classification is the failure's classification, when there was one.
	Classification Classification
	// Text is the hidden user message for Continue and Nudge.
	Text string
	// Compaction is the reason to report for a Compact: CompactionOverflow
	// for a recovery, after which the request is retried once (the end
	// event's WillRetry says so), and CompactionThreshold for a successful
	// turn whose usage already exceeded the context window, which is
	// compacted without a retry. Pass it to CompactionTracker.Started.
	Compaction CompactionReason

	cause     cause
	limit     time.Duration // the ceiling a server-requested wait exceeded
	remaining int           // tokens left in the window for a deferred length stop
	threshold int
	detail    string // the matched defer pattern, or the failing model
	current   string // the current model
	at        time.Time
	ev        eventSlots
}

// eventSlots holds the events of one Decision without boxing them.
type eventSlots struct {
	hasStart bool
	hasEnd   bool
	start    AutoRetryStart
	end      AutoRetryEnd
}

// Events returns the lifecycle events that belong to d, ready to stream:
// auto_retry_start for a Retry, and auto_retry_end when d closes a streak of
// retries (success true on the first turn that succeeds; false with
// finalError when the retries are exhausted, the next failure is not retried,
// or the user aborts). It returns nil when there are none.
func (d Decision) Events() []Event {
	return d.AppendEvents(nil)
}

// AppendEvents appends d's events to dst and returns the extended slice.
func (d Decision) AppendEvents(dst []Event) []Event {
	if d.ev.hasEnd {
		dst = append(dst, d.ev.end)
	}
	if d.ev.hasStart {
		dst = append(dst, d.ev.start)
	}
	return dst
}

// RetryStart returns the auto_retry_start event of a Retry.
func (d Decision) RetryStart() (AutoRetryStart, bool) { return d.ev.start, d.ev.hasStart }

// RetryEnd returns the auto_retry_end event that closes a streak of retries.
func (d Decision) RetryEnd() (AutoRetryEnd, bool) { return d.ev.end, d.ev.hasEnd }

// Explain returns a one-line human reason for d, such as "retries exhausted
// after 3 attempts: overloaded" or "quota: resets at 15:00 UTC". It is
// meant for Stop and Defer, and says something for every action.
func (d Decision) Explain() string {
	c := d.Classification
	switch d.cause {
	case causeSuccess:
		return "turn succeeded"
	case causeAborted:
		return "aborted by the user"
	case causeCanceledRetry:
		return "retry cancelled"
	case causeRetry:
		return fmt.Sprintf("%s: retry %s in %s", failureName(c), ofMax(d.Attempt, d.Max), shortDuration(d.Delay))
	case causeExhausted:
		return fmt.Sprintf("retries exhausted after %d attempts: %s", d.Attempt, failureName(c))
	case causeNotRetried:
		if c.Class == Unknown {
			return "unrecognised error: not retried by this policy"
		}
		return classAndReason(c) + ", not retried"
	case causeQuota:
		s := classAndReason(c)
		if !c.ResetAt.IsZero() {
			s += ", resets " + resetPhrase(c.ResetAt, d.at)
		}
		return s
	case causeWaitTooLong:
		return fmt.Sprintf("server asked to wait %s, above the %s ceiling", shortDuration(c.RetryAfter), shortDuration(d.limit))
	case causeCompactOverflow:
		return "context overflow: compact, then one fresh attempt"
	case causeCompactLength:
		return "early length stop: compact, then one fresh attempt"
	case causeRecoverySpent:
		return "context overflow again: the recovery for this user message was already used"
	case causeModelChanged:
		return fmt.Sprintf("context overflow on %s, but the current model is %s: not compacted", d.detail, d.current)
	case causeNoRecovery:
		return "context overflow: this policy does not compact"
	case causeDeferPattern:
		return fmt.Sprintf("left to the host's retry layer (matches %q)", d.detail)
	case causeLengthLowContext:
		return fmt.Sprintf("length stop with %d tokens of context left, not above %d: left to compaction", d.remaining, d.threshold)
	case causeContinueLength:
		return "length stop: continue " + ofMax(d.Attempt, d.Max)
	case causeContinueThinking:
		return "thinking-only stop: continue " + ofMax(d.Attempt, d.Max)
	case causeContinueSilent:
		return "silent stop: continue " + ofMax(d.Attempt, d.Max)
	case causeContinuationCap:
		return fmt.Sprintf("automatic continuation limit reached (%d)", d.Max)
	case causeNudge:
		if d.detail != "" {
			return d.detail + " stop: nudge once"
		}
		return "empty stop: nudge once"
	case causeNudgeSpent:
		return "empty stop again after a nudge: given up"
	case causeLengthStop:
		return "output limit reached"
	case causeOverWindow:
		return "the turn's usage exceeded the context window: compact, no retry"
	}
	return d.Action.String()
}

func failureName(c Classification) string {
	if c.Reason != "" {
		return string(c.Reason)
	}
	return c.Class.String()
}

// classAndReason prints "quota: usage_limit", or "quota" alone when the
// reason says no more than the class.
func classAndReason(c Classification) string {
	name := c.Class.String()
	if c.Reason == "" || string(c.Reason) == name {
		return name
	}
	return name + ": " + string(c.Reason)
}

func ofMax(n, limit int) string {
	if limit > 0 {
		return strconv.Itoa(n) + " of " + strconv.Itoa(limit)
	}
	return strconv.Itoa(n)
}

// shortDuration prints whole seconds up to two minutes as "60s" and longer
// durations without trailing zero units ("3h", "1h30m").
func shortDuration(d time.Duration) string {
	if d >= 0 && d <= 2*time.Minute && d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func resetPhrase(at, now time.Time) string {
	u := at.UTC()
	if !now.IsZero() && u.Sub(now) < 24*time.Hour && u.Sub(now) > -24*time.Hour {
		return "at " + u.Format("15:04 MST")
	}
	return "at " + u.Format("2006-01-02 15:04 MST")
}

// LogValue implements slog.LogValuer: the action, the non-zero fields and
// the explanation.
func (d Decision) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("action", d.Action.String()))
	if d.Delay > 0 {
		attrs = append(attrs, slog.Duration("delay", d.Delay))
	}
	if d.Attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", d.Attempt))
	}
	if d.Max > 0 {
		attrs = append(attrs, slog.Int("max", d.Max))
	}
	if d.Classification != (Classification{}) {
		attrs = append(attrs, slog.Any("classification", d.Classification))
	}
	attrs = append(attrs, slog.String("why", d.Explain()))
	return slog.GroupValue(attrs...)
}

// RetrierOption configures a Retrier.
type RetrierOption func(*Retrier)

// WithTracker makes the Retrier share t, for example with an Advisor built
// first. Without it, NewRetrier creates a tracker.
func WithTracker(t *CompactionTracker) RetrierOption {
	return func(r *Retrier) {
		if t != nil {
			r.tracker = t
		}
	}
}

// WithRand sets the random source for jitter: a function returning values in
// [0, 1). Without it, the Retrier uses math/rand/v2's Float64.
func WithRand(f func() float64) RetrierOption {
	return func(r *Retrier) {
		if f != nil {
			r.rnd = f
		}
	}
}

// Retrier is the per-session state machine that turns each Outcome into a
// Decision: it counts the current streak of retries and the continuations
// since the last user message, and claims overflow recoveries from its
// CompactionTracker.
//
// A Retrier is not safe for concurrent use: a session's request loop calls it
// from one goroutine at a time. Its tracker is safe to share. The zero
// Retrier behaves as NewRetrier(Policy{}).
type Retrier struct {
	p       Policy
	tracker *CompactionTracker
	rnd     func() float64

	attempt       int  // retries in the current streak
	continuations int  // automatic continuations since the last user message
	nudged        bool // the nudge of this user message was spent
}

// NewRetrier returns a Retrier for p.
func NewRetrier(p Policy, opts ...RetrierOption) *Retrier {
	r := &Retrier{p: p}
	for _, o := range opts {
		o(r)
	}
	r.ensure()
	return r
}

// ensure gives a zero Retrier its tracker and random source.
func (r *Retrier) ensure() {
	if r.tracker == nil {
		r.tracker = NewCompactionTracker()
	}
	if r.rnd == nil {
		r.rnd = rand.Float64
	}
}

// Policy returns the policy r applies.
func (r *Retrier) Policy() Policy { return r.p }

// Tracker returns the compaction tracker r claims recoveries from. Pass it to
// the session's Advisor and report compactions to it.
func (r *Retrier) Tracker() *CompactionTracker {
	r.ensure()
	return r.tracker
}

// Attempt returns the number of retries in the current streak.
func (r *Retrier) Attempt() int { return r.attempt }

// UserMessage records a new user message: the continuation count and the
// nudge start over, and the tracker's recovery latch is re-armed (so an
// Advisor sharing the tracker needs no UserTurn call of its own).
func (r *Retrier) UserMessage() {
	r.ensure()
	r.continuations = 0
	r.nudged = false
	r.tracker.UserTurn()
}

// Cancel records that the user aborted during a retry's backoff. When a
// streak of retries was under way, the returned None decision carries
// auto_retry_end with success false and finalError "Retry cancelled"; the
// streak is over either way.
func (r *Retrier) Cancel() Decision {
	d := Decision{Action: None, cause: causeCanceledRetry}
	r.closeStreak(&d, false, "Retry cancelled")
	return d
}

// closeStreak ends the current streak of retries, recording its end event
// on d when there was one. A failure without text ends as "Retry failed".
func (r *Retrier) closeStreak(d *Decision, success bool, finalError string) {
	if r.attempt > 0 {
		d.ev.hasEnd = true
		d.ev.end = AutoRetryEnd{Success: success, Attempt: r.attempt}
		if !success {
			d.ev.end.FinalError = finalError
			if finalError == "" {
				d.ev.end.FinalError = "Retry failed"
			}
		}
	}
	r.attempt = 0
}

// Decide turns the outcome of the latest assistant turn into a Decision. now
// is the host's clock; it anchors the wording of reset times.
func (r *Retrier) Decide(o Outcome, now time.Time) Decision {
	r.ensure()
	switch o.Stop {
	case StopAborted:
		d := Decision{Action: None, cause: causeAborted, Classification: o.Classification}
		r.closeStreak(&d, false, "Retry cancelled")
		return d
	case StopError:
		return r.onError(o, now)
	case StopLength:
		d := Decision{cause: causeLengthStop}
		r.closeStreak(&d, true, "")
		r.onLength(o, &d)
		return d
	}
	d := Decision{Action: None, cause: causeSuccess}
	r.closeStreak(&d, true, "")
	if u := o.Usage; r.p.RecoverOverflow && u.ContextWindow > 0 && u.Used() > u.ContextWindow && sameModel(o) {
		// The answer is kept; the next request would overflow.
		d.Action, d.cause, d.Compaction = Compact, causeOverWindow, CompactionThreshold
		return d
	}
	if o.Stop == StopEndTurn && !o.HasText && !o.HasToolCalls {
		r.onEmpty(o, &d)
	}
	return d
}

func (r *Retrier) onError(o Outcome, now time.Time) Decision {
	c := o.Classification
	d := Decision{Classification: c, at: now}
	if c.Class == Canceled {
		d.Action, d.cause = None, causeAborted
		r.closeStreak(&d, false, "Retry cancelled")
		return d
	}
	if p := matchPattern(o.Message, r.p.DeferPatterns); p != "" {
		d.Action, d.cause, d.detail = Defer, causeDeferPattern, p
		return d
	}
	retryable := r.p.retries(c.Class)
	if (c.Class == Overflow || c.Class == Unknown) && r.p.retryStatus(o.Status) {
		retryable = true
	}
	switch {
	case retryable:
		r.retry(o, &d)
		return d
	case c.Class == Overflow:
		r.closeStreak(&d, false, o.Message)
		r.recover(o, &d)
		return d
	case c.Class == Quota || c.Class == Billing:
		d.cause = causeQuota
	default:
		d.cause = causeNotRetried
	}
	d.Action = Stop
	r.closeStreak(&d, false, o.Message)
	return d
}

// retry fills d with the next retry of the streak, or a Stop when the streak
// is exhausted or the server asks for too long a wait.
func (r *Retrier) retry(o Outcome, d *Decision) {
	c := o.Classification
	limit := r.p.MaxRetries
	if limit < 0 {
		limit = 0 // no limit; 0 is also how events say so
	} else if r.attempt >= limit {
		d.Action, d.cause = Stop, causeExhausted
		d.Attempt, d.Max = r.attempt, limit
		r.closeStreak(d, false, o.Message)
		return
	}
	if ceiling := r.p.retryAfterCeiling(); c.RetryAfter > ceiling {
		d.Action, d.cause, d.limit = Stop, causeWaitTooLong, ceiling
		r.closeStreak(d, false, o.Message)
		return
	}
	next := r.attempt + 1
	var rnd float64
	if r.p.Jitter != JitterNone {
		rnd = r.rnd()
	}
	delay := max(Backoff(r.p, next, rnd), c.RetryAfter)
	r.attempt = next
	*d = Decision{
		Action: Retry, Delay: delay, Attempt: next, Max: limit,
		Classification: c, cause: causeRetry, at: d.at,
	}
	d.ev.hasStart = true
	d.ev.start = AutoRetryStart{
		Attempt: next, MaxAttempts: limit,
		DelayMs: delay.Milliseconds(), ErrorMessage: o.Message,
	}
}

// recover fills d with a Compact for an overflow when the policy, the models
// and the recovery latch allow one, and with a Stop that says why not
// otherwise.
func (r *Retrier) recover(o Outcome, d *Decision) {
	switch {
	case !r.p.RecoverOverflow:
		d.Action, d.cause = Stop, causeNoRecovery
	case !sameModel(o):
		d.Action, d.cause, d.detail, d.current = Stop, causeModelChanged, o.Model, o.CurrentModel
	case !r.tracker.ClaimRecovery():
		d.Action, d.cause = Stop, causeRecoverySpent
	default:
		d.Action, d.cause, d.Compaction = Compact, causeCompactOverflow, CompactionOverflow
	}
}

// sameModel reports whether the failing turn used the current model, as far
// as the host said.
func sameModel(o Outcome) bool {
	return o.Model == "" || o.CurrentModel == "" || o.Model == o.CurrentModel
}

// onLength decides a length stop: an early one is recovered like an overflow
// when the latch allows, a genuine one (or an early one that cannot be
// recovered) is continued when the policy says so and context remains.
func (r *Retrier) onLength(o Outcome, d *Decision) {
	u := o.Usage
	early := u.MaxOutput > 0 && u.Output > 0 && u.Output < u.MaxOutput // 0 output: not known
	if early && r.p.RecoverEarlyLength && sameModel(o) && r.tracker.ClaimRecovery() {
		d.Action, d.cause, d.Compaction = Compact, causeCompactLength, CompactionOverflow
		return
	}
	if !r.p.ContinueOnLength {
		d.Action = None
		return
	}
	if m := r.p.MinRemainingTokens; m > 0 && u.ContextWindow > 0 {
		if left := u.ContextWindow - u.Used(); left <= m {
			d.Action, d.cause, d.remaining, d.threshold = Defer, causeLengthLowContext, left, m
			return
		}
	}
	r.continueTurn(d, causeContinueLength)
}

func (r *Retrier) onEmpty(o Outcome, d *Decision) {
	thinkingOnly := o.HasThinking
	switch {
	case thinkingOnly && r.p.ContinueOnThinkingOnly:
		r.continueTurn(d, causeContinueThinking)
		return
	case !thinkingOnly && r.p.ContinueOnSilentStop && o.After != AfterOther:
		r.continueTurn(d, causeContinueSilent)
		return
	}
	if !r.p.NudgeEmpty {
		return
	}
	if r.nudged {
		d.Action, d.cause = None, causeNudgeSpent
		return
	}
	r.nudged = true
	d.Action, d.cause, d.Text, d.Attempt, d.Max = Nudge, causeNudge, r.p.nudgeText(), 1, 1
	if thinkingOnly {
		d.detail = "thinking-only"
	}
}

func (r *Retrier) continueTurn(d *Decision, why cause) {
	limit := r.p.MaxContinuations
	if limit == 0 {
		limit = DefaultMaxContinuations
	}
	if limit < 0 {
		limit = 0
	} else if r.continuations >= limit {
		d.Action, d.cause, d.Attempt, d.Max = Stop, causeContinuationCap, r.continuations, limit
		return
	}
	r.continuations++
	d.Action, d.cause, d.Text = Continue, why, r.p.continueText()
	d.Attempt, d.Max = r.continuations, limit
}

// matchPattern returns the first pattern that occurs in s, ignoring case, or
// "" when none does. Empty patterns never match.
func matchPattern(s string, patterns []string) string {
	for _, p := range patterns {
		if p != "" && containsFold(s, p) {
			return p
		}
	}
	return ""
}

// containsFold reports whether sub occurs in s, ignoring case (letters
// whose folded forms differ in byte length excepted), without allocating.
func containsFold(s, sub string) bool {
	if len(sub) == 0 {
		return true
	}
	first := sub[0]
	ascii := first < 0x80
	if ascii {
		first = asciiLower(first)
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		// Two ASCII bytes fold together only when their lower cases match.
		if ascii && s[i] < 0x80 && asciiLower(s[i]) != first {
			continue
		}
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func asciiLower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

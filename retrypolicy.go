package erradvisor

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The Policy, its two presets and its defaults live here. The backoff
// schedule is in backoff.go, the Decision in decision.go and the state
// machine that applies a Policy in session.go.

// Unlimited, as a count or duration field of Policy (MaxRetries,
// MaxContinuations, MaxDelay, MaxRetryAfter, MaxRetryTime), removes that
// limit. A zero field means its default, never "no limit".
const Unlimited = -1

// The defaults a zero Policy field stands for. They are the reference
// agent's and its extensions' values.
const (
	// DefaultMaxRetries is the number of retries in one streak of failures.
	DefaultMaxRetries = 3
	// DefaultBaseDelay is the delay before the first retry.
	DefaultBaseDelay = 2 * time.Second
	// DefaultMaxDelay caps each computed delay, and is the longest
	// server-requested wait honoured unless MaxRetryAfter says otherwise.
	DefaultMaxDelay = 60 * time.Second
	// DefaultMaxRetryTime caps the time one streak of retries may take,
	// from its first failure.
	DefaultMaxRetryTime = time.Hour
	// DefaultMultiplier is the growth factor of the delay between retries.
	DefaultMultiplier = 2.0
	// DefaultJitterFraction is the largest share of a delay that
	// JitterProportional removes, as the official provider SDKs do.
	DefaultJitterFraction = 0.25
	// DefaultMinRemainingTokens is the context, in tokens, that must remain
	// free for a length stop to be continued rather than left to compaction.
	DefaultMinRemainingTokens = 16384
	// DefaultMaxContinuations caps the automatic continuations between two
	// user messages.
	DefaultMaxContinuations = 99
	// DefaultContinueText is the hidden user message sent to continue or
	// nudge a turn.
	DefaultContinueText = "continue"
	// DefaultMaxNotes caps the advisory notes of one request.
	DefaultMaxNotes = 2
	// DefaultErrorTTL is the age past which a failed request gives no note.
	DefaultErrorTTL = 15 * time.Minute
	// DefaultCommandTTL is the age past which a command failure gives no
	// note.
	DefaultCommandTTL = 3 * time.Minute
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

// Policy says which turns a Session repeats, recovers, continues or stops,
// and how many notes the next request carries. It is plain data: copy it,
// compare its fields, edit a preset's.
//
// A zero numeric or duration field means the default named in its comment;
// Unlimited, where allowed, removes a limit. A false switch is off, and a
// zero Retry retries no class: the zero Policy retries and recovers nothing,
// so every failure but an abort is a Stop that says why. Conservative and
// Persistent return the two reference behaviours; Validate reports fields
// that contradict each other.
type Policy struct {
	// Retry holds the classes retried with backoff. Permanent, Quota and
	// Canceled can never be retried: Validate rejects them, and the Session
	// ignores them.
	Retry ClassSet
	// MaxRetries is the number of retries in one streak of failures:
	// zero means DefaultMaxRetries, Unlimited no limit.
	MaxRetries int
	// MaxRetryTime caps the time one streak may take, from its first
	// failure to the end of the next delay: zero means DefaultMaxRetryTime,
	// Unlimited no cap. A retry that would end past it is a Stop.
	MaxRetryTime time.Duration
	// BaseDelay is the delay before the first retry: zero means
	// DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps each computed delay: zero means DefaultMaxDelay,
	// Unlimited no cap.
	MaxDelay time.Duration
	// Multiplier is the growth factor between delays: zero means
	// DefaultMultiplier. Values below 1 are invalid.
	Multiplier float64
	// Jitter selects the randomisation of delays.
	Jitter Jitter
	// JitterFraction is the largest share of a delay JitterProportional
	// removes: zero means DefaultJitterFraction.
	JitterFraction float64
	// MaxRetryAfter is the longest server-requested wait the Session
	// honours; a longer one is a Stop that states the wait and this
	// ceiling. Zero means MaxDelay, Unlimited any wait.
	MaxRetryAfter time.Duration

	// RecoverOverflow makes a context overflow a Compact: compact the
	// conversation, then one fresh attempt, at most once per user message and
	// only when the failing turn used the current model.
	RecoverOverflow bool
	// RecoverEarlyLength treats a length stop whose output stayed below the
	// request's output limit (TokenUsage.MaxOutput) as an overflow to
	// recover from.
	RecoverEarlyLength bool
	// RetryStatuses lists HTTP statuses (such as 400 and 413) for which a
	// failure classified Overflow or Unknown is retried unchanged, as a
	// transient fault, instead of compacted or stopped.
	RetryStatuses []int

	// ContinueOnLength continues a length stop with ContinueText, as long as
	// more than MinRemainingTokens of the context window remain free.
	ContinueOnLength bool
	// MinRemainingTokens is that threshold: zero means
	// DefaultMinRemainingTokens; a negative value turns the guard off. When
	// the remaining context is at or below it, the length stop is deferred
	// to the host's compaction.
	MinRemainingTokens int
	// ContinueOnThinkingOnly continues a normal stop that produced only
	// thinking: no text, no tool calls.
	ContinueOnThinkingOnly bool
	// ContinueOnSilentStop continues a normal stop that produced nothing at
	// all right after a user message, a tool result or an automatic
	// continuation.
	ContinueOnSilentStop bool
	// MaxContinuations caps the automatic continuations between two user
	// messages: zero means DefaultMaxContinuations, Unlimited no cap. When
	// the cap is reached the Session stops.
	MaxContinuations int
	// ContinueText is the hidden user message a Continue carries; empty
	// means DefaultContinueText.
	ContinueText string

	// NudgeEmpty sends NudgeText once per user message after a normal stop
	// with nothing usable (Content ContentNone or ContentThinking alone) that
	// no continuation switch handled; a second such stop is given up (None).
	NudgeEmpty bool
	// NudgeText is the hidden user message a Nudge carries; empty means
	// ContinueText.
	NudgeText string

	// DeferPatterns are case-insensitive substrings of error messages that
	// the host's own retry layer handles; a matching failure is a Defer.
	DeferPatterns []string

	// MaxNotes caps the advisory notes of one request; the highest
	// priorities are kept. Zero means DefaultMaxNotes.
	MaxNotes int
	// ErrorTTL is the age past which a failed request gives no note. Zero
	// means DefaultErrorTTL.
	ErrorTTL time.Duration
	// CommandTTL is the age past which a command failure gives no note.
	// Zero means DefaultCommandTTL.
	CommandTTL time.Duration
}

// Conservative returns the reference agent's policy: transient failures are
// retried up to 3 times after 2 s, 4 s and 8 s (each delay capped at 60 s,
// no jitter); an overflow or an early length stop gets one compact-and-retry
// per user message; quota, billing, permanent and unknown failures stop.
func Conservative() Policy {
	return Policy{
		Retry:              Classes(Transient),
		MaxRetries:         DefaultMaxRetries,
		BaseDelay:          DefaultBaseDelay,
		MaxDelay:           DefaultMaxDelay,
		Multiplier:         DefaultMultiplier,
		MaxRetryAfter:      DefaultMaxDelay,
		RecoverOverflow:    true,
		RecoverEarlyLength: true,
		ContinueText:       DefaultContinueText,
	}
}

// Persistent returns the retry-everything policy: transient, billing and
// unknown failures are retried without a count limit, 2 s doubling to a 60 s
// cap, for at most an hour per streak (a top-up resumes a billing loop);
// overflow keeps its single recovery; length stops are continued without
// cap while more than 16384 tokens of context remain; an empty or
// thinking-only stop is nudged once. Permanent, quota and canceled failures
// are never retried. Retrying 400 and 413 unchanged is available through
// RetryStatuses and off by default, since a genuine overflow retried
// unchanged never succeeds.
func Persistent() Policy {
	return Policy{
		Retry:              Classes(Transient, Billing, Unknown),
		MaxRetries:         Unlimited,
		MaxRetryTime:       DefaultMaxRetryTime,
		BaseDelay:          DefaultBaseDelay,
		MaxDelay:           DefaultMaxDelay,
		Multiplier:         DefaultMultiplier,
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

// Validate reports the fields of p that are out of range or contradict each
// other, all of them, joined into one error; nil means p is sound. A Session
// given an invalid Policy still never panics: it ignores classes that cannot
// be retried and reads out-of-range values as their nearest valid ones.
func (p Policy) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("erradvisor: policy: "+format, a...)) }
	for _, c := range [...]Class{Permanent, Quota, Canceled} {
		if p.Retry.Has(c) {
			bad("Retry holds %s, which retrying cannot fix", c)
		}
	}
	if p.Retry&^Classes(Unknown, Transient, Overflow, Quota, Billing, Permanent, Canceled) != 0 {
		bad("Retry holds bits that are no class")
	}
	count := func(name string, v int) {
		if v < 0 && v != Unlimited {
			bad("%s is %d: use a positive count, 0 for the default or Unlimited", name, v)
		}
	}
	count("MaxRetries", p.MaxRetries)
	count("MaxContinuations", p.MaxContinuations)
	limit := func(name string, d time.Duration) {
		if d < 0 && d != Unlimited {
			bad("%s is %v: use a positive duration, 0 for the default or Unlimited", name, d)
		}
	}
	limit("MaxRetryTime", p.MaxRetryTime)
	limit("MaxDelay", p.MaxDelay)
	limit("MaxRetryAfter", p.MaxRetryAfter)
	if p.BaseDelay < 0 {
		bad("BaseDelay is negative (%v)", p.BaseDelay)
	}
	if p.MaxDelay > 0 && p.BaseDelay > p.MaxDelay {
		bad("BaseDelay %v is above MaxDelay %v", p.BaseDelay, p.MaxDelay)
	}
	if m := p.Multiplier; math.IsNaN(m) || math.IsInf(m, 0) || m != 0 && m < 1 {
		bad("Multiplier is %v: use 1 or more, or 0 for the default", m)
	}
	if p.Jitter > JitterFull {
		bad("Jitter is %v, not a jitter mode", p.Jitter)
	}
	if f := p.JitterFraction; math.IsNaN(f) || f < 0 || f > 1 {
		bad("JitterFraction is %v: use a value in [0, 1]", f)
	}
	for _, s := range p.RetryStatuses {
		if s < 100 || s > 599 {
			bad("RetryStatuses holds %d, not an HTTP status", s)
		}
	}
	for i, s := range p.DeferPatterns {
		if s == "" {
			bad("DeferPatterns[%d] is empty", i)
		}
	}
	if p.MaxNotes < 0 {
		bad("MaxNotes is negative (%d)", p.MaxNotes)
	}
	if p.ErrorTTL < 0 || p.CommandTTL < 0 {
		bad("ErrorTTL and CommandTTL must not be negative")
	}
	return errors.Join(errs...)
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

// orDefault returns v, or def when v is zero; any negative v reads as
// Unlimited, which callers test for.
func orDefault[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return Unlimited
	}
	return v
}

func (p *Policy) maxRetries() int { return orDefault(p.MaxRetries, DefaultMaxRetries) }

func (p *Policy) maxContinuations() int {
	return orDefault(p.MaxContinuations, DefaultMaxContinuations)
}

func (p *Policy) maxRetryTime() time.Duration {
	return orDefault(p.MaxRetryTime, DefaultMaxRetryTime)
}

// maxDelay returns the cap on one computed delay, MaxInt64 for none.
func (p *Policy) maxDelay() time.Duration {
	if d := orDefault(p.MaxDelay, DefaultMaxDelay); d > 0 {
		return d
	}
	return math.MaxInt64
}

// retryAfterCeiling returns the longest server wait honoured, MaxInt64 for
// any.
func (p *Policy) retryAfterCeiling() time.Duration {
	switch {
	case p.MaxRetryAfter > 0:
		return p.MaxRetryAfter
	case p.MaxRetryAfter < 0:
		return math.MaxInt64
	}
	return p.maxDelay()
}

func (p *Policy) minRemainingTokens() int {
	if p.MinRemainingTokens == 0 {
		return DefaultMinRemainingTokens
	}
	return max(p.MinRemainingTokens, 0)
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

func (p *Policy) maxNotes() int {
	if p.MaxNotes <= 0 {
		return DefaultMaxNotes
	}
	return p.MaxNotes
}

func (p *Policy) errorTTL() time.Duration {
	if p.ErrorTTL <= 0 {
		return DefaultErrorTTL
	}
	return p.ErrorTTL
}

func (p *Policy) commandTTL() time.Duration {
	if p.CommandTTL <= 0 {
		return DefaultCommandTTL
	}
	return p.CommandTTL
}

package erradvisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/erradvisor/erradvisor/events"
)

var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// fail builds an error outcome.
func fail(class Class, reason Reason, msg string) Outcome {
	return Outcome{
		Stop:           StopError,
		Classification: Classification{Class: class, Reason: reason},
		Failure:        Failure{Message: msg},
	}
}

var (
	overloaded = fail(Transient, ReasonOverloaded, `529 {"type":"overloaded_error"}`)
	overflow   = fail(Overflow, ReasonContextWindow, "prompt is too long: 210000 tokens > 200000 maximum")
	authFail   = fail(Permanent, ReasonAuth, "401 invalid x-api-key")
	billing    = fail(Billing, ReasonCredits, "402 Insufficient Balance")
	unknownErr = fail(Unknown, "", "something odd happened")
	quotaFail  = fail(Quota, ReasonUsageLimit, "You've hit your limit")
	canceled   = fail(Canceled, ReasonAborted, "Request was aborted")
	aborted    = Outcome{Stop: StopAborted}
	success    = Outcome{Stop: StopEndTurn, Content: ContentText}
	toolUse    = Outcome{Stop: StopToolUse, Content: ContentToolCalls}
	thinking   = Outcome{Stop: StopEndTurn, Content: ContentThinking}
	silent     = Outcome{Stop: StopEndTurn, Content: ContentNone}
)

func withStatus(o Outcome, status int) Outcome { o.Failure.Status = status; return o }

func withRetryAfter(o Outcome, d time.Duration) Outcome {
	o.Classification.RetryAfter = d
	return o
}

func lengthStop(used, window, output, maxOutput int) Outcome {
	return Outcome{Stop: StopLength, Content: ContentText, Usage: TokenUsage{
		Input: used - output, Output: output, ContextWindow: window, MaxOutput: maxOutput,
	}}
}

// step is one event in a scenario: a user message, a cancellation during
// backoff, or a turn outcome.
type step struct {
	user   bool
	cancel bool
	o      Outcome
}

func turn(o Outcome) step { return step{o: o} }

var (
	userMsg = step{user: true}
	cancel  = step{cancel: true}
)

// got is the observable part of a Decision.
type got struct {
	Action  Action
	Delay   time.Duration
	Attempt int
	Max     int
	Text    string
	Why     string
	Events  []events.Event
}

func observe(d Decision) got {
	return got{d.Action, d.Delay, d.Attempt, d.Max, d.Text, d.Explain(), d.Events()}
}

// run feeds steps to s and observes every decision; a user message is
// observed only when it closes a streak.
func run(s *Session, steps []step) []got {
	var out []got
	for _, st := range steps {
		switch {
		case st.user:
			if d := s.UserMessage(t0); d.Events() != nil {
				out = append(out, observe(d))
			}
		case st.cancel:
			out = append(out, observe(s.Cancel(t0)))
		default:
			out = append(out, observe(s.Decide(st.o, t0)))
		}
	}
	return out
}

// retryEvents returns the auto_retry_start and auto_retry_end of d, or nil.
func retryEvents(d Decision) (start *events.AutoRetryStart, end *events.AutoRetryEnd) {
	for _, e := range d.Events() {
		switch e := e.(type) {
		case events.AutoRetryStart:
			start = &e
		case events.AutoRetryEnd:
			end = &e
		}
	}
	return start, end
}

func start(attempt, maxAttempts int, delay time.Duration, msg string) events.Event {
	return events.AutoRetryStart{Attempt: attempt, MaxAttempts: maxAttempts, DelayMs: delay.Milliseconds(), ErrorMessage: msg}
}

func endOK(attempt int) events.Event { return events.AutoRetryEnd{Success: true, Attempt: attempt} }

func endFail(attempt int, msg string) events.Event {
	return events.AutoRetryEnd{Attempt: attempt, FinalError: msg}
}

func evs(e ...events.Event) []events.Event { return e }

func TestConservative(t *testing.T) {
	reset := quotaFail
	reset.Failure.Status = 429
	reset.Classification.ResetAt = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	om := overloaded.Failure.Message

	tests := []struct {
		name  string
		steps []step
		want  []got
	}{{
		name:  "overloaded twice then success",
		steps: []step{turn(overloaded), turn(overloaded), turn(success)},
		want: []got{
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
			{Retry, 4 * time.Second, 2, 3, "", "overloaded: retry 2 of 3 in 4s", evs(start(2, 3, 4*time.Second, om))},
			{None, 0, 0, 0, "", "turn succeeded", evs(endOK(2))},
		},
	}, {
		name:  "four overloaded exhaust the retries",
		steps: []step{turn(overloaded), turn(overloaded), turn(overloaded), turn(overloaded), turn(overloaded)},
		want: []got{
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
			{Retry, 4 * time.Second, 2, 3, "", "overloaded: retry 2 of 3 in 4s", evs(start(2, 3, 4*time.Second, om))},
			{Retry, 8 * time.Second, 3, 3, "", "overloaded: retry 3 of 3 in 8s", evs(start(3, 3, 8*time.Second, om))},
			{Stop, 0, 3, 3, "", "retries exhausted after 3 attempts: overloaded", evs(endFail(3, om))},
			// A later failure starts a new streak.
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
		},
	}, {
		name:  "tool use ends a streak successfully",
		steps: []step{turn(overloaded), turn(toolUse), turn(success)},
		want: []got{
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
			{None, 0, 0, 0, "", "turn succeeded", evs(endOK(1))},
			{None, 0, 0, 0, "", "turn succeeded", nil},
		},
	}, {
		name:  "overflow compacts once per user message",
		steps: []step{turn(overflow), turn(overflow), userMsg, turn(overflow)},
		want: []got{
			{Compact, 0, 0, 0, "", "context overflow: compact, then one fresh attempt", nil},
			{Stop, 0, 0, 0, "", "context overflow again: the recovery for this user message was already used", nil},
			{Compact, 0, 0, 0, "", "context overflow: compact, then one fresh attempt", nil},
		},
	}, {
		name: "overflow on another model is not compacted",
		steps: []step{turn(func() Outcome {
			o := overflow
			o.Model, o.CurrentModel = "small-8k", "large-1m"
			return o
		}())},
		want: []got{{Stop, 0, 0, 0, "", "context overflow on small-8k, but the current model is large-1m: not compacted", nil}},
	}, {
		name:  "quota with a reset time stops and says when",
		steps: []step{turn(reset)},
		want:  []got{{Stop, 0, 0, 0, "", "quota: usage_limit, resets at 15:00 UTC", nil}},
	}, {
		name:  "quota, billing, permanent and unknown stop",
		steps: []step{turn(quotaFail), turn(billing), turn(authFail), turn(unknownErr)},
		want: []got{
			{Stop, 0, 0, 0, "", "quota: usage_limit", nil},
			{Stop, 0, 0, 0, "", "billing: credits", nil},
			{Stop, 0, 0, 0, "", "permanent: auth, not retried", nil},
			{Stop, 0, 0, 0, "", "unrecognised error: not retried by this policy", nil},
		},
	}, {
		name:  "aborts are silent",
		steps: []step{turn(canceled), turn(aborted)},
		want: []got{
			{None, 0, 0, 0, "", "aborted by the user", nil},
			{None, 0, 0, 0, "", "aborted by the user", nil},
		},
	}, {
		name:  "abort after a retry closes the streak",
		steps: []step{turn(overloaded), turn(aborted), turn(success)},
		want: []got{
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
			{None, 0, 0, 0, "", "aborted by the user", evs(endFail(1, "Retry cancelled"))},
			{None, 0, 0, 0, "", "turn succeeded", nil},
		},
	}, {
		name:  "cancel during backoff",
		steps: []step{turn(overloaded), turn(overloaded), cancel, cancel, turn(overloaded)},
		want: []got{
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
			{Retry, 4 * time.Second, 2, 3, "", "overloaded: retry 2 of 3 in 4s", evs(start(2, 3, 4*time.Second, om))},
			{None, 0, 0, 0, "", "retry cancelled", evs(endFail(2, "Retry cancelled"))},
			{None, 0, 0, 0, "", "none", nil}, // no streak to cancel
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
		},
	}, {
		name:  "a non-retryable failure ends a streak",
		steps: []step{turn(overloaded), turn(authFail)},
		want: []got{
			{Retry, 2 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 2s", evs(start(1, 3, 2*time.Second, om))},
			{Stop, 0, 0, 0, "", "permanent: auth, not retried", evs(endFail(1, authFail.Failure.Message))},
		},
	}, {
		name: "retry-after is a floor",
		steps: []step{
			turn(withRetryAfter(overloaded, 20*time.Second)),
			turn(withRetryAfter(overloaded, time.Second)),
		},
		want: []got{
			{Retry, 20 * time.Second, 1, 3, "", "overloaded: retry 1 of 3 in 20s", evs(start(1, 3, 20*time.Second, om))},
			{Retry, 4 * time.Second, 2, 3, "", "overloaded: retry 2 of 3 in 4s", evs(start(2, 3, 4*time.Second, om))},
		},
	}, {
		name:  "retry-after above the ceiling stops",
		steps: []step{turn(withRetryAfter(overloaded, 3*time.Hour))},
		want:  []got{{Stop, 0, 0, 0, "", "server asked to wait 3h, above the 60s ceiling (transient: overloaded)", nil}},
	}, {
		name: "early length stop recovers once",
		steps: []step{
			turn(lengthStop(150000, 200000, 1200, 32000)),
			turn(lengthStop(150000, 200000, 1200, 32000)),
		},
		want: []got{
			{Compact, 0, 0, 0, "", "early length stop: compact, then one fresh attempt", nil},
			{None, 0, 0, 0, "", "output limit reached", nil},
		},
	}, {
		name:  "genuine length stop is left alone",
		steps: []step{turn(lengthStop(100000, 200000, 32000, 32000))},
		want:  []got{{None, 0, 0, 0, "", "output limit reached", nil}},
	}, {
		name:  "empty stops get no nudge",
		steps: []step{turn(thinking), turn(silent)},
		want: []got{
			{None, 0, 0, 0, "", "turn succeeded", nil},
			{None, 0, 0, 0, "", "turn succeeded", nil},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewSession(Conservative())
			if diff := cmp.Diff(tt.want, run(r, tt.steps)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPersistent(t *testing.T) {
	om := overloaded.Failure.Message
	retryAll := Persistent()
	retryAll.RetryStatuses = []int{400, 413}
	bodyless := withStatus(fail(Unknown, "", "400 status code (no body)"), 400)
	tooLarge := withStatus(fail(Overflow, ReasonContextWindow, "413 Payload Too Large"), 413)

	tests := []struct {
		name   string
		policy Policy
		steps  []step
		want   []got
	}{{
		name:   "overloaded is retried without limit, delays capped",
		policy: Persistent(),
		steps: []step{
			turn(overloaded), turn(overloaded), turn(overloaded), turn(overloaded),
			turn(overloaded), turn(overloaded), turn(overloaded), turn(success),
		},
		want: []got{
			{Retry, 2 * time.Second, 1, 0, "", "overloaded: retry 1 in 2s", evs(start(1, 0, 2*time.Second, om))},
			{Retry, 4 * time.Second, 2, 0, "", "overloaded: retry 2 in 4s", evs(start(2, 0, 4*time.Second, om))},
			{Retry, 8 * time.Second, 3, 0, "", "overloaded: retry 3 in 8s", evs(start(3, 0, 8*time.Second, om))},
			{Retry, 16 * time.Second, 4, 0, "", "overloaded: retry 4 in 16s", evs(start(4, 0, 16*time.Second, om))},
			{Retry, 32 * time.Second, 5, 0, "", "overloaded: retry 5 in 32s", evs(start(5, 0, 32*time.Second, om))},
			{Retry, 60 * time.Second, 6, 0, "", "overloaded: retry 6 in 60s", evs(start(6, 0, 60*time.Second, om))},
			{Retry, 60 * time.Second, 7, 0, "", "overloaded: retry 7 in 60s", evs(start(7, 0, 60*time.Second, om))},
			{None, 0, 0, 0, "", "turn succeeded", evs(endOK(7))},
		},
	}, {
		name:   "billing and unknown are retried",
		policy: Persistent(),
		steps:  []step{turn(billing), turn(unknownErr)},
		want: []got{
			{Retry, 2 * time.Second, 1, 0, "", "credits: retry 1 in 2s", evs(start(1, 0, 2*time.Second, billing.Failure.Message))},
			{Retry, 4 * time.Second, 2, 0, "", "unknown: retry 2 in 4s", evs(start(2, 0, 4*time.Second, unknownErr.Failure.Message))},
		},
	}, {
		name:   "permanent, quota and canceled are not retried",
		policy: Persistent(),
		steps:  []step{turn(authFail), turn(quotaFail), turn(canceled)},
		want: []got{
			{Stop, 0, 0, 0, "", "permanent: auth, not retried", nil},
			{Stop, 0, 0, 0, "", "quota: usage_limit", nil},
			{None, 0, 0, 0, "", "aborted by the user", nil},
		},
	}, {
		name:   "overflow compacts, then stops",
		policy: Persistent(),
		steps:  []step{turn(overflow), turn(overflow)},
		want: []got{
			{Compact, 0, 0, 0, "", "context overflow: compact, then one fresh attempt", nil},
			{Stop, 0, 0, 0, "", "context overflow again: the recovery for this user message was already used", nil},
		},
	}, {
		name:   "400 and 413 compact or stop without the knob",
		policy: Persistent(),
		steps:  []step{turn(tooLarge), turn(bodyless)},
		want: []got{
			{Compact, 0, 0, 0, "", "context overflow: compact, then one fresh attempt", nil},
			{Retry, 2 * time.Second, 1, 0, "", "server: retry 1 in 2s", evs(start(1, 0, 2*time.Second, bodyless.Failure.Message))},
		},
	}, {
		name:   "400 and 413 are retried without compaction with the knob",
		policy: retryAll,
		steps:  []step{turn(tooLarge), turn(tooLarge), turn(withStatus(overflow, 400)), turn(overflow)},
		want: []got{
			{Retry, 2 * time.Second, 1, 0, "", "context_window: retry 1 in 2s", evs(start(1, 0, 2*time.Second, tooLarge.Failure.Message))},
			{Retry, 4 * time.Second, 2, 0, "", "context_window: retry 2 in 4s", evs(start(2, 0, 4*time.Second, tooLarge.Failure.Message))},
			{Retry, 8 * time.Second, 3, 0, "", "context_window: retry 3 in 8s", evs(start(3, 0, 8*time.Second, overflow.Failure.Message))},
			// Without a listed status, an overflow still compacts.
			{Compact, 0, 0, 0, "", "context overflow: compact, then one fresh attempt", evs(endFail(3, overflow.Failure.Message))},
		},
	}, {
		name:   "length stops continue while context remains",
		policy: Persistent(),
		steps: []step{
			turn(lengthStop(100000, 200000, 32000, 32000)),
			turn(lengthStop(150000, 200000, 32000, 32000)),
			turn(lengthStop(190000, 200000, 32000, 32000)),
		},
		want: []got{
			{Continue, 0, 1, 0, "continue", "length stop: continue 1", nil},
			{Continue, 0, 2, 0, "continue", "length stop: continue 2", nil},
			{Defer, 0, 0, 0, "", "length stop with 10000 tokens of context left, not above 16384: left to compaction", nil},
		},
	}, {
		name:   "thinking-only is nudged once per user message",
		policy: Persistent(),
		steps:  []step{turn(thinking), turn(thinking), turn(silent), userMsg, turn(silent)},
		want: []got{
			{Nudge, 0, 1, 1, "continue", "thinking-only stop: nudge once", nil},
			{None, 0, 0, 0, "", "empty stop again after a nudge: given up", nil},
			{None, 0, 0, 0, "", "empty stop again after a nudge: given up", nil},
			{Nudge, 0, 1, 1, "continue", "empty stop: nudge once", nil},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewSession(tt.policy)
			if diff := cmp.Diff(tt.want, run(r, tt.steps)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContinuationKnobs(t *testing.T) {
	knobs := Policy{
		ContinueOnLength:       true,
		MinRemainingTokens:     DefaultMinRemainingTokens,
		ContinueOnThinkingOnly: true,
		ContinueOnSilentStop:   true,
		MaxContinuations:       2,
		ContinueText:           "go on",
		DeferPatterns:          []string{"WebSocket error", "fetch failed"},
	}
	noGuard := knobs
	noGuard.MinRemainingTokens = -1 // negative turns the guard off
	noGuard.MaxContinuations = Unlimited
	defaultCap := knobs
	defaultCap.MaxContinuations = 0
	nudgeText := Persistent()
	nudgeText.NudgeText = "Please answer."

	afterUser, afterTool, afterCont := silent, silent, silent
	afterUser.After, afterTool.After, afterCont.After = AfterUser, AfterToolResult, AfterContinuation
	ws := fail(Transient, ReasonNetwork, "websocket ERROR: 1006")
	transient := fail(Transient, ReasonNetwork, "ECONNRESET")

	tests := []struct {
		name   string
		policy Policy
		steps  []step
		want   []got
	}{{
		name:   "thinking-only continues up to the cap, a user message resets it",
		policy: knobs,
		steps:  []step{turn(thinking), turn(thinking), turn(thinking), userMsg, turn(thinking)},
		want: []got{
			{Continue, 0, 1, 2, "go on", "thinking-only stop: continue 1 of 2", nil},
			{Continue, 0, 2, 2, "go on", "thinking-only stop: continue 2 of 2", nil},
			{Stop, 0, 2, 2, "", "automatic continuation limit reached (2)", nil},
			{Continue, 0, 1, 2, "go on", "thinking-only stop: continue 1 of 2", nil},
		},
	}, {
		name:   "silent stops continue after user, tool result and continuation",
		policy: noGuard,
		steps:  []step{turn(afterUser), turn(afterTool), turn(afterCont), turn(silent)},
		want: []got{
			{Continue, 0, 1, 0, "go on", "silent stop: continue 1", nil},
			{Continue, 0, 2, 0, "go on", "silent stop: continue 2", nil},
			{Continue, 0, 3, 0, "go on", "silent stop: continue 3", nil},
			{None, 0, 0, 0, "", "turn succeeded", nil},
		},
	}, {
		name:   "zero cap means the default cap",
		policy: defaultCap,
		steps:  []step{turn(thinking)},
		want:   []got{{Continue, 0, 1, DefaultMaxContinuations, "go on", "thinking-only stop: continue 1 of 99", nil}},
	}, {
		name:   "the length guard can be disabled",
		policy: noGuard,
		steps:  []step{turn(lengthStop(199000, 200000, 32000, 32000))},
		want:   []got{{Continue, 0, 1, 0, "go on", "length stop: continue 1", nil}},
	}, {
		name:   "unknown window never defers",
		policy: knobs,
		steps:  []step{turn(lengthStop(199000, 0, 32000, 32000))},
		want:   []got{{Continue, 0, 1, 2, "go on", "length stop: continue 1 of 2", nil}},
	}, {
		name:   "deferred patterns match case-insensitively",
		policy: knobs,
		steps:  []step{turn(ws), turn(transient)},
		want: []got{
			{Defer, 0, 0, 0, "", `left to the host's retry layer (matches "WebSocket error")`, nil},
			{Stop, 0, 0, 0, "", "transient: network, not retried", nil},
		},
	}, {
		name:   "nudge text",
		policy: nudgeText,
		steps:  []step{turn(silent)},
		want:   []got{{Nudge, 0, 1, 1, "Please answer.", "empty stop: nudge once", nil}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewSession(tt.policy)
			if diff := cmp.Diff(tt.want, run(r, tt.steps)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestZeroPolicy(t *testing.T) {
	r := NewSession(Policy{})
	steps := []step{
		turn(overloaded), turn(overflow), turn(quotaFail), turn(billing), turn(authFail),
		turn(unknownErr), turn(canceled), turn(aborted), turn(success),
		turn(lengthStop(100000, 200000, 1000, 32000)), turn(thinking), turn(silent),
	}
	want := []Action{Stop, Stop, Stop, Stop, Stop, Stop, None, None, None, None, None, None}
	var gotActions []Action
	for _, g := range run(r, steps) {
		gotActions = append(gotActions, g.Action)
		if g.Events != nil || g.Delay != 0 {
			t.Errorf("zero policy produced %+v", g)
		}
	}
	if diff := cmp.Diff(want, gotActions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

func TestRecoveryLatch(t *testing.T) {
	s := NewSession(Conservative())
	// A compaction the host started for an overflow spends the recovery.
	s.CompactionStarted(CompactionOverflow, t0)
	if d := s.Decide(overflow, t0); d.Action != Stop || d.Cause != CauseRecoverySpent {
		t.Errorf("overflow after a recovery compaction: got %v (%v), want stop", d.Action, d.Cause)
	}
	s.UserMessage(t0)
	if d := s.Decide(overflow, t0); d.Action != Compact || d.Cause != CauseOverflow {
		t.Errorf("overflow after a user message: got %v (%v), want compact", d.Action, d.Cause)
	}
}

func TestJitterSource(t *testing.T) {
	p := Conservative()
	p.Jitter = JitterProportional
	r := NewSession(p, WithRand(func() float64 { return 0.5 }))
	d := r.Decide(overloaded, t0)
	if want := 1750 * time.Millisecond; d.Delay != want {
		t.Errorf("delay with rnd 0.5: got %v, want %v", d.Delay, want)
	}
	if ev, _ := retryEvents(d); ev == nil || ev.DelayMs != 1750 {
		t.Errorf("event delay: got %+v", ev)
	}
}

func TestBackoff(t *testing.T) {
	pi := Conservative()
	prop := pi
	prop.Jitter = JitterProportional
	full := pi
	full.Jitter = JitterFull
	sdk := Policy{BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second, Jitter: JitterProportional}
	uncapped := Policy{BaseDelay: time.Second, MaxDelay: Unlimited}
	tests := []struct {
		name    string
		p       Policy
		attempt int
		rnd     float64
		want    time.Duration
	}{
		{"attempt 0", pi, 0, 0, 0},
		{"negative attempt", pi, -3, 0, 0},
		{"first", pi, 1, 0, 2 * time.Second},
		{"second", pi, 2, 0.9, 4 * time.Second},
		{"third", pi, 3, 0, 8 * time.Second},
		{"capped", pi, 6, 0, 60 * time.Second},
		{"huge attempt", pi, 1_000_000_000, 0, 60 * time.Second},
		{"max int attempt", pi, math.MaxInt, 0, 60 * time.Second},
		{"proportional none", prop, 1, 0, 2 * time.Second},
		{"proportional half", prop, 1, 0.5, 1750 * time.Millisecond},
		{"proportional near one", prop, 3, 0.999999, 6*time.Second + 2*time.Microsecond},
		{"full half", full, 2, 0.5, 2 * time.Second},
		{"full zero", full, 2, 0, 0},
		{"rnd above one is clamped", full, 1, 7, 2*time.Second - 1},
		{"rnd NaN is zero", full, 1, math.NaN(), 0},
		{"sdk schedule", sdk, 5, 0, 8 * time.Second},
		{"sdk schedule jitter", sdk, 2, 1, 750*time.Millisecond + 1}, // rnd 1 is clamped below 1
		{"uncapped huge attempt", uncapped, 1_000_000_000, 0, math.MaxInt64},
		{"uncapped full jitter", Policy{BaseDelay: time.Second, MaxDelay: Unlimited, Jitter: JitterFull}, 200, 0.5, 1 << 62},
		{"zero base means the default", Policy{MaxDelay: time.Minute}, 3, 0, 8 * time.Second},
		{"negative base", Policy{BaseDelay: -time.Second}, 3, 0, 0},
		{"zero policy", Policy{}, 7, 0, 60 * time.Second},
		{"base above cap", Policy{BaseDelay: time.Minute, MaxDelay: time.Second}, 1, 0, time.Second},
		{"multiplier 1", Policy{BaseDelay: time.Second, Multiplier: 1, MaxDelay: time.Minute}, 40, 0, time.Second},
		{"multiplier 3", Policy{BaseDelay: time.Second, Multiplier: 3, MaxDelay: time.Minute}, 3, 0, 9 * time.Second},
		{"multiplier NaN", Policy{BaseDelay: time.Second, Multiplier: math.NaN(), MaxDelay: time.Minute}, 3, 0, 4 * time.Second},
		{"multiplier Inf", Policy{BaseDelay: time.Second, Multiplier: math.Inf(1), MaxDelay: time.Minute}, 2, 0, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Backoff(tt.p, tt.attempt, tt.rnd); got != tt.want {
				t.Errorf("Backoff(attempt %d, rnd %v) = %v, want %v", tt.attempt, tt.rnd, got, tt.want)
			}
		})
	}
}

// checkBackoff asserts the backoff properties for one policy and random value.
func checkBackoff(t *testing.T, p Policy, attempt int, rnd float64) {
	t.Helper()
	d := Backoff(p, attempt, rnd)
	if d < 0 {
		t.Fatalf("Backoff(%+v, %d, %v) = %v < 0", p, attempt, rnd, d)
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		t.Fatalf("Backoff(%+v, %d, %v) = %v above the cap", p, attempt, rnd, d)
	}
	if attempt < math.MaxInt {
		if next := Backoff(p, attempt+1, rnd); next < d {
			t.Fatalf("Backoff(%+v) not monotone at attempt %d, rnd %v: %v then %v", p, attempt, rnd, d, next)
		}
	}
	for _, far := range []int{1_000_000_000, math.MaxInt} {
		if got := Backoff(p, far, rnd); got < d || got < 0 || (p.MaxDelay > 0 && got > p.MaxDelay) {
			t.Fatalf("Backoff(%+v, %d, %v) = %v, below %v at attempt %d or out of bounds", p, far, rnd, got, d, attempt)
		}
	}
}

func TestBackoffProperties(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		p := Policy{
			BaseDelay:      time.Duration(src.Int64N(int64(time.Hour))),
			MaxDelay:       time.Duration(src.Int64N(int64(2*time.Hour))) - time.Minute,
			Multiplier:     src.Float64() * 4,
			Jitter:         Jitter(src.IntN(3)),
			JitterFraction: src.Float64() * 1.5,
		}
		checkBackoff(t, p, src.IntN(80)-2, src.Float64())
	}
}

func FuzzBackoff(f *testing.F) {
	f.Add(int64(2*time.Second), int64(time.Minute), 2.0, uint8(0), 0.0, 1, 0.0)
	f.Add(int64(500*time.Millisecond), int64(8*time.Second), 2.0, uint8(1), 0.25, 4, 0.9)
	f.Add(int64(time.Second), int64(0), 10.0, uint8(2), 0.0, 1_000_000_000, 0.5)
	f.Add(int64(math.MaxInt64), int64(-1), 1.5, uint8(1), 1.0, math.MaxInt-1, 0.999)
	f.Fuzz(func(t *testing.T, base, maxDelay int64, mult float64, jitter uint8, frac float64, attempt int, rnd float64) {
		p := Policy{
			BaseDelay: time.Duration(base), MaxDelay: time.Duration(maxDelay),
			Multiplier: mult, Jitter: Jitter(jitter % 4), JitterFraction: frac,
		}
		checkBackoff(t, p, attempt, rnd)
	})
}

// checkSequence runs outcomes through a retrier for p and checks the
// invariants every policy must keep.
func checkSequence(t *testing.T, p Policy, outcomes []Outcome, users []bool) {
	t.Helper()
	r := NewSession(p, WithRand(func() float64 { return 0.3 }))
	streak := 0
	for i, o := range outcomes {
		if users[i] {
			d := r.UserMessage(t0)
			if _, end := retryEvents(d); (end != nil) != (streak > 0) {
				t.Fatalf("step %d: user message after a streak of %d: end event %+v", i, streak, end)
			}
			streak = 0
		}
		d := r.Decide(o, t0)
		if d.Explain() == "" {
			t.Fatalf("step %d: empty explanation", i)
		}
		if _, err := json.Marshal(d.Events()); err != nil {
			t.Fatalf("step %d: events do not marshal: %v", i, err)
		}
		st, end := retryEvents(d)
		hasEnd := end != nil
		if hasEnd && (end.Attempt != streak || streak == 0) {
			t.Fatalf("step %d: auto_retry_end attempt %d after a streak of %d", i, end.Attempt, streak)
		}
		switch d.Action {
		case Retry:
		case Defer:
			// A deferred failure leaves the streak to the host's layer; a
			// deferred length stop follows a successful request.
			if hasEnd && o.Stop == StopError {
				t.Fatalf("step %d: a deferred failure closed the streak", i)
			}
			if hasEnd {
				streak = 0
			}
			continue
		default:
			if streak > 0 && !hasEnd {
				t.Fatalf("step %d: streak of %d ended by %v without auto_retry_end", i, streak, d.Action)
			}
			streak = 0
			continue
		}
		if o.Stop != StopError {
			t.Fatalf("step %d: retried a %v turn", i, o.Stop)
		}
		switch o.Classification.Class {
		case Permanent, Quota, Canceled:
			t.Fatalf("step %d: retried a %v failure", i, o.Classification.Class)
		}
		streak++
		if p.MaxRetries >= 0 && streak > p.MaxRetries {
			t.Fatalf("step %d: retry %d exceeds the policy's %d", i, streak, p.MaxRetries)
		}
		if st == nil || st.Attempt != streak || d.Attempt != streak {
			t.Fatalf("step %d: retry attempt %d (event %+v), want %d", i, d.Attempt, st, streak)
		}
		if d.Delay < 0 || d.Delay > max(p.MaxDelay, p.MaxRetryAfter) {
			t.Fatalf("step %d: delay %v out of bounds", i, d.Delay)
		}
	}
}

// outcomeFrom builds an outcome from two bytes of fuzz input.
func outcomeFrom(a, b byte) Outcome {
	classes := []Classification{
		{Class: Unknown}, {Class: Transient, Reason: ReasonOverloaded},
		{Class: Transient, Reason: ReasonRateLimit, RetryAfter: time.Duration(b) * time.Second},
		{Class: Overflow, Reason: ReasonContextWindow}, {Class: Quota, Reason: ReasonQuota},
		{Class: Billing, Reason: ReasonCredits}, {Class: Permanent, Reason: ReasonAuth},
		{Class: Canceled, Reason: ReasonAborted},
	}
	o := Outcome{
		Stop:           StopReason(a % 5),
		Classification: classes[int(a/5)%len(classes)],
		Content:        Content(b & 15),
		After:          Preceding(b >> 3 % 4),
		Failure:        Failure{Status: []int{0, 400, 413, 429, 500}[int(b>>5)%5]},
		Usage:          TokenUsage{Input: int(b) * 1000, Output: int(a) * 100, ContextWindow: 200000, MaxOutput: 16000},
	}
	if o.Stop != StopError {
		o.Classification = Classification{}
	}
	if b&0x80 != 0 {
		o.Failure.Message = "fetch failed"
	}
	return o
}

func sequencePolicies() []Policy {
	hodor := Policy{
		Retry: Classes(Transient), MaxRetries: 5, BaseDelay: time.Second, MaxDelay: 30 * time.Second,
		Jitter: JitterFull, ContinueOnLength: true, MinRemainingTokens: DefaultMinRemainingTokens,
		ContinueOnThinkingOnly: true, ContinueOnSilentStop: true, MaxContinuations: 3,
		DeferPatterns: []string{"fetch failed"}, RetryStatuses: []int{400, 413},
		// Even listed, these are never retried.
		NudgeEmpty: true,
	}
	hodor.Retry |= Classes(Permanent, Quota, Canceled)
	persistent := Persistent()
	persistent.RetryStatuses = []int{400, 413}
	return []Policy{Conservative(), Persistent(), persistent, hodor, {}}
}

func TestRandomSequences(t *testing.T) {
	src := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		n := 1 + src.IntN(40)
		outcomes := make([]Outcome, n)
		users := make([]bool, n)
		for j := range outcomes {
			outcomes[j] = outcomeFrom(byte(src.UintN(256)), byte(src.UintN(256)))
			users[j] = src.IntN(8) == 0
		}
		for _, p := range sequencePolicies() {
			checkSequence(t, p, outcomes, users)
		}
	}
}

func FuzzSessionDecide(f *testing.F) {
	f.Add([]byte{3, 8, 3, 8, 3, 8, 3, 8, 0, 1})
	f.Add([]byte{18, 0, 18, 0, 1, 200, 2, 0})
	f.Add([]byte{33, 255, 38, 17, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var outcomes []Outcome
		var users []bool
		for i := 0; i+1 < len(data); i += 2 {
			outcomes = append(outcomes, outcomeFrom(data[i], data[i+1]))
			users = append(users, data[i+1]&0x18 == 0x18)
		}
		for _, p := range sequencePolicies() {
			checkSequence(t, p, outcomes, users)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func FuzzDeferPatterns(f *testing.F) {
	f.Add("WebSocket ERROR 1006", "websocket error")
	f.Add("fetch failed", "")
	f.Add("ǅ ǆ Straße", "STRASSE")
	f.Add("Σίσυφος", "σίσυφοσ")
	f.Fuzz(func(t *testing.T, msg, pattern string) {
		p := Persistent()
		p.DeferPatterns = []string{pattern}
		d := NewSession(p).Decide(fail(Transient, ReasonNetwork, msg), t0)
		if d.Action != Defer && d.Action != Retry {
			t.Fatalf("transient failure decided %v", d.Action)
		}
		if !isASCII(msg) || !isASCII(pattern) {
			return // no simple oracle for Unicode folding
		}
		want := pattern != "" && strings.Contains(strings.ToLower(msg), strings.ToLower(pattern))
		if got := d.Action == Defer; got != want {
			t.Fatalf("message %q, pattern %q: deferred %v, want %v", msg, pattern, got, want)
		}
	})
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   bool
	}{
		{"WebSocket error: 1006", "websocket ERROR", true},
		{"socket hang up", "Socket Hang Up", true},
		{"fetch", "fetch failed", false},
		{"Σίσυφος", "ΣΊΣΥΦΟΣ", true},
		{"straße", "STRASSE", false}, // folds of different length are not matched
		{"abc", "", true},
		{"", "a", false},
	}
	for _, tt := range tests {
		if got := containsFold(tt.s, tt.sub); got != tt.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", tt.s, tt.sub, got, tt.want)
		}
	}
}

func TestWait(t *testing.T) {
	if err := Wait(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Wait elapsed: %v", err)
	}
	if err := Wait(context.Background(), 0); err != nil {
		t.Errorf("Wait(0): %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(-1s) on a cancelled context: %v", err)
	}
	if err := Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled context: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := Wait(ctx, time.Hour)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait past a deadline: %v", err)
	}
	if el := time.Since(began); el > 5*time.Second {
		t.Errorf("Wait returned after %v, not promptly", el)
	}
}

func TestStrings(t *testing.T) {
	var got []string
	for a := None; a <= Defer+1; a++ {
		got = append(got, a.String())
	}
	for s := StopEndTurn; s <= StopUnknown+1; s++ {
		got = append(got, s.String())
	}
	for j := JitterNone; j <= JitterFull+1; j++ {
		got = append(got, j.String())
	}
	want := []string{
		"none", "retry", "compact", "continue", "nudge", "stop", "defer", "action(7)",
		"stop", "length", "toolUse", "error", "aborted", "refused", "paused", "contextWindow", "unknown", "stopReason(9)",
		"none", "proportional", "full", "jitter(3)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestExplainDurations(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{60 * time.Second, "60s"}, {2 * time.Second, "2s"}, {1500 * time.Millisecond, "1.5s"},
		{3 * time.Hour, "3h"}, {90 * time.Minute, "1h30m"}, {5 * time.Minute, "5m"},
		{3*time.Hour + 7*time.Second, "3h0m7s"},
	}
	for _, tt := range tests {
		if got := shortDuration(tt.d); got != tt.want {
			t.Errorf("shortDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	far := quotaFail
	far.Classification.ResetAt = time.Date(2026, 3, 9, 8, 30, 0, 0, time.UTC)
	if got, want := NewSession(Conservative()).Decide(far, t0).Explain(), "quota: usage_limit, resets at 2026-03-09 08:30 UTC"; got != want {
		t.Errorf("far reset: got %q, want %q", got, want)
	}
}

func TestDecisionLogValue(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	r := NewSession(Conservative())
	o := overloaded
	o.Classification.Rule = "anthropic.overloaded"
	log.Info("decided", "decision", r.Decide(o, t0))
	want := `{"level":"INFO","msg":"decided","decision":{"action":"retry","cause":"retryable","delay":2000000000,"attempt":1,"max":3,` +
		`"classification":{"class":"transient","reason":"overloaded","rule":"anthropic.overloaded"},"why":"overloaded: retry 1 of 3 in 2s"}}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("log line (-want +got):\n%s", diff)
	}
}

func TestDecideAllocs(t *testing.T) {
	cases := []struct {
		name string
		p    Policy
		o    Outcome
	}{
		{"retry", Persistent(), overloaded},
		{"success", Conservative(), success},
		{"stop", Conservative(), authFail},
		{"continue", Persistent(), lengthStop(100000, 200000, 32000, 32000)},
		{"defer", Policy{DeferPatterns: []string{"nothing", "overloaded_error"}}, overloaded},
		{"quota", Conservative(), quotaFail},
	}
	for _, c := range cases {
		r := NewSession(c.p)
		if n := testing.AllocsPerRun(200, func() { _ = r.Decide(c.o, t0) }); n != 0 {
			t.Errorf("%s: %v allocs per decision, want 0", c.name, n)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	cases := []struct {
		name string
		p    Policy
		o    Outcome
	}{
		{"retry", Persistent(), overloaded},
		{"success", Conservative(), success},
		{"stop", Conservative(), authFail},
		{"continue", Persistent(), lengthStop(100000, 200000, 32000, 32000)},
		{"defer", Policy{DeferPatterns: []string{"WebSocket error", "fetch failed", "overloaded_error"}}, overloaded},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := NewSession(c.p)
			b.ReportAllocs()
			for range b.N {
				_ = r.Decide(c.o, t0)
			}
		})
	}
	b.Run("compact", func(b *testing.B) {
		r := NewSession(Conservative())
		b.ReportAllocs()
		for range b.N {
			r.UserMessage(t0)
			_ = r.Decide(overflow, t0)
		}
	})
	b.Run("retry+events", func(b *testing.B) {
		r := NewSession(Persistent())
		b.ReportAllocs()
		for range b.N {
			_ = r.Decide(overloaded, t0).Events()
		}
	})
}

func BenchmarkBackoff(b *testing.B) {
	p := Conservative()
	p.Jitter = JitterProportional
	b.ReportAllocs()
	var sink time.Duration
	for i := range b.N {
		sink += Backoff(p, i%12+1, 0.4)
	}
	_ = sink
}

// TestDecisionTable pins the first decision for each class under each
// preset: the decision table of the two reference behaviours.
func TestDecisionTable(t *testing.T) {
	type row struct{ Conservative, Persistent Action }
	want := map[Class]row{
		Unknown:   {Stop, Retry},
		Transient: {Retry, Retry},
		Overflow:  {Compact, Compact},
		Quota:     {Stop, Stop},
		Billing:   {Stop, Retry},
		Permanent: {Stop, Stop},
		Canceled:  {None, None},
	}
	got := map[Class]row{}
	for c := range numClasses {
		o := Outcome{Stop: StopError, Classification: Classification{Class: c}}
		got[c] = row{
			NewSession(Conservative()).Decide(o, t0).Action,
			NewSession(Persistent()).Decide(o, t0).Action,
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision table (-want +got):\n%s", diff)
	}
}

// TestClassifiedFailures runs real provider errors through Classify and a
// Session.
func TestClassifiedFailures(t *testing.T) {
	at := t0
	tests := []struct {
		name                     string
		f                        Failure
		conservative, persistent string // Action and Explain
	}{
		{"anthropic overloaded", Failure{Provider: "anthropic", Status: 529,
			Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			"retry: overloaded: retry 1 of 3 in 2s", "retry: overloaded: retry 1 in 2s"},
		{"openai rate limit with a stated wait", Failure{Provider: "openai", Status: 429, At: at,
			Message: "Rate limit reached for gpt-4o. Please try again in 20s."},
			"retry: rate_limit: retry 1 of 3 in 20s", "retry: rate_limit: retry 1 in 20s"},
		{"anthropic prompt too long", Failure{Provider: "anthropic", Status: 400,
			Message: "prompt is too long: 213462 tokens > 200000 maximum"},
			"compact: context overflow: compact, then one fresh attempt",
			"compact: context overflow: compact, then one fresh attempt"},
		{"deepseek balance", Failure{Provider: "deepseek", Status: 402, Message: "Insufficient Balance"},
			"stop: billing: credits", "retry: credits: retry 1 in 2s"},
		{"invalid key", Failure{Provider: "openai", Status: 401, Message: "Incorrect API key provided"},
			"stop: permanent: auth, not retried", "stop: permanent: auth, not retried"},
		{"gateway bodyless 400", Failure{Provider: "openrouter", Status: 400, Message: "400 status code (no body)"},
			"retry: server: retry 1 of 3 in 2s", "retry: server: retry 1 in 2s"},
		{"wait of hours", Failure{Provider: "openai", Status: 429, At: at,
			Message: "Rate limit exceeded. retry after 3 hours"},
			"stop: server asked to wait 3h, above the 60s ceiling (quota, resets at 15:00 UTC)",
			"stop: server asked to wait 3h, above the 60s ceiling (quota, resets at 15:00 UTC)"},
		{"aborted", Failure{Err: context.Canceled}, "none: aborted by the user", "none: aborted by the user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Outcome{Stop: StopError, Failure: tt.f}
			for _, c := range []struct {
				p    Policy
				want string
			}{{Conservative(), tt.conservative}, {Persistent(), tt.persistent}} {
				d := NewSession(c.p).Decide(o, at)
				if got := d.Action.String() + ": " + d.Explain(); got != c.want {
					t.Errorf("%+v: got %q, want %q", o.Classification, got, c.want)
				}
			}
		})
	}
}

func TestRetryAfterCeiling(t *testing.T) {
	p := Conservative()
	p.MaxRetryAfter = 5 * time.Minute
	zeroCeiling := Conservative()
	zeroCeiling.MaxRetryAfter = 0 // falls back to MaxDelay
	uncapped := Policy{Retry: Classes(Transient), MaxRetries: 1, BaseDelay: time.Second,
		MaxDelay: Unlimited, MaxRetryAfter: Unlimited, MaxRetryTime: Unlimited}

	tests := []struct {
		name  string
		p     Policy
		after time.Duration
		want  got
	}{
		{"wait above MaxDelay within the ceiling", p, 4 * time.Minute,
			got{Retry, 4 * time.Minute, 1, 3, "", "rate_limit: retry 1 of 3 in 4m",
				evs(start(1, 3, 4*time.Minute, "429"))}},
		{"wait above the ceiling", p, 6 * time.Minute,
			got{Stop, 0, 0, 0, "", "server asked to wait 6m, above the 5m ceiling (transient: rate_limit)", nil}},
		{"zero ceiling means MaxDelay", zeroCeiling, 61 * time.Second,
			got{Stop, 0, 0, 0, "", "server asked to wait 61s, above the 60s ceiling (transient: rate_limit)", nil}},
		{"no cap at all", uncapped, 1000 * time.Hour,
			got{Retry, 1000 * time.Hour, 1, 1, "", "rate_limit: retry 1 of 1 in 1000h",
				evs(start(1, 1, 1000*time.Hour, "429"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := withRetryAfter(fail(Transient, ReasonRateLimit, "429"), tt.after)
			if diff := cmp.Diff(tt.want, observe(NewSession(tt.p).Decide(o, t0))); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinalErrorWithoutText(t *testing.T) {
	r := NewSession(Conservative())
	r.Decide(fail(Transient, ReasonStream, ""), t0)
	_, end := retryEvents(r.Decide(fail(Permanent, ReasonInvalidRequest, ""), t0))
	if want := (events.AutoRetryEnd{Attempt: 1, FinalError: "Retry failed"}); end == nil || *end != want {
		t.Errorf("auto_retry_end: got %+v, want %+v", end, want)
	}
}

// TestCompactionReasons checks which compaction a Compact asks for: an
// overflow recovery retries, a successful turn that already exceeded the
// window is compacted without a retry, and a fresh tracker agrees.
func TestCompactionReasons(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	overflowOutcome := Outcome{Stop: StopError, Classification: Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "overflow.context_window"}}
	overWindow := Outcome{Stop: StopEndTurn, Content: ContentText, Usage: TokenUsage{Input: 190000, Output: 15000, ContextWindow: 200000}}
	within := Outcome{Stop: StopEndTurn, Content: ContentText, Usage: TokenUsage{Input: 100000, Output: 1000, ContextWindow: 200000}}
	for _, tc := range []struct {
		name   string
		p      Policy
		o      Outcome
		action Action
		reason CompactionReason
		retry  bool
	}{
		{"overflow recovery", Conservative(), overflowOutcome, Compact, CompactionOverflow, true},
		{"over the window after success", Conservative(), overWindow, Compact, CompactionThreshold, false},
		{"over the window, persistent", Persistent(), overWindow, Compact, CompactionThreshold, false},
		{"within the window", Conservative(), within, None, "", false},
		{"zero policy does not compact", Policy{}, overWindow, None, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewSession(tc.p)
			d := r.Decide(tc.o, now)
			if d.Action != tc.action || d.Compaction != tc.reason {
				t.Fatalf("got %v/%q (%s), want %v/%q", d.Action, d.Compaction, d.Explain(), tc.action, tc.reason)
			}
			if d.Action != Compact {
				return
			}
			r.CompactionStarted(d.Compaction, now)
			end := r.CompactionEnded(&CompactionResult{TokensBefore: 205000, EstimatedTokensAfter: 40000}, nil, now)
			if end.WillRetry != tc.retry {
				t.Errorf("WillRetry = %v, want %v", end.WillRetry, tc.retry)
			}
		})
	}
}

// TestReviewedEdges pins behaviours a review asked about: a zero Session is
// usable, an unknown output count is not an early length stop.
func TestReviewedEdges(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var zero Session
	zero.UserMessage(now)
	d := zero.Decide(Outcome{Stop: StopError, Classification: Classification{Class: Overflow, Reason: ReasonContextWindow}}, now)
	if d.Action != Stop {
		t.Errorf("zero Session on overflow: %v (%s), want stop (its zero Policy recovers nothing)", d.Action, d.Explain())
	}
	r := NewSession(Conservative())
	d = r.Decide(Outcome{Stop: StopLength, Usage: TokenUsage{MaxOutput: 8192}}, now)
	if d.Action == Compact {
		t.Errorf("length stop with unknown output compacted: %s", d.Explain())
	}
	d = r.Decide(Outcome{Stop: StopLength, Usage: TokenUsage{Output: 100, MaxOutput: 8192}}, now)
	if d.Action != Compact {
		t.Errorf("early length stop: %v, want compact", d.Action)
	}
}

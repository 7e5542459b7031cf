package erradvisor

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor/events"
)

// The Decision a Session returns for each outcome, its Action and its Cause,
// live here.

// Action is what the host does next.
type Action uint8

// The actions.
const (
	// None: nothing to do; the turn stands as it is.
	None Action = iota
	// Retry: wait Decision.Delay, then send the same request again.
	Retry
	// Compact: compact the conversation, reporting it with
	// Session.CompactionStarted(Decision.Compaction, ...) and
	// Session.CompactionEnded; for an overflow recovery, then make one fresh
	// attempt when the end event's WillRetry says so.
	Compact
	// Continue: send Decision.Text as a hidden user message to let the model
	// carry on; an empty Text (a paused turn) means sending the conversation
	// again as it is.
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

// Cause says why a Decision was taken, as a value a host or a UI can branch
// on; Decision.Explain says the same in words.
type Cause uint8

// The causes, grouped by the action they go with.
const (
	// CauseNone: the zero Decision.
	CauseNone Cause = iota

	// CauseSuccess (None): the turn succeeded.
	CauseSuccess
	// CauseAborted (None): the user aborted the request.
	CauseAborted
	// CauseRetryCanceled (None): a pending retry was given up because the
	// user cancelled it or typed a new message.
	CauseRetryCanceled
	// CauseOutputLimit (None): a length stop at the output limit that the
	// policy does not continue.
	CauseOutputLimit
	// CauseNudgeSpent (None): a second empty stop after this user message's
	// nudge.
	CauseNudgeSpent

	// CauseRetryable (Retry): a failure the policy retries.
	CauseRetryable

	// CauseRetriesExhausted (Stop): the streak used Policy.MaxRetries.
	CauseRetriesExhausted
	// CauseRetryTimeExhausted (Stop): the next retry would end past
	// Policy.MaxRetryTime; Decision.Ceiling is that budget.
	CauseRetryTimeExhausted
	// CauseWaitTooLong (Stop): the server asked to wait longer
	// (Classification.RetryAfter) than the policy honours (Decision.Ceiling),
	// whatever class the wait gave the failure.
	CauseWaitTooLong
	// CauseNotRetryable (Stop): a failure of a class the policy does not
	// retry (permanent, or unknown under Conservative).
	CauseNotRetryable
	// CauseQuota (Stop): a quota or billing limit; Classification.ResetAt
	// says when it resets, when the provider said.
	CauseQuota
	// CauseClientRetried (Stop): the error says a client-side retry layer
	// (the SDK's) already retried and gave up
	// (Classification.RetriesExhausted); retrying on top would multiply the
	// attempts. Turn the SDK's own retries off and let the Session decide.
	CauseClientRetried
	// CauseRecoverySpent (Stop): an overflow again, after this user
	// message's one recovery.
	CauseRecoverySpent
	// CauseModelChanged (Stop): an overflow on a model the user has since
	// switched away from.
	CauseModelChanged
	// CauseNoRecovery (Stop): an overflow under a policy that does not
	// compact.
	CauseNoRecovery
	// CauseContinuationCap (Stop): Policy.MaxContinuations was reached.
	CauseContinuationCap
	// CauseRefused (Stop): the model refused or a content filter cut the
	// answer.
	CauseRefused
	// CauseUnknownStop (Stop): the turn ended for a reason the host did not
	// recognise, with nothing usable in it.
	CauseUnknownStop

	// CauseOverflow (Compact): a context overflow, recovered once.
	CauseOverflow
	// CauseEarlyLength (Compact): a length stop below the output limit,
	// recovered like an overflow.
	CauseEarlyLength
	// CauseOverWindow (Compact): a successful turn whose usage exceeded the
	// context window; compacted without a retry.
	CauseOverWindow

	// CauseContinueLength (Continue): a length stop with context to spare.
	CauseContinueLength
	// CauseContinueThinking (Continue): a stop with thinking only.
	CauseContinueThinking
	// CauseContinueSilent (Continue): a stop with nothing at all.
	CauseContinueSilent
	// CauseContinuePaused (Continue): the provider paused the turn.
	CauseContinuePaused

	// CauseNudge (Nudge): an empty or thinking-only stop, nudged once.
	CauseNudge

	// CauseDeferPattern (Defer): the error matches Policy.DeferPatterns.
	CauseDeferPattern
	// CauseLowContext (Defer): a length stop with too little context left
	// to continue; left to the host's compaction.
	CauseLowContext

	numCauses
)

var causeNames = [numCauses]string{
	CauseNone:               "none",
	CauseSuccess:            "success",
	CauseAborted:            "aborted",
	CauseRetryCanceled:      "retry_canceled",
	CauseOutputLimit:        "output_limit",
	CauseNudgeSpent:         "nudge_spent",
	CauseRetryable:          "retryable",
	CauseRetriesExhausted:   "retries_exhausted",
	CauseRetryTimeExhausted: "retry_time_exhausted",
	CauseWaitTooLong:        "wait_too_long",
	CauseNotRetryable:       "not_retryable",
	CauseQuota:              "quota",
	CauseClientRetried:      "client_retried",
	CauseRecoverySpent:      "recovery_spent",
	CauseModelChanged:       "model_changed",
	CauseNoRecovery:         "no_recovery",
	CauseContinuationCap:    "continuation_cap",
	CauseRefused:            "refused",
	CauseUnknownStop:        "unknown_stop",
	CauseOverflow:           "overflow",
	CauseEarlyLength:        "early_length",
	CauseOverWindow:         "over_window",
	CauseContinueLength:     "continue_length",
	CauseContinueThinking:   "continue_thinking",
	CauseContinueSilent:     "continue_silent",
	CauseContinuePaused:     "continue_paused",
	CauseNudge:              "nudge",
	CauseDeferPattern:       "defer_pattern",
	CauseLowContext:         "low_context",
}

// String returns the cause's snake_case name, such as "retries_exhausted".
func (c Cause) String() string {
	if c < numCauses {
		return causeNames[c]
	}
	return "cause(" + strconv.Itoa(int(c)) + ")"
}

// Decision is a Session's answer to one Outcome.
//
// Decisions are values; building one does not allocate. The text of
// Explain, LogValue and the slice of Events are built when asked for.
type Decision struct {
	// Action is what to do.
	Action Action
	// Cause is why.
	Cause Cause
	// Delay is how long to wait before a Retry.
	Delay time.Duration
	// Attempt is the retry number for Retry and for a Stop after retries,
	// and the continuation number for Continue and Nudge; it counts from 1.
	Attempt int
	// Max is the policy's limit for Attempt, or 0 when there is none.
	Max int
	// Ceiling is the limit a Stop ran into: the longest wait the policy
	// honours for CauseWaitTooLong, the retry-time budget for
	// CauseRetryTimeExhausted; zero otherwise.
	Ceiling time.Duration
	// Classification is the verdict on the failure, when there was one: the
	// one the Session's notes will use too.
	Classification Classification
	// Text is the hidden user message for Continue and Nudge.
	Text string
	// Compaction is the reason to report for a Compact: CompactionOverflow
	// for a recovery, after which the request is retried once (the end
	// event's WillRetry says so), and CompactionThreshold for a successful
	// turn whose usage already exceeded the context window, which is
	// compacted without a retry. Pass it to Session.CompactionStarted.
	Compaction CompactionReason

	remaining int // tokens left in the window for a deferred length stop
	threshold int
	detail    string // the matched defer pattern, or the failing model
	current   string // the current model
	at        time.Time
	ev        decisionEvents
}

// decisionEvents holds the events of one Decision without boxing them.
type decisionEvents struct {
	kinds      uint8
	attempt    int
	max        int
	delay      time.Duration
	message    string // the failure's text, redacted when the events are built
	endAttempt int
	endSuccess bool
	endError   string
	source     Summarizing
	reason     CompactionReason
}

const (
	evRetryStart uint8 = 1 << iota
	evRetryEnd
	evSummaryScheduled
	evSummaryAttempt
	evSummaryFinished
)

// Events returns the lifecycle events that belong to d, in the reference
// agent's wire shapes, ready to stream: auto_retry_end when d closes a
// streak of retries that happened (success true on the first turn that
// succeeds), then auto_retry_start for a Retry. For a summarization request
// the family is summarization_retry_*: a Retry carries
// summarization_retry_scheduled and then
// summarization_retry_attempt_start, which a host streaming live sends once
// the delay has passed. Error texts are redacted. It returns nil when there
// are none.
func (d Decision) Events() []events.Event {
	e := &d.ev
	if e.kinds == 0 {
		return nil
	}
	var out []events.Event
	if e.kinds&evRetryEnd != 0 {
		end := events.AutoRetryEnd{Success: e.endSuccess, Attempt: e.endAttempt}
		if !e.endSuccess {
			end.FinalError = Redact(e.endError)
		}
		out = append(out, end)
	}
	if e.kinds&evRetryStart != 0 {
		out = append(out, events.AutoRetryStart{
			Attempt: e.attempt, MaxAttempts: e.max,
			DelayMs: e.delay.Milliseconds(), ErrorMessage: Redact(e.message),
		})
	}
	if e.kinds&evSummaryScheduled != 0 {
		out = append(out, events.SummarizationRetryScheduled{
			Attempt: e.attempt, MaxAttempts: e.max,
			DelayMs: e.delay.Milliseconds(), ErrorMessage: Redact(e.message),
		})
	}
	if e.kinds&evSummaryAttempt != 0 {
		ev := events.SummarizationRetryAttemptStart{Source: "branchSummary"}
		if e.source == SummarizingCompaction {
			ev.Source, ev.Reason = "compaction", string(e.reason)
		}
		out = append(out, ev)
	}
	if e.kinds&evSummaryFinished != 0 {
		out = append(out, events.SummarizationRetryFinished{})
	}
	return out
}

// Explain returns a one-line human reason for d, such as "retries exhausted
// after 3 attempts: overloaded" or "quota: resets at 15:00 UTC". It is
// meant for Stop and Defer, and says something for every action.
func (d Decision) Explain() string {
	c := d.Classification
	switch d.Cause {
	case CauseSuccess:
		return "turn succeeded"
	case CauseAborted:
		return "aborted by the user"
	case CauseRetryCanceled:
		return "retry cancelled"
	case CauseRetryable:
		return fmt.Sprintf("%s: retry %s in %s", failureName(c), ofMax(d.Attempt, d.Max), shortDuration(d.Delay))
	case CauseRetriesExhausted:
		return fmt.Sprintf("retries exhausted after %d attempts: %s", d.Attempt, failureName(c))
	case CauseRetryTimeExhausted:
		return fmt.Sprintf("retry time budget of %s used up after %d attempts: %s", shortDuration(d.Ceiling), d.Attempt, failureName(c))
	case CauseNotRetryable:
		switch {
		case c.outside():
			return "no failure of a model request (" + c.Rule + "): not retried"
		case c.Class == Unknown:
			return "unrecognised error: not retried by this policy"
		}
		return classAndReason(c) + ", not retried"
	case CauseQuota:
		s := classAndReason(c)
		if !c.ResetAt.IsZero() {
			s += ", resets " + resetPhrase(c.ResetAt, d.at)
		}
		return s
	case CauseClientRetried:
		return classAndReason(c) + ": the client's own retries already gave up, not retried again"
	case CauseWaitTooLong:
		s := fmt.Sprintf("server asked to wait %s, above the %s ceiling (%s", shortDuration(c.RetryAfter), shortDuration(d.Ceiling), classAndReason(c))
		if !c.ResetAt.IsZero() && (c.Class == Quota || c.Class == Billing) {
			s += ", resets " + resetPhrase(c.ResetAt, d.at)
		}
		return s + ")"
	case CauseOverflow:
		return "context overflow: compact, then one fresh attempt"
	case CauseEarlyLength:
		return "early length stop: compact, then one fresh attempt"
	case CauseRecoverySpent:
		return "context overflow again: the recovery for this user message was already used"
	case CauseModelChanged:
		return fmt.Sprintf("context overflow on %s, but the current model is %s: not compacted", d.detail, d.current)
	case CauseNoRecovery:
		return "context overflow: this policy does not compact"
	case CauseDeferPattern:
		return fmt.Sprintf("left to the host's retry layer (matches %q)", d.detail)
	case CauseLowContext:
		return fmt.Sprintf("length stop with %d tokens of context left, not above %d: left to compaction", d.remaining, d.threshold)
	case CauseContinueLength:
		return "length stop: continue " + ofMax(d.Attempt, d.Max)
	case CauseContinueThinking:
		return "thinking-only stop: continue " + ofMax(d.Attempt, d.Max)
	case CauseContinueSilent:
		return "silent stop: continue " + ofMax(d.Attempt, d.Max)
	case CauseContinuePaused:
		return "paused turn: continue " + ofMax(d.Attempt, d.Max)
	case CauseContinuationCap:
		return fmt.Sprintf("automatic continuation limit reached (%d)", d.Max)
	case CauseNudge:
		if d.detail != "" {
			return d.detail + " stop: nudge once"
		}
		return "empty stop: nudge once"
	case CauseNudgeSpent:
		return "empty stop again after a nudge: given up"
	case CauseOutputLimit:
		return "output limit reached"
	case CauseOverWindow:
		return "the turn's usage exceeded the context window: compact, no retry"
	case CauseRefused:
		return "the model refused or a content filter cut the answer: not retried"
	case CauseUnknownStop:
		return "the turn ended for an unrecognised reason with nothing usable"
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

// LogValue implements slog.LogValuer: the action, the cause, the non-zero
// fields and the explanation. Nothing in it quotes provider text.
func (d Decision) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs, slog.String("action", d.Action.String()), slog.String("cause", d.Cause.String()))
	if d.Delay > 0 {
		attrs = append(attrs, slog.Duration("delay", d.Delay))
	}
	if d.Attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", d.Attempt))
	}
	if d.Max > 0 {
		attrs = append(attrs, slog.Int("max", d.Max))
	}
	if d.Ceiling > 0 {
		attrs = append(attrs, slog.Duration("ceiling", d.Ceiling))
	}
	if d.Classification != (Classification{}) {
		attrs = append(attrs, slog.Any("classification", d.Classification))
	}
	attrs = append(attrs, slog.String("why", d.Explain()))
	return slog.GroupValue(attrs...)
}

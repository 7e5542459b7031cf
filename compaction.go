package erradvisor

import (
	"sync"
	"time"
)

// CompactionReason says why a compaction ran.
type CompactionReason string

// The compaction reasons the reference agent reports.
const (
	// CompactionManual is a compaction the user asked for.
	CompactionManual CompactionReason = "manual"
	// CompactionThreshold is a compaction the host ran because the context
	// neared its limit.
	CompactionThreshold CompactionReason = "threshold"
	// CompactionOverflow is a recovery from a context-overflow failure.
	CompactionOverflow CompactionReason = "overflow"
)

// CompactionOutcome is what became of the last overflow recovery, as far as
// the model needs to know.
type CompactionOutcome uint8

// The outcomes of an overflow recovery.
const (
	// CompactionNone means there is nothing to report.
	CompactionNone CompactionOutcome = iota
	// CompactionCompacted means the conversation was compacted and the
	// request is being retried.
	CompactionCompacted
	// CompactionNotCompleted means the recovery compaction failed, did not
	// shrink the context, or never reported an end.
	CompactionNotCompleted
)

// String returns "none", "compacted" or "not_completed".
func (o CompactionOutcome) String() string {
	switch o {
	case CompactionCompacted:
		return "compacted"
	case CompactionNotCompleted:
		return "not_completed"
	default:
		return "none"
	}
}

// CompactionReport is the one-shot outcome of an overflow recovery, handed to
// the next request's notes exactly once.
type CompactionReport struct {
	Outcome CompactionOutcome
	// Result is the host's result for a completed compaction, else nil.
	Result *CompactionResult
	// Error says why the compaction did not complete, when known.
	Error string
	// At is when the outcome was observed.
	At time.Time
}

// CompactionTracker pairs compaction starts and ends, keeps the one-shot
// outcome of an overflow recovery for the next request, and holds the
// recovery latch: at most one overflow recovery per user turn. A Retrier and
// an Advisor of the same session share one tracker, so the decision to
// compact and the note about it never disagree.
//
// The zero value is ready to use. A CompactionTracker is safe for concurrent
// use.
type CompactionTracker struct {
	mu sync.Mutex

	recoveryClaimed bool // an overflow recovery was spent in this user turn

	pending       bool // a compaction started and has not ended
	pendingReason CompactionReason
	pendingAt     time.Time

	report CompactionReport // unconsumed one-shot outcome
}

// NewCompactionTracker returns an empty tracker.
func NewCompactionTracker() *CompactionTracker { return new(CompactionTracker) }

// UserTurn records a new user message: it re-arms the recovery latch.
func (t *CompactionTracker) UserTurn() {
	t.mu.Lock()
	t.recoveryClaimed = false
	t.mu.Unlock()
}

// ClaimRecovery claims this user turn's single overflow recovery. It returns
// false when the recovery was already spent, in which case the caller must
// not compact-and-retry again.
func (t *CompactionTracker) ClaimRecovery() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.recoveryClaimed {
		return false
	}
	t.recoveryClaimed = true
	return true
}

// RecoveryClaimed reports whether this user turn's overflow recovery is spent.
func (t *CompactionTracker) RecoveryClaimed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.recoveryClaimed
}

// Started records that a compaction began and returns its event. An
// overflow compaction also spends the recovery latch, whoever started it.
func (t *CompactionTracker) Started(reason CompactionReason, at time.Time) CompactionStart {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending && t.pendingReason == CompactionOverflow && reason != CompactionOverflow {
		// The recovery never reported its end; say so rather than lose it.
		t.report = CompactionReport{Outcome: CompactionNotCompleted, Error: "compaction did not report an end", At: t.pendingAt}
	}
	t.pending, t.pendingReason, t.pendingAt = true, reason, at
	if reason == CompactionOverflow {
		t.recoveryClaimed = true
		t.report = CompactionReport{}
	}
	return CompactionStart{Reason: reason}
}

// Ended records the end of the compaction last started and returns its
// event. err non-nil, or a nil res, means the compaction failed. An overflow
// recovery whose result did not shrink the context (EstimatedTokensAfter not
// below TokensBefore, when both are known) counts as failed, with a nil
// Result in the event, so that a compaction that cannot help never loops. WillRetry in the returned event
// is true only for an overflow recovery that compacted. An end with no
// compaction under way changes nothing and reports the reason of the last
// compaction.
func (t *CompactionTracker) Ended(res *CompactionResult, err error, at time.Time) CompactionEnd {
	t.mu.Lock()
	defer t.mu.Unlock()
	reason, tracked := t.pendingReason, t.pending
	t.pending = false
	ev := CompactionEnd{Reason: reason, Result: res}
	switch {
	case err != nil:
		ev.Result = nil
		ev.ErrorMessage = err.Error()
	case res == nil:
		ev.ErrorMessage = "compaction produced no result"
	case reason == CompactionOverflow && res.TokensBefore > 0 && res.EstimatedTokensAfter >= res.TokensBefore:
		// A recovery that cannot help must not loop; the result is
		// reported as the failure it is.
		ev.Result = nil
		ev.ErrorMessage = "compaction did not reduce the context"
	}
	if reason != CompactionOverflow || !tracked {
		return ev
	}
	if ev.ErrorMessage != "" {
		t.report = CompactionReport{Outcome: CompactionNotCompleted, Error: ev.ErrorMessage, At: at}
		return ev
	}
	ev.WillRetry = true
	t.report = CompactionReport{Outcome: CompactionCompacted, Result: res, At: at}
	return ev
}

// Canceled records that the user cancelled the compaction last started. A
// cancelled compaction leaves no report: user aborts are silent. A cancel
// with no compaction under way changes nothing.
func (t *CompactionTracker) Canceled(at time.Time) CompactionEnd {
	t.mu.Lock()
	defer t.mu.Unlock()
	reason, tracked := t.pendingReason, t.pending
	t.pending = false
	if reason == CompactionOverflow && tracked {
		t.report = CompactionReport{}
	}
	return CompactionEnd{Reason: reason, Aborted: true}
}

// TakeReport returns the outcome of the last overflow recovery and forgets
// it, so it is reported once. An overflow compaction that started and has not
// ended by the time the next request is built is reported as not completed.
func (t *CompactionTracker) TakeReport(now time.Time) (CompactionReport, bool) {
	return t.report1(true)
}

// PeekReport returns what TakeReport would return now, and forgets nothing.
func (t *CompactionTracker) PeekReport(now time.Time) (CompactionReport, bool) {
	return t.report1(false)
}

func (t *CompactionTracker) report1(take bool) (CompactionReport, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.report
	if t.pending && t.pendingReason == CompactionOverflow {
		r = CompactionReport{Outcome: CompactionNotCompleted, Error: "compaction did not report an end", At: t.pendingAt}
		if take {
			t.pending = false
		}
	}
	if take {
		t.report = CompactionReport{}
	}
	return r, r.Outcome != CompactionNone
}

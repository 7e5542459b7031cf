package erradvisor

// The overflow-recovery tracker lives here: it pairs compaction starts and
// ends, keeps the one-shot outcome of a recovery for the next request's
// notes, and holds the recovery latch, at most one overflow recovery per
// user message. A Session owns one; its methods CompactionStarted,
// CompactionEnded and CompactionCanceled feed it.

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

// CompactionResult describes a finished compaction, as the host reports it
// to Session.CompactionEnded.
type CompactionResult struct {
	// Summary is the summary that replaced the compacted turns.
	Summary string
	// FirstKeptEntryID is the id of the first entry kept after the summary.
	FirstKeptEntryID string
	// TokensBefore is the context size before the compaction, when known.
	TokensBefore int
	// EstimatedTokensAfter is the estimated context size after it, when
	// known.
	EstimatedTokensAfter int
}

// compactionOutcome is what became of the last overflow recovery, as far as
// the model needs to know.
type compactionOutcome uint8

const (
	compactionNone compactionOutcome = iota
	// compactionCompacted: the conversation was compacted and the request
	// is being retried.
	compactionCompacted
	// compactionNotCompleted: the recovery compaction failed, did not
	// shrink the context, or never reported an end.
	compactionNotCompleted
)

func (o compactionOutcome) String() string {
	switch o {
	case compactionCompacted:
		return "compacted"
	case compactionNotCompleted:
		return "not_completed"
	}
	return "none"
}

// compactionReport is the one-shot outcome of an overflow recovery, handed
// to the next request's notes exactly once.
type compactionReport struct {
	outcome compactionOutcome
	result  CompactionResult // for compactionCompacted
	err     string           // why it did not complete, when known
}

// compactionTracker is the tracker's state. Its zero value is ready; the
// Session's lock guards it.
type compactionTracker struct {
	recoveryClaimed bool // an overflow recovery was spent in this user message

	pending       bool // a compaction started and has not ended
	pendingReason CompactionReason
	noEndTold     bool // the pending recovery was reported as not completed

	report compactionReport // unconsumed one-shot outcome
}

// userMessage re-arms the recovery latch.
func (t *compactionTracker) userMessage() { t.recoveryClaimed = false }

// claimRecovery claims this user message's single overflow recovery. It
// returns false when the recovery was already spent.
func (t *compactionTracker) claimRecovery() bool {
	if t.recoveryClaimed {
		return false
	}
	t.recoveryClaimed = true
	return true
}

const noEnd = "compaction did not report an end"

// started records that a compaction began. An overflow compaction also
// spends the recovery latch, whoever started it.
func (t *compactionTracker) started(reason CompactionReason) {
	if t.pending && t.pendingReason == CompactionOverflow && reason != CompactionOverflow {
		// The recovery never reported its end; say so rather than lose it.
		t.report = compactionReport{outcome: compactionNotCompleted, err: noEnd}
	}
	t.pending, t.pendingReason, t.noEndTold = true, reason, false
	if reason == CompactionOverflow {
		t.recoveryClaimed = true
		t.report = compactionReport{}
	}
}

// ended records the end of the compaction last started and returns its
// event fields. See Session.CompactionEnded.
func (t *compactionTracker) ended(res *CompactionResult, err error) (reason CompactionReason, failure string, willRetry bool) {
	reason, tracked := t.pendingReason, t.pending
	t.pending = false
	switch {
	case err != nil:
		failure = safeErrorText(err)
		if failure == "" {
			failure = "compaction failed"
		}
	case res == nil:
		failure = "compaction produced no result"
	case reason == CompactionOverflow && res.TokensBefore > 0 && res.EstimatedTokensAfter >= res.TokensBefore:
		// A recovery that cannot help must not loop; the result is
		// reported as the failure it is.
		failure = "compaction did not reduce the context"
	}
	if reason != CompactionOverflow || !tracked {
		return reason, failure, false
	}
	if failure != "" {
		t.report = compactionReport{outcome: compactionNotCompleted, err: failure}
		return reason, failure, false
	}
	t.report = compactionReport{outcome: compactionCompacted, result: *res}
	return reason, "", true
}

// canceled records that the user cancelled the compaction last started: a
// cancelled recovery leaves no report, since user aborts are silent.
func (t *compactionTracker) canceled() CompactionReason {
	reason, tracked := t.pendingReason, t.pending
	t.pending = false
	if reason == CompactionOverflow && tracked {
		t.report = compactionReport{}
	}
	return reason
}

// takeReport returns the outcome of the last overflow recovery and, when
// take is set, forgets it. An overflow compaction that started and has not
// ended by the time a request is built is reported as not completed, and
// stays pending: an end reported later still completes the recovery.
func (t *compactionTracker) takeReport(take bool) (compactionReport, bool) {
	r := t.report
	if t.pending && t.pendingReason == CompactionOverflow && !t.noEndTold {
		// Reported once, but still pending: an end that comes later (the
		// request was the compaction's own summarization, say) still
		// completes the recovery.
		r = compactionReport{outcome: compactionNotCompleted, err: noEnd}
		if take {
			t.noEndTold = true
		}
	}
	if take {
		t.report = compactionReport{}
	}
	return r, r.outcome != compactionNone
}

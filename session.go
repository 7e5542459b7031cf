package erradvisor

import (
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/erradvisor/erradvisor/events"
)

// The Session, the one value a host wires into its request loop, lives here:
// it turns each turn's Outcome into a Decision under a Policy, tracks
// compactions and command failures, and remembers the verdict it decided on
// a failure so that the next request's notes say the same thing.

// Option configures a Session.
type Option func(*Session)

// WithClassifier makes the Session classify failures with c instead of the
// embedded default rules. A nil c changes nothing.
func WithClassifier(c *Classifier) Option {
	return func(s *Session) {
		if c != nil {
			s.classify = c.Classify
		}
	}
}

// WithRand sets the random source for jitter: a function returning values
// in [0, 1). Without it, the Session uses math/rand/v2's Float64.
func WithRand(f func() float64) Option {
	return func(s *Session) {
		if f != nil {
			s.rnd = f
		}
	}
}

// WithLogger makes the Session log a debug record for every decision, for
// every note built and for every failure left without a note, with the
// reason. Records never quote provider or command text.
func WithLogger(l *slog.Logger) Option {
	return func(s *Session) { s.logger = l }
}

// nextRequest is what the next outgoing request is, as far as the Session
// knows from its own decisions.
type nextRequest uint8

const (
	nextTurn     nextRequest = iota // a new user turn, or not known
	nextRetry                       // an automatic retry of a failed request
	nextRecovery                    // the fresh attempt after an overflow recovery
)

// streak counts one run of retries.
type streak struct {
	attempt int       // retries announced so far
	start   time.Time // the first failure's time
}

// verdict is the Session's decision on the latest failure, kept for the
// notes until a turn succeeds.
type verdict struct {
	ok      bool
	message string
	at      time.Time
	c       Classification
	retried int // retries announced for it before the streak ended
}

// commandFailure is a command failure waiting to be reported.
type commandFailure struct {
	ok      bool
	name    string
	errText string
	at      time.Time
}

// Session holds one conversation's decisions: its retry streak, the
// continuations since the last user message, the overflow-recovery latch,
// the compaction under way, a pending command failure and the verdict on the
// latest failure. Its methods are the whole protocol:
//
//   - UserMessage when the user sends a message;
//   - Notes (or AppendNotes) when building each request, whose notes go at
//     the end of that request only;
//   - Decide on each turn's Outcome, then act on the Decision;
//   - CompactionStarted, CompactionEnded and CompactionCanceled around every
//     compaction, and CommandFailed for a host command whose failure the
//     model cannot see.
//
// Time always comes from the host: every call takes it. Make one Session per
// conversation with NewSession; the zero Session works, with the zero
// Policy, which retries and recovers nothing.
//
// A Session is safe for concurrent use. It holds its lock while it reads a
// transcript, so the transcript's iterator must not call the Session.
type Session struct {
	mu       sync.Mutex
	p        Policy
	classify func(Failure) Classification
	rnd      func() float64
	logger   *slog.Logger

	retry         streak
	summary       streak
	continuations int  // automatic continuations since the last user message
	nudged        bool // the nudge of this user message was spent
	next          nextRequest

	tracker compactionTracker
	command commandFailure
	last    verdict

	stepFn func(Entry) bool // s.step, made once so a scan does not allocate
	scan   scanState
}

// NewSession returns a Session that decides under p. See Policy.Validate for
// checking p first.
func NewSession(p Policy, opts ...Option) *Session {
	s := &Session{p: p}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	s.ensure()
	return s
}

// ensure gives a zero Session its defaults. It is called with s.mu held.
func (s *Session) ensure() {
	if s.stepFn == nil {
		s.stepFn = s.step
	}
	if s.classify == nil {
		s.classify = Classify
	}
	if s.rnd == nil {
		s.rnd = rand.Float64
	}
}

// Policy returns the policy s decides under.
func (s *Session) Policy() Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}

// UserMessage records a new user message at now: the continuation count and
// the nudge start over, the overflow recovery is available again, and a
// pending streak of retries ends, so the next failure is attempt 1 with the
// base delay. When a streak was under way, the returned None decision
// carries its auto_retry_end (success false, "Retry cancelled").
func (s *Session) UserMessage(now time.Time) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	s.continuations, s.nudged = 0, false
	s.tracker.userMessage()
	return s.endStreaks(now)
}

// endStreaks ends the pending retry streaks, of turns and of summarization
// requests alike; the returned None decision carries the turns' streak's
// auto_retry_end when there was one.
func (s *Session) endStreaks(now time.Time) Decision {
	s.next = nextTurn
	s.summary = streak{}
	d := Decision{Action: None, at: now}
	if s.retry.attempt > 0 {
		d.Cause = CauseRetryCanceled
	}
	s.closeStreak(&d, false, cancelled)
	return d
}

// Cancel records that the user cancelled a pending retry at now (an abort
// during the backoff). When a streak of retries was under way, the returned
// None decision carries auto_retry_end with success false and finalError
// "Retry cancelled"; the streak is over either way.
func (s *Session) Cancel(now time.Time) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	return s.endStreaks(now)
}

const cancelled = "Retry cancelled"

// closeStreak ends the current streak of retries, recording its end event
// on d when it had announced a retry. A failure without text ends as
// "Retry failed".
func (s *Session) closeStreak(d *Decision, success bool, finalError string) {
	if s.retry.attempt > 0 {
		d.ev.kinds |= evRetryEnd
		d.ev.endSuccess, d.ev.endAttempt = success, s.retry.attempt
		if !success {
			d.ev.endError = finalError
			if finalError == "" {
				d.ev.endError = "Retry failed"
			}
		}
	}
	s.retry = streak{}
}

// Decide turns the outcome of the latest assistant turn, or of a
// summarization request, into a Decision. now is the host's clock: it
// starts the retry-time budget and anchors the wording of reset times. A
// failure is classified here, once (unless the Outcome carries its
// Classification), and the Session's next notes use the same verdict.
func (s *Session) Decide(o Outcome, now time.Time) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	var d Decision
	if o.Summarizing != NotSummarizing {
		d = s.decideSummary(&o, now)
	} else {
		d = s.decide(&o, now)
	}
	if s.logger != nil {
		s.logger.Debug("erradvisor: decision", slog.Any("decision", d))
	}
	return d
}

func (s *Session) decide(o *Outcome, now time.Time) Decision {
	s.next = nextTurn
	switch o.Stop {
	case StopAborted:
		d := Decision{Action: None, Cause: CauseAborted, at: now}
		s.closeStreak(&d, false, cancelled)
		return d
	case StopError:
		return s.onError(o, now)
	}
	// The request succeeded: the streak and the failure it was about end.
	d := Decision{Action: None, Cause: CauseSuccess, at: now}
	s.closeStreak(&d, true, "")
	s.last = verdict{}
	switch o.Stop {
	case StopLength:
		s.onLength(o, &d)
		return d
	case StopContextWindow:
		d.Classification = Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "stop.context_window"}
		s.recoverOverflow(o, &d, CauseOverflow)
		return d
	case StopRefused:
		d.Action, d.Cause = Stop, CauseRefused
		d.Classification = Classification{Class: Permanent, Reason: ReasonContentPolicy, Rule: "stop.refused"}
		return d
	case StopPaused:
		s.continueTurn(&d, CauseContinuePaused, "")
		return d
	}
	if u := o.Usage; s.p.RecoverOverflow && u.ContextWindow > 0 && u.Used() > u.ContextWindow && o.sameModel() {
		// The answer is kept; the next request would overflow.
		d.Action, d.Cause, d.Compaction = Compact, CauseOverWindow, CompactionThreshold
		return d
	}
	switch {
	case o.Content.usable() && o.Stop != StopUnknown || o.Content&(ContentText|ContentToolCalls) != 0:
	case o.Stop == StopUnknown:
		d.Action, d.Cause = Stop, CauseUnknownStop
	case o.Stop == StopEndTurn:
		s.onEmpty(o, &d)
	}
	return d
}

// failureText is the text of o's failure, for events and defer patterns.
func failureText(o *Outcome) string {
	if o.Failure.Message != "" {
		return o.Failure.Message
	}
	return safeErrorText(o.Failure.Err)
}

// verdictOf returns the classification of o's failure: the host's, or the
// Session's own reading of o.Failure.
func (s *Session) verdictOf(o *Outcome) Classification {
	if o.Classification != (Classification{}) {
		return o.Classification
	}
	f := o.Failure
	if f.Provider == "" {
		f.Provider = o.Provider
	}
	if f.Model == "" {
		f.Model = o.Model
	}
	return s.classify(f)
}

func (s *Session) onError(o *Outcome, now time.Time) Decision {
	c := s.verdictOf(o)
	msg := failureText(o)
	d := Decision{Classification: c, at: now}
	if c.Class == Canceled {
		d.Action, d.Cause = None, CauseAborted
		s.closeStreak(&d, false, cancelled)
		s.last = verdict{}
		return d
	}
	at := o.Failure.At
	if at.IsZero() {
		at = now
	}
	s.last = verdict{ok: true, message: msg, at: at, c: c, retried: s.retry.attempt}
	if p := matchPattern(msg, s.p.DeferPatterns); p != "" {
		d.Action, d.Cause, d.detail = Defer, CauseDeferPattern, p
		return d
	}
	retryable := s.p.retries(c.Class)
	if (c.Class == Overflow || c.Class == Unknown) && s.p.retryStatus(o.Failure.Status) {
		retryable = true
	}
	ceiling := s.p.retryAfterCeiling()
	switch {
	case c.RetryAfter > ceiling && (retryable || movedByWait(c)):
		d.Action, d.Cause, d.Ceiling = Stop, CauseWaitTooLong, ceiling
	case retryable && c.RetriesExhausted:
		// The SDK's own retries already gave up: retrying on top would
		// multiply the attempts. (Turn the SDK's retries off instead.)
		d.Action, d.Cause = Stop, CauseClientRetried
	case retryable:
		if s.retryOn(&s.retry, &d, msg, now) {
			s.next = nextRetry
			d.ev.kinds |= evRetryStart
			return d
		}
	case c.Class == Overflow:
		s.closeStreak(&d, false, msg)
		s.recoverOverflow(o, &d, CauseOverflow)
		return d
	case c.Class == Quota || c.Class == Billing:
		d.Action, d.Cause = Stop, CauseQuota
	default:
		d.Action, d.Cause = Stop, CauseNotRetryable
	}
	s.closeStreak(&d, false, msg)
	return d
}

// movedByWait reports a verdict that a long stated wait moved from a rate
// limit to a quota (the classifier marks the rule so).
func movedByWait(c Classification) bool { return strings.HasSuffix(c.Rule, ".long_wait") }

// retryOn fills d with the next retry of st, and reports true; or with a
// Stop when st is exhausted, by count or by time, and reports false.
func (s *Session) retryOn(st *streak, d *Decision, msg string, now time.Time) bool {
	c := d.Classification
	limit := s.p.maxRetries()
	if limit < 0 {
		limit = 0 // no limit; 0 is also how events say so
	} else if st.attempt >= limit {
		d.Action, d.Cause, d.Attempt, d.Max = Stop, CauseRetriesExhausted, st.attempt, limit
		return false
	}
	next := st.attempt + 1
	var rnd float64
	if s.p.Jitter != JitterNone {
		rnd = s.rnd()
	}
	delay := max(Backoff(s.p, next, rnd), c.RetryAfter)
	start := st.start
	if st.attempt == 0 || start.IsZero() {
		start = now
	}
	if budget := s.p.maxRetryTime(); budget > 0 && !now.IsZero() && now.Add(delay).Sub(start) > budget {
		d.Action, d.Cause, d.Attempt, d.Max, d.Ceiling = Stop, CauseRetryTimeExhausted, st.attempt, limit, budget
		return false
	}
	st.attempt, st.start = next, start
	d.Action, d.Cause, d.Delay, d.Attempt, d.Max = Retry, CauseRetryable, delay, next, limit
	d.ev.attempt, d.ev.max, d.ev.delay, d.ev.message = next, limit, delay, msg
	return true
}

// recoverOverflow fills d with a Compact for an overflow when the policy,
// the models and the recovery latch allow one, and with a Stop that says why
// not otherwise.
func (s *Session) recoverOverflow(o *Outcome, d *Decision, why Cause) {
	switch {
	case !s.p.RecoverOverflow:
		d.Action, d.Cause = Stop, CauseNoRecovery
	case !o.sameModel():
		d.Action, d.Cause, d.detail, d.current = Stop, CauseModelChanged, o.model(), o.CurrentModel
	case !s.tracker.claimRecovery():
		d.Action, d.Cause = Stop, CauseRecoverySpent
	default:
		d.Action, d.Cause, d.Compaction = Compact, why, CompactionOverflow
		s.next = nextRecovery
	}
}

// onLength decides a length stop: an early one is recovered like an overflow
// when the latch allows, a genuine one (or an early one that cannot be
// recovered) is continued when the policy says so and context remains.
func (s *Session) onLength(o *Outcome, d *Decision) {
	d.Cause = CauseOutputLimit
	u := o.Usage
	early := u.MaxOutput > 0 && u.Output > 0 && u.Output < u.MaxOutput // 0 output: not known
	if early && s.p.RecoverEarlyLength && o.sameModel() && s.tracker.claimRecovery() {
		d.Action, d.Cause, d.Compaction = Compact, CauseEarlyLength, CompactionOverflow
		s.next = nextRecovery
		return
	}
	if !s.p.ContinueOnLength {
		return
	}
	if m := s.p.minRemainingTokens(); m > 0 && u.ContextWindow > 0 {
		if left := u.ContextWindow - u.Used(); left <= m {
			d.Action, d.Cause, d.remaining, d.threshold = Defer, CauseLowContext, left, m
			return
		}
	}
	s.continueTurn(d, CauseContinueLength, s.p.continueText())
}

// onEmpty decides a normal stop that the host says produced nothing usable.
func (s *Session) onEmpty(o *Outcome, d *Decision) {
	thinkingOnly := o.Content.thinkingOnly()
	switch {
	case thinkingOnly && s.p.ContinueOnThinkingOnly:
		s.continueTurn(d, CauseContinueThinking, s.p.continueText())
		return
	case !thinkingOnly && s.p.ContinueOnSilentStop && o.After != AfterOther:
		s.continueTurn(d, CauseContinueSilent, s.p.continueText())
		return
	}
	if !s.p.NudgeEmpty {
		return
	}
	if s.nudged {
		d.Action, d.Cause = None, CauseNudgeSpent
		return
	}
	s.nudged = true
	d.Action, d.Cause, d.Text, d.Attempt, d.Max = Nudge, CauseNudge, s.p.nudgeText(), 1, 1
	if thinkingOnly {
		d.detail = "thinking-only"
	}
}

func (s *Session) continueTurn(d *Decision, why Cause, text string) {
	limit := s.p.maxContinuations()
	if limit < 0 {
		limit = 0
	} else if s.continuations >= limit {
		d.Action, d.Cause, d.Attempt, d.Max = Stop, CauseContinuationCap, s.continuations, limit
		return
	}
	s.continuations++
	d.Action, d.Cause, d.Text = Continue, why, text
	d.Attempt, d.Max = s.continuations, limit
}

// decideSummary decides the outcome of a compaction's or branch summary's
// own summarization request: failures the policy retries are retried with
// the summarization_retry_* events and a count of their own; anything else
// ends the run.
func (s *Session) decideSummary(o *Outcome, now time.Time) Decision {
	d := Decision{Action: None, Cause: CauseSuccess, at: now}
	d.ev.source, d.ev.reason = o.Summarizing, s.tracker.pendingReason
	if o.Stop == StopError {
		c := s.verdictOf(o)
		msg := failureText(o)
		d.Classification = c
		switch {
		case c.Class == Canceled:
			d.Cause = CauseAborted
		case c.RetryAfter > s.p.retryAfterCeiling() && (s.p.retries(c.Class) || movedByWait(c)):
			d.Action, d.Cause, d.Ceiling = Stop, CauseWaitTooLong, s.p.retryAfterCeiling()
		case s.p.retries(c.Class) && c.RetriesExhausted:
			d.Action, d.Cause = Stop, CauseClientRetried
		case s.p.retries(c.Class):
			if s.retryOn(&s.summary, &d, msg, now) {
				d.ev.kinds |= evSummaryScheduled | evSummaryAttempt
				return d
			}
		case c.Class == Quota || c.Class == Billing:
			d.Action, d.Cause = Stop, CauseQuota
		default:
			d.Action, d.Cause = Stop, CauseNotRetryable
		}
	} else if o.Stop == StopAborted {
		d.Cause = CauseAborted
	}
	if s.summary.attempt > 0 {
		d.ev.kinds |= evSummaryFinished
	}
	s.summary = streak{}
	return d
}

// CompactionStarted records that a compaction began at now, for reason,
// and returns its compaction_start event. An overflow compaction spends this
// user message's recovery, whoever started it.
func (s *Session) CompactionStarted(reason CompactionReason, now time.Time) events.CompactionStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tracker.started(reason)
	return compactionStartEvent(reason)
}

// CompactionEnded records at now that the compaction last started ended
// with res, or failed with err, and returns its compaction_end event. A
// non-nil err, or a nil res, means it failed. An overflow recovery whose
// result did not shrink the context (EstimatedTokensAfter not below
// TokensBefore, when both are known) counts as failed, so that a compaction
// that cannot help never loops. The event's WillRetry is true only for an
// overflow recovery that compacted: then make the one fresh attempt. The
// next request's notes report the recovery's outcome once.
func (s *Session) CompactionEnded(res *CompactionResult, err error, now time.Time) events.CompactionEnd {
	s.mu.Lock()
	defer s.mu.Unlock()
	reason, failure, willRetry := s.tracker.ended(res, err)
	if willRetry {
		s.next = nextRecovery
	}
	return compactionEndEvent(reason, res, failure, false, willRetry)
}

// CompactionCanceled records at now that the user cancelled the compaction
// last started, and returns its compaction_end event (aborted). A cancelled
// recovery gives no note: user aborts are silent.
func (s *Session) CompactionCanceled(now time.Time) events.CompactionEnd {
	s.mu.Lock()
	defer s.mu.Unlock()
	reason := s.tracker.canceled()
	return compactionEndEvent(reason, nil, "", true, false)
}

// CommandFailed records that the host command name failed with err at now.
// The next request built within Policy.CommandTTL carries a note about it;
// if the note cap cuts it, a later request carries it instead. Only the
// latest failure is kept. Use it for commands whose failure the model
// cannot otherwise see, not for tool or shell errors already in the
// transcript.
func (s *Session) CommandFailed(name string, err error, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.command = commandFailure{ok: true, name: name, errText: safeErrorText(err), at: now}
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

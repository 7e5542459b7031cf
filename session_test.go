package erradvisor

import (
	"errors"
	"iter"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/erradvisor/erradvisor/events"
)

// TestNoteClassMatchesDecision classifies every fixture once, through
// Session.Decide, and checks that the note the next request carries reports
// the class the decision used: the notes never read the text a second time.
func TestNoteClassMatchesDecision(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		for _, p := range []Policy{Conservative(), Persistent()} {
			s := NewSession(p)
			at := fixtureAt
			d := s.Decide(Outcome{Stop: StopError, Failure: fx.failure(), Model: fx.Model}, at)
			// The user speaks again: the next request is a new turn whose
			// transcript ends with the failed one, as the host stored it.
			s.UserMessage(at)
			failed := Entry{Kind: EntryAssistant, StopReason: StopError, ErrorMessage: fx.Message,
				Provider: fx.Provider, Model: fx.Model, Time: at}
			notes := s.Notes(at, Target{Provider: fx.Provider, Model: fx.Model},
				NewestFirst([]Entry{{Kind: EntryUser, Time: at}, failed}))
			var got []Class
			for _, n := range notes {
				if n.Kind == ProviderErrorNote {
					got = append(got, n.Class)
				}
			}
			want := []Class{d.Classification.Class}
			if d.Classification.Class == Canceled {
				want = nil // user aborts are silent
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (%s): note classes (-decision +note):\n%s", fx.Name, fx.file, diff)
			}
		}
	}
}

// TestNoteUsesVerdictOfWrappedText: the host stored the failure with its own
// wrapper text; the note still uses the Session's verdict, matched by time.
func TestNoteUsesVerdictOfWrappedText(t *testing.T) {
	s := NewSession(Conservative())
	f := Failure{Provider: "anthropic", Status: 529, At: now}
	d := s.Decide(Outcome{Stop: StopError, Failure: f}, now)
	if d.Classification.Class != Transient {
		t.Fatalf("a bodyless 529 is %v", d.Classification.Class)
	}
	s.UserMessage(now)
	notes := s.Notes(now, Target{}, NewestFirst([]Entry{user(),
		{Kind: EntryAssistant, StopReason: StopError, ErrorMessage: "Error: request failed", Time: now}}))
	if len(notes) != 1 || notes[0].Class != Transient || strings.Contains(notes[0].Text, "not recognised") {
		t.Errorf("notes: %+v", notes)
	}
}

// sessionStep is one event of a Session scenario.
type sessionStep struct {
	user       bool
	o          *Outcome
	compact    *CompactionResult // report a compaction: started, then ended with this result
	command    string            // a command failure
	notes      []string          // expect these notes: "kind" or "kind:class", in order
	contains   string            // and one of them to contain this text
	transcript []Entry           // the transcript of the notes request
	next       Target
	action     Action // expect this action of the decision (for o)
	cause      Cause
}

func runSessionSteps(t *testing.T, p Policy, steps []sessionStep) {
	t.Helper()
	s := NewSession(p)
	for i, st := range steps {
		switch {
		case st.user:
			s.UserMessage(now)
		case st.o != nil:
			d := s.Decide(*st.o, now)
			if d.Action != st.action || d.Cause != st.cause {
				t.Fatalf("step %d: decision %v/%v (%s), want %v/%v", i, d.Action, d.Cause, d.Explain(), st.action, st.cause)
			}
		case st.compact != nil:
			s.CompactionStarted(CompactionOverflow, now)
			s.CompactionEnded(st.compact, nil, now)
		case st.command != "":
			s.CommandFailed(st.command, errors.New("exit status 1"), now)
		default:
			var got []string
			notes := s.Notes(now, st.next, NewestFirst(st.transcript))
			for _, n := range notes {
				k := n.Kind.String()
				if n.Kind == ProviderErrorNote {
					k += ":" + n.Class.String()
				}
				got = append(got, k)
				checkNote(t, n)
			}
			if diff := cmp.Diff(st.notes, got); diff != "" {
				t.Fatalf("step %d: notes (-want +got):\n%s\n%+v", i, diff, notes)
			}
			if st.contains != "" && !strings.Contains(notesText(notes), st.contains) {
				t.Errorf("step %d: notes lack %q: %s", i, st.contains, notesText(notes))
			}
		}
	}
}

func notesText(notes []Note) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString(n.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestSessionScenarios(t *testing.T) {
	const overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	failed := func(msg string) Entry {
		return Entry{Kind: EntryAssistant, StopReason: StopError, ErrorMessage: msg, Provider: "anthropic", Model: "m1", Time: now}
	}
	o529 := &Outcome{Stop: StopError, Failure: Failure{Provider: "anthropic", Status: 529, Message: overloadedBody}, Model: "m1", CurrentModel: "m1"}
	ok := &Outcome{Stop: StopEndTurn, Content: ContentText}
	tooLong := "prompt is too long: 213462 tokens > 200000 maximum"
	o400 := &Outcome{Stop: StopError, Failure: Failure{Provider: "anthropic", Status: 400, Message: tooLong}, Model: "m1", CurrentModel: "m1"}
	switched := *o400
	switched.CurrentModel = "m2"
	m1 := Target{"anthropic", "m1"}
	long := longTranscript(100_000, user())
	tests := []struct {
		name  string
		p     Policy
		steps []sessionStep
	}{{
		name: "retries exhausted, then a note on the next user turn",
		p:    Conservative(),
		steps: []sessionStep{
			{user: true},
			{o: o529, action: Retry, cause: CauseRetryable},
			{transcript: []Entry{user(), failed(overloadedBody)}, next: m1}, // the retry: no note
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: o529, action: Stop, cause: CauseRetriesExhausted},
			{user: true},
			{transcript: []Entry{user(), failed(overloadedBody), user()}, next: m1,
				notes: []string{"provider_error:transient"}, contains: "automatic retries did not succeed"},
		},
	}, {
		name: "a retried transient, then success: no note",
		p:    Conservative(),
		steps: []sessionStep{
			{user: true},
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: ok, action: None, cause: CauseSuccess},
			{transcript: []Entry{user(), ok0()}, next: m1},
		},
	}, {
		name: "overflow, compaction, the same overflow in the same user turn",
		p:    Conservative(),
		steps: []sessionStep{
			{user: true},
			{o: o400, action: Compact, cause: CauseOverflow},
			{compact: &CompactionResult{TokensBefore: 213462, EstimatedTokensAfter: 41000}},
			{transcript: []Entry{{Kind: EntryCompactionSummary}, user()}, next: m1,
				notes: []string{"compaction"}, contains: "was compacted into a summary"},
			{o: o400, action: Stop, cause: CauseRecoverySpent},
			{transcript: []Entry{{Kind: EntryCompactionSummary}, user(), failed(tooLong)}, next: m1,
				notes: []string{"provider_error:overflow"}, contains: "larger context window"},
			{user: true},
			{o: o400, action: Compact, cause: CauseOverflow},
		},
	}, {
		name: "model switch: no recovery on the old model, a softened note",
		p:    Conservative(),
		steps: []sessionStep{
			{user: true},
			{o: &switched, action: Stop, cause: CauseModelChanged},
			{user: true},
			{transcript: []Entry{user(), failed(tooLong), user()}, next: Target{"anthropic", "m2"},
				notes: []string{"provider_error:overflow"}, contains: "the current model is a different one"},
		},
	}, {
		name: "command failure carried over past the cap",
		p:    Policy{MaxNotes: 1},
		steps: []sessionStep{
			{command: "deploy"},
			{o: &Outcome{Stop: StopError, Failure: Failure{Provider: "openai", Status: 401, Message: "Incorrect API key provided"}},
				action: Stop, cause: CauseNotRetryable},
			{transcript: []Entry{user(), failed("Incorrect API key provided")}, notes: []string{"provider_error:permanent"}},
			{transcript: []Entry{user(), failed("Incorrect API key provided")}, notes: []string{"provider_error:permanent"}},
			{transcript: []Entry{user(), ok0()}, notes: []string{"command_failure"}, contains: "` deploy `"},
			{transcript: []Entry{user(), ok0()}},
		},
	}, {
		name: "100,000 entries: the scan stops at the newest success",
		p:    Conservative(),
		steps: []sessionStep{
			{user: true},
			{transcript: append(long, ok0()), next: m1},
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: o529, action: Stop, cause: CauseRetriesExhausted},
			{user: true},
			{transcript: append(append(long, ok0()), failed(overloadedBody), user()), next: m1,
				notes: []string{"provider_error:transient"}},
		},
	}, {
		name: "a user message ends the streak; the next failure starts over",
		p:    Persistent(),
		steps: []sessionStep{
			{o: o529, action: Retry, cause: CauseRetryable},
			{o: o529, action: Retry, cause: CauseRetryable},
			{user: true},
			{transcript: []Entry{user(), failed(overloadedBody), user()}, next: m1,
				notes: []string{"provider_error:transient"}, contains: "automatic retries did not succeed"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSessionSteps(t, tt.p, tt.steps) })
	}
}

// ok0 is a successful assistant turn.
func ok0() Entry { return ok() }

// TestUserMessageRestartsTheStreak: after a user message the next failure
// is attempt 1 with the base delay, under both presets.
func TestUserMessageRestartsTheStreak(t *testing.T) {
	for _, p := range []Policy{Conservative(), Persistent()} {
		s := NewSession(p)
		for range 3 {
			s.Decide(overloaded, t0)
		}
		_, end := retryEvents(s.UserMessage(t0))
		if end == nil || end.Success || end.Attempt != 3 || end.FinalError != "Retry cancelled" {
			t.Errorf("user message after 3 retries: end event %+v", end)
		}
		d := s.Decide(overloaded, t0)
		if d.Action != Retry || d.Attempt != 1 || d.Delay != DefaultBaseDelay {
			t.Errorf("first failure after the user message: %v attempt %d delay %v", d.Action, d.Attempt, d.Delay)
		}
		if _, end := retryEvents(s.UserMessage(t0)); end == nil {
			t.Error("no end event for the new streak")
		}
		if d := s.UserMessage(t0); d.Events() != nil {
			t.Errorf("a user message with no streak has events: %v", d.Events())
		}
	}
}

// TestRetryTimeBudget: a streak stops once the next retry would end past
// MaxRetryTime, counted from its first failure.
func TestRetryTimeBudget(t *testing.T) {
	p := Persistent()
	p.MaxRetryTime = 10 * time.Second
	s := NewSession(p)
	clock := t0
	var got []Action
	for range 4 {
		d := s.Decide(overloaded, clock)
		got = append(got, d.Action)
		clock = clock.Add(d.Delay)
		if d.Action == Stop && (d.Cause != CauseRetryTimeExhausted || d.Ceiling != 10*time.Second) {
			t.Errorf("stop: %v %v (%s)", d.Cause, d.Ceiling, d.Explain())
		}
	}
	// 2 s, then 4 s (6 s in all), then 8 s would end at 14 s: stop.
	if diff := cmp.Diff([]Action{Retry, Retry, Stop, Retry}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSDKExhaustedRetriesNotRetriedOnTop: a failure whose text says the
// SDK's own retry layer gave up is a Stop under both presets.
func TestSDKExhaustedRetriesNotRetriedOnTop(t *testing.T) {
	f := Failure{Provider: "bedrock", Message: "operation error Bedrock Runtime: Converse, exceeded maximum number of attempts, 3, " +
		"https response error StatusCode: 503, RequestID: 7d2c, ServiceUnavailableException: Service unavailable"}
	for _, p := range []Policy{Conservative(), Persistent()} {
		d := NewSession(p).Decide(Outcome{Stop: StopError, Failure: f}, t0)
		if d.Action != Stop || d.Cause != CauseClientRetried || !d.Classification.RetriesExhausted {
			t.Errorf("got %v/%v (%s) exhausted=%v", d.Action, d.Cause, d.Explain(), d.Classification.RetriesExhausted)
		}
	}
	// With the SDK's retries off (one attempt), nothing was retried.
	f.Message = strings.Replace(f.Message, "attempts, 3,", "attempts, 1,", 1)
	if d := NewSession(Conservative()).Decide(Outcome{Stop: StopError, Failure: f}, t0); d.Action != Retry {
		t.Errorf("one attempt: got %v (%s)", d.Action, d.Explain())
	}
}

// TestOddStops decides the providers' odd endings.
func TestOddStops(t *testing.T) {
	tests := []struct {
		name   string
		p      Policy
		o      Outcome
		action Action
		cause  Cause
		class  Class
	}{
		{"refusal stops", Persistent(), Outcome{Stop: StopRefused}, Stop, CauseRefused, Permanent},
		{"pause continues with nothing to add", Conservative(), Outcome{Stop: StopPaused}, Continue, CauseContinuePaused, Unknown},
		{"context-window stop compacts", Conservative(), Outcome{Stop: StopContextWindow}, Compact, CauseOverflow, Overflow},
		{"context-window stop without recovery", Policy{}, Outcome{Stop: StopContextWindow}, Stop, CauseNoRecovery, Overflow},
		{"unknown stop with nothing usable", Conservative(), Outcome{Stop: StopUnknown}, Stop, CauseUnknownStop, Unknown},
		{"unknown stop with text stands", Conservative(), Outcome{Stop: StopUnknown, Content: ContentText}, None, CauseSuccess, Unknown},
		{"unstated content is not nudged", Persistent(), Outcome{Stop: StopEndTurn}, None, CauseSuccess, Unknown},
		{"stated empty content is nudged", Persistent(), Outcome{Stop: StopEndTurn, Content: ContentNone}, Nudge, CauseNudge, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewSession(tt.p).Decide(tt.o, t0)
			if d.Action != tt.action || d.Cause != tt.cause || d.Classification.Class != tt.class {
				t.Errorf("got %v/%v/%v (%s), want %v/%v/%v", d.Action, d.Cause, d.Classification.Class, d.Explain(), tt.action, tt.cause, tt.class)
			}
			if tt.action == Continue && d.Text != "" {
				t.Errorf("a paused turn continues with text %q", d.Text)
			}
		})
	}
}

// TestOldestFirstTranscriptIsDetected: a transcript handed oldest first is
// read whole and gives the same note as the same transcript newest first.
func TestOldestFirstTranscriptIsDetected(t *testing.T) {
	entries := []Entry{
		{Kind: EntryUser, Time: now.Add(-5 * time.Minute)},
		{Kind: EntryAssistant, StopReason: StopEndTurn, Content: ContentText, Time: now.Add(-4 * time.Minute)},
		{Kind: EntryUser, Time: now.Add(-3 * time.Minute)},
		{Kind: EntryAssistant, StopReason: StopError, ErrorMessage: "invalid api key", Time: now.Add(-2 * time.Minute)},
		{Kind: EntryUser, Time: now.Add(-time.Minute)},
	}
	oldestFirst := func(yield func(Entry) bool) {
		for _, e := range entries {
			if !yield(e) {
				return
			}
		}
	}
	want := newTestSession(Policy{}).Notes(now, Target{}, NewestFirst(entries))
	got := newTestSession(Policy{}).Notes(now, Target{}, iter.Seq[Entry](oldestFirst))
	if len(want) != 1 || !cmp.Equal(want, got) {
		t.Errorf("oldest first: %+v, newest first: %+v", got, want)
	}
	// Handed oldest first and beginning with a summary (as after a
	// compaction), it is detected all the same.
	summarized := append([]Entry{{Kind: EntryCompactionSummary, Time: now.Add(-6 * time.Minute)}}, entries[2:]...)
	want = newTestSession(Policy{}).Notes(now, Target{}, NewestFirst(summarized))
	got = newTestSession(Policy{}).Notes(now, Target{}, func(yield func(Entry) bool) {
		for _, e := range summarized {
			if !yield(e) {
				return
			}
		}
	})
	if len(want) != 1 || !cmp.Equal(want, got) {
		t.Errorf("oldest first after a summary: %+v, newest first: %+v", got, want)
	}
	want = newTestSession(Policy{}).Notes(now, Target{}, NewestFirst(entries))
	// One entry out of order in a newest-first transcript is clock skew:
	// the newest failure is still the one reported.
	skewed := append([]Entry(nil), entries...)
	skewed[2].Time = now // the last user message's clock ran ahead
	if got := newTestSession(Policy{}).Notes(now, Target{}, NewestFirst(skewed)); !cmp.Equal(want, got) {
		t.Errorf("skewed: %+v, want %+v", got, want)
	}
}

// TestZeroValues calls the methods of every exported type's zero value.
func TestZeroValues(t *testing.T) {
	var d Decision
	if d.Explain() != "none" || d.Events() != nil || d.LogValue().Kind() != slog.KindGroup {
		t.Errorf("zero Decision: %q %v", d.Explain(), d.Events())
	}
	var s Session
	s.UserMessage(now)
	s.Cancel(now)
	s.CompactionCanceled(now)
	s.CompactionEnded(nil, nil, now)
	s.CommandFailed("", nil, now)
	_ = s.Policy()
	_ = s.PeekNotes(now, Target{}, nil)
	_ = s.Decide(Outcome{}, now)
	if err := (Policy{}).Validate(); err != nil {
		t.Errorf("zero Policy is invalid: %v", err)
	}
	names := []string{Cause(200).String(), Action(200).String(), StopReason(200).String(), Jitter(200).String(),
		(&Error{}).Error()}
	for _, n := range names {
		if n == "" {
			t.Errorf("empty name in %q", names)
		}
	}
	var e events.CompactionEnd
	if e.EventType() != events.TypeCompactionEnd {
		t.Error("zero event type")
	}
}

// TestPolicyValidate lists the contradictions Validate reports.
func TestPolicyValidate(t *testing.T) {
	for _, p := range []Policy{Conservative(), Persistent(), {}} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	bad := Policy{
		Retry: Classes(Transient, Permanent, Canceled), MaxRetries: -3, MaxContinuations: -2,
		MaxRetryTime: -time.Second, BaseDelay: time.Minute, MaxDelay: time.Second, Multiplier: 0.5,
		Jitter: 9, JitterFraction: 2, RetryStatuses: []int{42}, DeferPatterns: []string{""},
		MaxNotes: -1, ErrorTTL: -1,
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Retry holds permanent", "Retry holds canceled", "MaxRetries is -3", "MaxContinuations is -2",
		"MaxRetryTime", "BaseDelay 1m0s is above MaxDelay 1s", "Multiplier is 0.5", "Jitter is", "JitterFraction is 2",
		"RetryStatuses holds 42", "DeferPatterns[0] is empty", "MaxNotes is negative", "ErrorTTL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestNoteQuotesTheNewestFailure: the host left the newest failed attempt
// out of its transcript (it was being retried); once the retries give up,
// the note reports that newest failure, not an older one the transcript
// still holds.
func TestNoteQuotesTheNewestFailure(t *testing.T) {
	s := NewSession(Conservative())
	older := Entry{Kind: EntryAssistant, StopReason: StopError, ErrorMessage: "invalid api key", Time: now.Add(-5 * time.Minute)}
	newest := Outcome{Stop: StopError, Failure: Failure{Provider: "anthropic", Status: 529,
		Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, At: now}}
	for range 4 {
		s.Decide(newest, now)
	}
	s.UserMessage(now)
	notes := s.Notes(now, Target{}, NewestFirst([]Entry{user(), older, user()}))
	if len(notes) != 1 || notes[0].Class != Transient || !strings.Contains(notes[0].Text, "overloaded_error") ||
		strings.Contains(notes[0].Text, "invalid api key") {
		t.Errorf("notes: %+v", notes)
	}
}

// TestCancelledRetryIsNotCountedAsMade: a retry announced and then cancelled
// never ran, so the next note does not say retries failed.
func TestCancelledRetryIsNotCountedAsMade(t *testing.T) {
	s := NewSession(Conservative())
	s.Decide(Outcome{Stop: StopError, Failure: Failure{Provider: "anthropic", Status: 529, Message: "Overloaded"}}, now)
	s.Cancel(now)
	s.UserMessage(now)
	notes := s.Notes(now, Target{}, NewestFirst([]Entry{user(), failedTurn("Overloaded", 0), user()}))
	if len(notes) != 1 || strings.Contains(notes[0].Text, "did not succeed") || !strings.Contains(notes[0].Text, "not retried") {
		t.Errorf("notes: %+v", notes)
	}
}

// TestNoteUsesVerdictWhateverTheEntryTime: the host stamped the failed
// entry a moment after the decision, with its own text; the note still
// reports the decision's verdict instead of reading that text.
func TestNoteUsesVerdictWhateverTheEntryTime(t *testing.T) {
	s := NewSession(Conservative())
	d := s.Decide(Outcome{Stop: StopError, Failure: Failure{Provider: "openai", Status: 401}}, now)
	s.UserMessage(now)
	later := Entry{Kind: EntryAssistant, StopReason: StopError, ErrorMessage: "Request failed", Time: now.Add(time.Millisecond)}
	notes := s.Notes(now.Add(time.Second), Target{}, NewestFirst([]Entry{user(), later, user()}))
	if len(notes) != 1 || notes[0].Class != d.Classification.Class || d.Classification.Class != Permanent {
		t.Errorf("decision %v, notes %+v", d.Classification, notes)
	}
}

// TestNotesDuringRecoveryKeepTheRecovery: notes built while the recovery
// compaction runs (for its own summarization request) say once that it has
// not completed, and its end still completes the recovery.
func TestNotesDuringRecoveryKeepTheRecovery(t *testing.T) {
	s := NewSession(Conservative())
	d := s.Decide(Outcome{Stop: StopError, Failure: Failure{Provider: "anthropic", Status: 400,
		Message: "prompt is too long: 213462 tokens > 200000 maximum"}}, now)
	if d.Action != Compact {
		t.Fatalf("decision %v", d.Action)
	}
	s.CompactionStarted(d.Compaction, now)
	first := s.Notes(now, Target{}, nil)
	second := s.Notes(now, Target{}, nil)
	end := s.CompactionEnded(&CompactionResult{TokensBefore: 213462, EstimatedTokensAfter: 40000}, nil, now)
	after := s.Notes(now, Target{}, nil)
	if len(first) != 1 || len(second) != 0 || !end.WillRetry || len(after) != 1 || !strings.Contains(after[0].Text, "was compacted") {
		t.Errorf("during: %+v then %+v; end %+v; after: %+v", first, second, end, after)
	}
}

// TestSummaryRetriesEndWithTheUserMessage: a user message ends a streak of
// summarization retries too, and a summarization failure whose SDK already
// retried is not retried on top.
func TestSummaryRetriesEndWithTheUserMessage(t *testing.T) {
	s := NewSession(Conservative())
	cut := Outcome{Stop: StopError, Summarizing: SummarizingCompaction, Failure: Failure{Message: "terminated"}}
	s.Decide(cut, now)
	s.Decide(cut, now)
	s.UserMessage(now)
	if d := s.Decide(cut, now); d.Action != Retry || d.Attempt != 1 {
		t.Errorf("after the user message: %v attempt %d", d.Action, d.Attempt)
	}
	exhausted := cut
	exhausted.Failure.Message = "Max retries exceeded: 503 Service Unavailable"
	if d := NewSession(Conservative()).Decide(exhausted, now); d.Action != Stop || d.Cause != CauseClientRetried {
		t.Errorf("exhausted summarization: %v %v", d.Action, d.Cause)
	}
}

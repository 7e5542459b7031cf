package erradvisor

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/erradvisor/erradvisor/events"
)

var ct0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// wire returns the wire shape of res.
func wire(res *CompactionResult) *events.CompactionResult {
	return &events.CompactionResult{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, EstimatedTokensAfter: res.EstimatedTokensAfter}
}

func TestCompactionLifecycle(t *testing.T) {
	shrunk := &CompactionResult{Summary: "s", FirstKeptEntryID: "e7", TokensBefore: 150000, EstimatedTokensAfter: 32000}
	notShrunk := &CompactionResult{Summary: "s", TokensBefore: 150000, EstimatedTokensAfter: 150000}
	tests := []struct {
		name       string
		run        func(s *Session) []events.Event
		wantEvents []events.Event
		wantReport compactionReport
		wantOK     bool
	}{
		{
			name: "overflow compacted",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionEnded(shrunk, nil, ct0.Add(time.Second))}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", Result: wire(shrunk), WillRetry: true},
			},
			wantReport: compactionReport{outcome: compactionCompacted, result: *shrunk},
			wantOK:     true,
		},
		{
			name: "overflow failed",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionEnded(nil, errors.New("summarizer 401"), ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", ErrorMessage: "summarizer 401"},
			},
			wantReport: compactionReport{outcome: compactionNotCompleted, err: "summarizer 401"},
			wantOK:     true,
		},
		{
			name: "overflow without result",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionEnded(nil, nil, ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", ErrorMessage: "compaction produced no result"},
			},
			wantReport: compactionReport{outcome: compactionNotCompleted, err: "compaction produced no result"},
			wantOK:     true,
		},
		{
			name: "overflow that did not shrink does not retry",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionEnded(notShrunk, nil, ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", ErrorMessage: "compaction did not reduce the context"},
			},
			wantReport: compactionReport{outcome: compactionNotCompleted, err: "compaction did not reduce the context"},
			wantOK:     true,
		},
		{
			name: "missing end counts as not completed",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0)}
			},
			wantEvents: []events.Event{events.CompactionStart{Reason: "overflow"}},
			wantReport: compactionReport{outcome: compactionNotCompleted, err: "compaction did not report an end"},
			wantOK:     true,
		},
		{
			name: "cancelled overflow is silent",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionCanceled(ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", Aborted: true},
			},
		},
		{
			name: "manual compaction is silent",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionManual, ct0), s.CompactionEnded(shrunk, nil, ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "manual"},
				events.CompactionEnd{Reason: "manual", Result: wire(shrunk)},
			},
		},
		{
			name: "threshold compaction is silent, even when it fails or never ends",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionThreshold, ct0), s.CompactionEnded(nil, errors.New("x"), ct0), s.CompactionStarted(CompactionThreshold, ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "threshold"},
				events.CompactionEnd{Reason: "threshold", ErrorMessage: "x"},
				events.CompactionStart{Reason: "threshold"},
			},
		},
		{
			name: "a second end changes nothing",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionEnded(nil, errors.New("x"), ct0), s.CompactionEnded(shrunk, nil, ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", ErrorMessage: "x"},
				events.CompactionEnd{Reason: "overflow", Result: wire(shrunk)},
			},
			wantReport: compactionReport{outcome: compactionNotCompleted, err: "x"},
			wantOK:     true,
		},
		{
			name: "a stray cancel keeps the outcome",
			run: func(s *Session) []events.Event {
				return []events.Event{s.CompactionStarted(CompactionOverflow, ct0), s.CompactionEnded(shrunk, nil, ct0), s.CompactionCanceled(ct0)}
			},
			wantEvents: []events.Event{
				events.CompactionStart{Reason: "overflow"},
				events.CompactionEnd{Reason: "overflow", Result: wire(shrunk), WillRetry: true},
				events.CompactionEnd{Reason: "overflow", Aborted: true},
			},
			wantReport: compactionReport{outcome: compactionCompacted, result: *shrunk},
			wantOK:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSession(Conservative())
			evs := tt.run(s)
			if diff := cmp.Diff(tt.wantEvents, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			r, ok := s.tracker.takeReport(true)
			if diff := cmp.Diff(tt.wantReport, r, cmp.AllowUnexported(compactionReport{})); diff != "" || ok != tt.wantOK {
				t.Errorf("report = %v (-want +got):\n%s", ok, diff)
			}
			// One-shot: the second take is empty.
			if r, ok := s.tracker.takeReport(true); ok || r != (compactionReport{}) {
				t.Errorf("second report = %+v, %v", r, ok)
			}
		})
	}
}

func TestCompactionRecoveryLatch(t *testing.T) {
	var tr compactionTracker
	var got []bool
	got = append(got, tr.recoveryClaimed)
	got = append(got, tr.claimRecovery())
	got = append(got, tr.recoveryClaimed)
	got = append(got, tr.claimRecovery())
	tr.userMessage()
	got = append(got, tr.recoveryClaimed)
	tr.started(CompactionOverflow) // a host-started recovery spends the latch too
	got = append(got, tr.claimRecovery())
	tr.userMessage()
	tr.started(CompactionManual) // other compactions do not
	got = append(got, tr.claimRecovery())
	want := []bool{false, true, true, false, false, false, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("latch (-want +got):\n%s", diff)
	}
}

func TestCompactionConcurrency(t *testing.T) {
	var s Session
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.UserMessage(ct0)
			s.CompactionStarted(CompactionOverflow, ct0)
			if i%2 == 0 {
				s.CompactionEnded(&CompactionResult{TokensBefore: 10, EstimatedTokensAfter: 5}, nil, ct0)
			} else {
				s.CompactionCanceled(ct0)
			}
			s.Notes(ct0, Target{}, nil)
		}()
	}
	wg.Wait()
}

func TestCompactionOutcomeString(t *testing.T) {
	got := []string{compactionNone.String(), compactionCompacted.String(), compactionNotCompleted.String(), compactionOutcome(9).String()}
	if diff := cmp.Diff([]string{"none", "compacted", "not_completed", "none"}, got); diff != "" {
		t.Error(diff)
	}
}

// TestCompactionReviewedEdges: a recovery interrupted by another compaction's
// start is reported as not completed, and a recovery that did not shrink the
// context reports no result.
func TestCompactionReviewedEdges(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var s Session
	s.CompactionStarted(CompactionOverflow, now)
	s.CompactionStarted(CompactionThreshold, now)
	s.CompactionEnded(&CompactionResult{TokensBefore: 100, EstimatedTokensAfter: 10}, nil, now)
	if r, ok := s.tracker.takeReport(true); !ok || r.outcome != compactionNotCompleted {
		t.Errorf("interrupted recovery: %+v, %v", r, ok)
	}
	s.UserMessage(now)
	s.CompactionStarted(CompactionOverflow, now)
	ev := s.CompactionEnded(&CompactionResult{TokensBefore: 100, EstimatedTokensAfter: 100}, nil, now)
	if ev.Result != nil || ev.WillRetry || ev.ErrorMessage == "" {
		t.Errorf("no shrink: %+v", ev)
	}
	s.CompactionStarted(CompactionThreshold, now)
	ev = s.CompactionEnded(&CompactionResult{TokensBefore: 100, EstimatedTokensAfter: 100}, nil, now)
	if ev.Result == nil || ev.ErrorMessage != "" {
		t.Errorf("threshold compaction judged like a recovery: %+v", ev)
	}
}

package erradvisor

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var ct0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

func TestCompactionTrackerLifecycle(t *testing.T) {
	shrunk := &CompactionResult{Summary: "s", FirstKeptEntryID: "e7", TokensBefore: 150000, EstimatedTokensAfter: 32000}
	notShrunk := &CompactionResult{Summary: "s", TokensBefore: 150000, EstimatedTokensAfter: 150000}
	tests := []struct {
		name       string
		run        func(tr *CompactionTracker) []Event
		wantEvents []Event
		wantReport CompactionReport
		wantOK     bool
	}{
		{
			name: "overflow compacted",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Ended(shrunk, nil, ct0.Add(time.Second))}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, Result: shrunk, WillRetry: true},
			},
			wantReport: CompactionReport{Outcome: CompactionCompacted, Result: shrunk, At: ct0.Add(time.Second)},
			wantOK:     true,
		},
		{
			name: "overflow failed",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Ended(nil, errors.New("summarizer 401"), ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, ErrorMessage: "summarizer 401"},
			},
			wantReport: CompactionReport{Outcome: CompactionNotCompleted, Error: "summarizer 401", At: ct0},
			wantOK:     true,
		},
		{
			name: "overflow without result",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Ended(nil, nil, ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, ErrorMessage: "compaction produced no result"},
			},
			wantReport: CompactionReport{Outcome: CompactionNotCompleted, Error: "compaction produced no result", At: ct0},
			wantOK:     true,
		},
		{
			name: "overflow that did not shrink does not retry",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Ended(notShrunk, nil, ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, ErrorMessage: "compaction did not reduce the context"},
			},
			wantReport: CompactionReport{Outcome: CompactionNotCompleted, Error: "compaction did not reduce the context", At: ct0},
			wantOK:     true,
		},
		{
			name: "missing end counts as not completed",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0)}
			},
			wantEvents: []Event{CompactionStart{Reason: CompactionOverflow}},
			wantReport: CompactionReport{Outcome: CompactionNotCompleted, Error: "compaction did not report an end", At: ct0},
			wantOK:     true,
		},
		{
			name: "cancelled overflow is silent",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Canceled(ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, Aborted: true},
			},
		},
		{
			name: "manual compaction is silent",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionManual, ct0), tr.Ended(shrunk, nil, ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionManual},
				CompactionEnd{Reason: CompactionManual, Result: shrunk},
			},
		},
		{
			name: "threshold compaction is silent, even when it fails or never ends",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionThreshold, ct0), tr.Ended(nil, errors.New("x"), ct0), tr.Started(CompactionThreshold, ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionThreshold},
				CompactionEnd{Reason: CompactionThreshold, ErrorMessage: "x"},
				CompactionStart{Reason: CompactionThreshold},
			},
		},
		{
			name: "a second end changes nothing",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Ended(nil, errors.New("x"), ct0), tr.Ended(shrunk, nil, ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, ErrorMessage: "x"},
				CompactionEnd{Reason: CompactionOverflow, Result: shrunk},
			},
			wantReport: CompactionReport{Outcome: CompactionNotCompleted, Error: "x", At: ct0},
			wantOK:     true,
		},
		{
			name: "a stray cancel keeps the outcome",
			run: func(tr *CompactionTracker) []Event {
				return []Event{tr.Started(CompactionOverflow, ct0), tr.Ended(shrunk, nil, ct0), tr.Canceled(ct0)}
			},
			wantEvents: []Event{
				CompactionStart{Reason: CompactionOverflow},
				CompactionEnd{Reason: CompactionOverflow, Result: shrunk, WillRetry: true},
				CompactionEnd{Reason: CompactionOverflow, Aborted: true},
			},
			wantReport: CompactionReport{Outcome: CompactionCompacted, Result: shrunk, At: ct0},
			wantOK:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewCompactionTracker()
			events := tt.run(tr)
			if diff := cmp.Diff(tt.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			r, ok := tr.TakeReport(ct0.Add(time.Minute))
			if diff := cmp.Diff(tt.wantReport, r); diff != "" || ok != tt.wantOK {
				t.Errorf("TakeReport = %v (-want +got):\n%s", ok, diff)
			}
			// One-shot: the second take is empty.
			if r, ok := tr.TakeReport(ct0.Add(time.Minute)); ok || r != (CompactionReport{}) {
				t.Errorf("second TakeReport = %+v, %v", r, ok)
			}
		})
	}
}

func TestCompactionTrackerRecoveryLatch(t *testing.T) {
	tr := NewCompactionTracker()
	var got []bool
	got = append(got, tr.RecoveryClaimed(), tr.ClaimRecovery(), tr.RecoveryClaimed(), tr.ClaimRecovery())
	tr.UserTurn()
	got = append(got, tr.RecoveryClaimed())
	tr.Started(CompactionOverflow, ct0) // a host-started recovery spends the latch too
	got = append(got, tr.ClaimRecovery())
	tr.UserTurn()
	tr.Started(CompactionManual, ct0) // other compactions do not
	got = append(got, tr.ClaimRecovery())
	want := []bool{false, true, true, false, false, false, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("latch (-want +got):\n%s", diff)
	}
}

func TestCompactionTrackerZeroValueAndConcurrency(t *testing.T) {
	var tr CompactionTracker
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.UserTurn()
			tr.ClaimRecovery()
			tr.Started(CompactionOverflow, ct0)
			if i%2 == 0 {
				tr.Ended(&CompactionResult{TokensBefore: 10, EstimatedTokensAfter: 5}, nil, ct0)
			} else {
				tr.Canceled(ct0)
			}
			tr.TakeReport(ct0)
		}()
	}
	wg.Wait()
	if !tr.RecoveryClaimed() {
		t.Error("recovery not claimed after overflow compactions")
	}
}

func TestCompactionOutcomeString(t *testing.T) {
	got := []string{CompactionNone.String(), CompactionCompacted.String(), CompactionNotCompleted.String(), CompactionOutcome(9).String()}
	if diff := cmp.Diff([]string{"none", "compacted", "not_completed", "none"}, got); diff != "" {
		t.Error(diff)
	}
}

// TestCompactionReviewedEdges: a recovery interrupted by another compaction's
// start is reported as not completed, and a recovery that did not shrink the
// context reports no result.
func TestCompactionReviewedEdges(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var tr CompactionTracker
	tr.Started(CompactionOverflow, now)
	tr.Started(CompactionThreshold, now)
	tr.Ended(&CompactionResult{TokensBefore: 100, EstimatedTokensAfter: 10}, nil, now)
	if r, ok := tr.TakeReport(now); !ok || r.Outcome != CompactionNotCompleted {
		t.Errorf("interrupted recovery: %+v, %v", r, ok)
	}
	tr.UserTurn()
	tr.Started(CompactionOverflow, now)
	ev := tr.Ended(&CompactionResult{TokensBefore: 100, EstimatedTokensAfter: 100}, nil, now)
	if ev.Result != nil || ev.WillRetry || ev.ErrorMessage == "" {
		t.Errorf("no shrink: %+v", ev)
	}
	tr.Started(CompactionThreshold, now)
	ev = tr.Ended(&CompactionResult{TokensBefore: 100, EstimatedTokensAfter: 100}, nil, now)
	if ev.Result == nil || ev.ErrorMessage != "" {
		t.Errorf("threshold compaction judged like a recovery: %+v", ev)
	}
}

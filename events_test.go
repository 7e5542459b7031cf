package erradvisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// eventStream renders events the way a host streams them: one compact JSON
// object per line, wrapped in an array so the file is JSON as a whole.
func eventStream(t *testing.T, events []Event) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %T: %v", e, err)
		}
		b.Write(line)
		if i < len(events)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes()
}

// golden compares got with testdata/events/name.json, or rewrites the file
// under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "events", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !json.Valid(want) {
		t.Errorf("%s is not valid JSON", path)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// retrierEvents runs the outcomes through a retrier and collects the events
// of its decisions, with a cancellation wherever the outcome is nil.
func retrierEvents(p Policy, outcomes ...*Outcome) []Event {
	r := NewRetrier(p)
	var events []Event
	for _, o := range outcomes {
		if o == nil {
			events = r.Cancel().AppendEvents(events)
			continue
		}
		events = r.Decide(*o, t0).AppendEvents(events)
	}
	return events
}

func TestEventGolden(t *testing.T) {
	res := &CompactionResult{
		Summary: "The user is refactoring the parser; tests pass.", FirstKeptEntryID: "abc123",
		TokensBefore: 150000, EstimatedTokensAfter: 32000,
	}
	noShrink := &CompactionResult{Summary: "…", FirstKeptEntryID: "def456", TokensBefore: 9000, EstimatedTokensAfter: 9000}
	tracker := func(steps func(tr *CompactionTracker) []Event) []Event {
		return steps(NewCompactionTracker())
	}
	o, ok, auth := overloaded, success, authFail
	longWait := withRetryAfter(fail(Transient, ReasonRateLimit, "429 rate limited"), 3*time.Hour)

	tests := []struct {
		name   string
		events []Event
	}{
		{"retry_success", retrierEvents(Conservative(), &o, &o, &ok)},
		{"retry_exhausted", retrierEvents(Conservative(), &o, &o, &o, &o)},
		{"retry_cancelled", retrierEvents(Conservative(), &o, nil)},
		{"retry_stopped_by_permanent", retrierEvents(Conservative(), &o, &auth)},
		{"retry_wait_too_long", retrierEvents(Persistent(), &o, &longWait)},
		{"retry_unlimited", retrierEvents(Persistent(), &o, &o, &o, &o, &o, &o, &ok)},
		{"compaction_overflow", tracker(func(tr *CompactionTracker) []Event {
			return []Event{tr.Started(CompactionOverflow, t0), tr.Ended(res, nil, t0)}
		})},
		{"compaction_aborted", tracker(func(tr *CompactionTracker) []Event {
			return []Event{tr.Started(CompactionOverflow, t0), tr.Canceled(t0)}
		})},
		{"compaction_failed", tracker(func(tr *CompactionTracker) []Event {
			return []Event{tr.Started(CompactionThreshold, t0), tr.Ended(nil, errors.New("summarization request failed: 401"), t0)}
		})},
		{"compaction_no_shrink", tracker(func(tr *CompactionTracker) []Event {
			return []Event{tr.Started(CompactionOverflow, t0), tr.Ended(noShrink, nil, t0)}
		})},
		{"compaction_manual", tracker(func(tr *CompactionTracker) []Event {
			return []Event{tr.Started(CompactionManual, t0), tr.Ended(res, nil, t0)}
		})},
		{"summarization_retry", []Event{
			SummarizationRetryScheduled{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "terminated"},
			SummarizationRetryAttemptStart{Source: "compaction", Reason: CompactionThreshold},
			SummarizationRetryAttemptStart{Source: "branchSummary"},
			SummarizationRetryFinished{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, eventStream(t, tt.events))
		})
	}
}

// TestEventShapes checks the events against the reference agent's documented
// JSON, byte for byte.
func TestEventShapes(t *testing.T) {
	tests := []struct {
		event Event
		want  string
	}{
		{AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded"},
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded"}`},
		{AutoRetryEnd{Success: true, Attempt: 2},
			`{"type":"auto_retry_end","success":true,"attempt":2}`},
		{AutoRetryEnd{Attempt: 3, FinalError: "529 overloaded"},
			`{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"529 overloaded"}`},
		{SummarizationRetryScheduled{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "terminated"},
			`{"type":"summarization_retry_scheduled","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"terminated"}`},
		{SummarizationRetryAttemptStart{Source: "compaction", Reason: CompactionThreshold},
			`{"type":"summarization_retry_attempt_start","source":"compaction","reason":"threshold"}`},
		{SummarizationRetryAttemptStart{Source: "branchSummary"},
			`{"type":"summarization_retry_attempt_start","source":"branchSummary"}`},
		{SummarizationRetryFinished{}, `{"type":"summarization_retry_finished"}`},
		{CompactionStart{Reason: CompactionOverflow}, `{"type":"compaction_start","reason":"overflow"}`},
		{CompactionEnd{Reason: CompactionOverflow, Result: &CompactionResult{
			Summary: "...", FirstKeptEntryID: "abc123", TokensBefore: 150000, EstimatedTokensAfter: 32000,
		}, WillRetry: true},
			`{"type":"compaction_end","reason":"overflow","result":{"summary":"...","firstKeptEntryId":"abc123",` +
				`"tokensBefore":150000,"estimatedTokensAfter":32000},"aborted":false,"willRetry":true}`},
		{CompactionEnd{Reason: CompactionOverflow, Aborted: true},
			`{"type":"compaction_end","reason":"overflow","aborted":true,"willRetry":false}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.event)
		if err != nil {
			t.Fatalf("marshal %T: %v", tt.event, err)
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.event.EventType(), diff)
		}
	}
}

// TestDecisionEvents checks that events ride on the decisions they belong to.
func TestDecisionEvents(t *testing.T) {
	r := NewRetrier(Conservative())
	d := r.Decide(overloaded, t0)
	if _, ok := d.RetryEnd(); ok {
		t.Error("first retry carries an auto_retry_end")
	}
	if got := d.Events(); len(got) != 1 || got[0].EventType() != EventAutoRetryStart {
		t.Errorf("first retry events: %v", got)
	}
	if got := r.Decide(success, t0).Events(); len(got) != 1 || got[0].EventType() != EventAutoRetryEnd {
		t.Errorf("success events: %v", got)
	}
	if got := r.Decide(success, t0).Events(); got != nil {
		t.Errorf("plain success has events: %v", got)
	}
}

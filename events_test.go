package erradvisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/erradvisor/erradvisor/events"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// eventStream renders events the way a host streams them: one compact JSON
// object per line, wrapped in an array so the file is JSON as a whole.
func eventStream(t *testing.T, evs []events.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %T: %v", e, err)
		}
		b.Write(line)
		if i < len(evs)-1 {
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

// sessionEvents runs the outcomes through a Session and collects the events
// of its decisions, with a cancellation wherever the outcome is nil.
func sessionEvents(p Policy, outcomes ...*Outcome) []events.Event {
	s := NewSession(p)
	var evs []events.Event
	for _, o := range outcomes {
		if o == nil {
			evs = append(evs, s.Cancel(t0).Events()...)
			continue
		}
		evs = append(evs, s.Decide(*o, t0).Events()...)
	}
	return evs
}

func summarizing(o Outcome, k Summarizing) *Outcome {
	o.Summarizing = k
	return &o
}

func TestEventGolden(t *testing.T) {
	res := &CompactionResult{
		Summary: "The user is refactoring the parser; tests pass.", FirstKeptEntryID: "abc123",
		TokensBefore: 150000, EstimatedTokensAfter: 32000,
	}
	noShrink := &CompactionResult{Summary: "…", FirstKeptEntryID: "def456", TokensBefore: 9000, EstimatedTokensAfter: 9000}
	compaction := func(steps func(s *Session) []events.Event) []events.Event {
		return steps(NewSession(Conservative()))
	}
	o, ok, auth := overloaded, success, authFail
	longWait := withRetryAfter(fail(Transient, ReasonRateLimit, "429 rate limited"), 3*time.Hour)
	cut := fail(Transient, ReasonStream, "terminated")

	tests := []struct {
		name   string
		events []events.Event
	}{
		{"retry_success", sessionEvents(Conservative(), &o, &o, &ok)},
		{"retry_exhausted", sessionEvents(Conservative(), &o, &o, &o, &o)},
		{"retry_cancelled", sessionEvents(Conservative(), &o, nil)},
		{"retry_stopped_by_permanent", sessionEvents(Conservative(), &o, &auth)},
		{"retry_wait_too_long", sessionEvents(Persistent(), &o, &longWait)},
		{"retry_unlimited", sessionEvents(Persistent(), &o, &o, &o, &o, &o, &o, &ok)},
		{"compaction_overflow", compaction(func(s *Session) []events.Event {
			return []events.Event{s.CompactionStarted(CompactionOverflow, t0), s.CompactionEnded(res, nil, t0)}
		})},
		{"compaction_aborted", compaction(func(s *Session) []events.Event {
			return []events.Event{s.CompactionStarted(CompactionOverflow, t0), s.CompactionCanceled(t0)}
		})},
		{"compaction_failed", compaction(func(s *Session) []events.Event {
			return []events.Event{s.CompactionStarted(CompactionThreshold, t0), s.CompactionEnded(nil, errors.New("summarization request failed: 401"), t0)}
		})},
		{"compaction_no_shrink", compaction(func(s *Session) []events.Event {
			return []events.Event{s.CompactionStarted(CompactionOverflow, t0), s.CompactionEnded(noShrink, nil, t0)}
		})},
		{"compaction_manual", compaction(func(s *Session) []events.Event {
			return []events.Event{s.CompactionStarted(CompactionManual, t0), s.CompactionEnded(res, nil, t0)}
		})},
		{"summarization_retry", compaction(func(s *Session) []events.Event {
			evs := []events.Event{s.CompactionStarted(CompactionThreshold, t0)}
			evs = append(evs, s.Decide(*summarizing(cut, SummarizingCompaction), t0).Events()...)
			evs = append(evs, s.Decide(*summarizing(success, SummarizingCompaction), t0).Events()...)
			evs = append(evs, s.Decide(*summarizing(cut, SummarizingBranch), t0).Events()...)
			evs = append(evs, s.Decide(*summarizing(success, SummarizingBranch), t0).Events()...)
			return evs
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, eventStream(t, tt.events))
		})
	}
}

// TestDecisionEvents checks that events ride on the decisions they belong to.
func TestDecisionEvents(t *testing.T) {
	s := NewSession(Conservative())
	d := s.Decide(overloaded, t0)
	if _, end := retryEvents(d); end != nil {
		t.Error("first retry carries an auto_retry_end")
	}
	if got := d.Events(); len(got) != 1 || got[0].EventType() != events.TypeAutoRetryStart {
		t.Errorf("first retry events: %v", got)
	}
	if got := s.Decide(success, t0).Events(); len(got) != 1 || got[0].EventType() != events.TypeAutoRetryEnd {
		t.Errorf("success events: %v", got)
	}
	if got := s.Decide(success, t0).Events(); got != nil {
		t.Errorf("plain success has events: %v", got)
	}
}

// TestEventsRedactSecrets plants a key in a failure's text and checks that
// no event carries it.
func TestEventsRedactSecrets(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	o := fail(Transient, ReasonServer, "500 upstream rejected key "+key)
	s := NewSession(Conservative())
	var evs []events.Event
	for range 4 {
		evs = append(evs, s.Decide(o, t0).Events()...)
	}
	evs = append(evs, s.CompactionStarted(CompactionThreshold, t0),
		s.CompactionEnded(nil, errors.New("summarizer said: invalid key "+key), t0))
	data, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "abcdefghijklmnop") {
		t.Errorf("a secret reached the events: %s", data)
	}
}

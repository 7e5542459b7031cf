package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/events"
)

// TestRun runs the same loop as main and checks what every scenario did.
func TestRun(t *testing.T) {
	var log bytes.Buffer
	start := time.Now()
	rep, err := run(context.Background(), &log)
	elapsed := time.Since(start)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("run took %s; the demo must stay fast", elapsed)
	}
	if strings.ContainsRune(log.String(), '\x1b') {
		t.Error("the log contains escape sequences; it must be colourless")
	}
	if got, want := len(rep.Scenarios), 8; got != want {
		t.Fatalf("%d scenarios, want %d", got, want)
	}
	for i, sc := range rep.Scenarios {
		// Every request the loop made reached the provider.
		if len(sc.Received) != len(sc.Requests) {
			t.Errorf("%s: provider received %d requests, loop made %d", sc.Name, len(sc.Received), len(sc.Requests))
		}
		// The last response was decided on.
		if len(sc.Decisions) != len(sc.Requests) {
			t.Errorf("%s: %d decisions for %d requests", sc.Name, len(sc.Decisions), len(sc.Requests))
		}
		if !strings.HasPrefix(sc.Name, string(rune('1'+i))+".") {
			t.Errorf("scenario %d is %q", i+1, sc.Name)
		}
	}
	s := rep.Scenarios

	t.Run("overloaded twice then success", func(t *testing.T) {
		sc := s[0]
		wantActions(t, sc, erradvisor.Retry, erradvisor.Retry, erradvisor.None)
		wantEvents(t, sc, events.TypeAutoRetryStart, events.TypeAutoRetryStart, events.TypeAutoRetryEnd)
		for _, c := range sc.Classifications {
			wantClass(t, c, erradvisor.Transient, erradvisor.ReasonOverloaded)
		}
		if d0, d1 := sc.Decisions[0].Delay, sc.Decisions[1].Delay; d0 != 20*time.Millisecond || d1 != 40*time.Millisecond {
			t.Errorf("delays %s, %s; want 20ms, 40ms", d0, d1)
		}
		end := sc.Events[2].(events.AutoRetryEnd)
		if !end.Success || end.Attempt != 2 {
			t.Errorf("auto_retry_end = %+v, want success after attempt 2", end)
		}
		wantAnswered(t, sc)
	})

	t.Run("retry-after-ms is a floor", func(t *testing.T) {
		sc := s[1]
		wantActions(t, sc, erradvisor.Retry, erradvisor.None)
		wantEvents(t, sc, events.TypeAutoRetryStart, events.TypeAutoRetryEnd)
		c := sc.Classifications[0]
		wantClass(t, c, erradvisor.Transient, erradvisor.ReasonRateLimit)
		if c.RetryAfter != 50*time.Millisecond {
			t.Errorf("RetryAfter = %s, want 50ms from retry-after-ms", c.RetryAfter)
		}
		// The backoff alone would be 20ms.
		if d := sc.Decisions[0].Delay; d < 50*time.Millisecond {
			t.Errorf("delay %s is below the server's 50ms", d)
		}
		if start := sc.Events[0].(events.AutoRetryStart); start.DelayMs != 50 {
			t.Errorf("auto_retry_start delayMs = %d, want 50", start.DelayMs)
		}
		wantAnswered(t, sc)
	})

	t.Run("prompt too long: compact, note, success", func(t *testing.T) {
		sc := s[2]
		wantActions(t, sc, erradvisor.Compact, erradvisor.None)
		wantEvents(t, sc, events.TypeCompactionStart, events.TypeCompactionEnd)
		wantClass(t, sc.Classifications[0], erradvisor.Overflow, erradvisor.ReasonContextWindow)
		end := sc.Events[1].(events.CompactionEnd)
		if !end.WillRetry || end.Result == nil || end.Result.TokensBefore != 219898 || end.Result.EstimatedTokensAfter != 41000 {
			t.Errorf("compaction_end = %+v, want a retry from 219898 to 41000 tokens", end)
		}
		if len(sc.Received) != 2 {
			t.Fatalf("provider received %d requests, want 2", len(sc.Received))
		}
		for _, text := range lastUserText(sc.Received[0]) {
			if strings.Contains(text, "[advisory]") {
				t.Errorf("first request already carries a note: %q", text)
			}
		}
		// The fresh attempt: the summary, the user's message and the note,
		// as the provider received it.
		retry := sc.Received[1]
		if len(retry.Messages) != 1 || !strings.HasPrefix(retry.Messages[0].Content[0].Text, "Summary of the conversation so far:") {
			t.Errorf("fresh attempt is not summary + user message: %+v", retry.Messages)
		}
		const note = "[advisory] The conversation exceeded the model's context window and was compacted into a summary (about 219898 tokens down to about 41000)."
		texts := lastUserText(retry)
		if len(texts) == 0 || !strings.HasPrefix(texts[len(texts)-1], note) {
			t.Errorf("fresh attempt's last message = %q, want it to end with the note %q", texts, note)
		}
		if n := sc.Requests[1].Notes; len(n) != 1 {
			t.Errorf("fresh attempt carried %d notes, want 1: %q", len(n), n)
		}
		wantAnswered(t, sc)
	})

	t.Run("invalid key: stop", func(t *testing.T) {
		sc := s[3]
		wantActions(t, sc, erradvisor.Stop)
		wantEvents(t, sc)
		wantClass(t, sc.Classifications[0], erradvisor.Permanent, erradvisor.ReasonAuth)
		if got, want := sc.Final.Explain(), "permanent: auth, not retried"; got != want {
			t.Errorf("Explain() = %q, want %q", got, want)
		}
		wantNote(t, sc, "retrying does not fix (class: permanent, reason: auth)", "invalid x-api-key")
	})

	t.Run("usage limit: stop with the reset", func(t *testing.T) {
		sc := s[4]
		wantActions(t, sc, erradvisor.Stop)
		wantEvents(t, sc)
		c := sc.Classifications[0]
		wantClass(t, c, erradvisor.Quota, erradvisor.ReasonUsageLimit)
		if want := start.Add(3*time.Hour + 51*time.Minute); c.ResetAt.Sub(want).Abs() > time.Minute {
			t.Errorf("ResetAt = %s, want about %s", c.ResetAt, want)
		}
		reset := c.ResetAt.UTC().Format("15:04 MST")
		if got, want := sc.Final.Explain(), "quota: usage_limit, resets at "+reset; got != want {
			t.Errorf("Explain() = %q, want %q", got, want)
		}
		wantNote(t, sc, "usage limit or quota was reached", "The limit resets at "+c.ResetAt.UTC().Format("15:04 UTC")+" (in about 4 hours)")
	})

	t.Run("error event in a 200 stream", func(t *testing.T) {
		sc := s[5]
		wantActions(t, sc, erradvisor.Retry, erradvisor.None)
		wantEvents(t, sc, events.TypeAutoRetryStart, events.TypeAutoRetryEnd)
		wantClass(t, sc.Classifications[0], erradvisor.Transient, erradvisor.ReasonOverloaded)
		wantAnswered(t, sc)
	})

	t.Run("length stop: continue", func(t *testing.T) {
		sc := s[6]
		wantActions(t, sc, erradvisor.Continue, erradvisor.None)
		wantEvents(t, sc)
		if d := sc.Decisions[0]; d.Text != erradvisor.DefaultContinueText {
			t.Errorf("continuation text %q", d.Text)
		}
		// The continuation request: the prompt, the cut-off answer, and the
		// hidden "continue".
		msgs := sc.Received[1].Messages
		if len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[2].Content[0].Text != "continue" {
			t.Errorf("continuation request = %+v", msgs)
		}
		wantAnswered(t, sc)
	})

	t.Run("thinking-only stop: one nudge", func(t *testing.T) {
		sc := s[7]
		wantActions(t, sc, erradvisor.Nudge, erradvisor.None)
		wantEvents(t, sc)
		if d := sc.Decisions[0]; d.Text != "continue" || d.Attempt != 1 || d.Max != 1 {
			t.Errorf("nudge = %q %d/%d", d.Text, d.Attempt, d.Max)
		}
		texts := lastUserText(sc.Received[1])
		if len(texts) == 0 || texts[len(texts)-1] != "continue" {
			t.Errorf("nudge request ends with %q, want the hidden \"continue\"", texts)
		}
		wantAnswered(t, sc)
	})
}

func wantActions(t *testing.T, sc ScenarioResult, want ...erradvisor.Action) {
	t.Helper()
	var got []erradvisor.Action
	for _, d := range sc.Decisions {
		got = append(got, d.Action)
	}
	if !slices.Equal(got, want) {
		t.Errorf("decisions %v, want %v", got, want)
	}
	if sc.Final.Action != want[len(want)-1] {
		t.Errorf("final decision %v, want %v", sc.Final.Action, want[len(want)-1])
	}
}

func wantEvents(t *testing.T, sc ScenarioResult, want ...string) {
	t.Helper()
	var got []string
	for _, e := range sc.Events {
		got = append(got, e.EventType())
	}
	if !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

func wantClass(t *testing.T, c erradvisor.Classification, class erradvisor.Class, reason erradvisor.Reason) {
	t.Helper()
	if c.Class != class || c.Reason != reason {
		t.Errorf("classified %s/%s (rule %s), want %s/%s", c.Class, c.Reason, c.Rule, class, reason)
	}
}

func wantAnswered(t *testing.T, sc ScenarioResult) {
	t.Helper()
	if sc.Answer == "" || sc.Final.Action != erradvisor.None {
		t.Errorf("turn not answered: final %v, answer %q", sc.Final.Action, sc.Answer)
	}
}

func wantNote(t *testing.T, sc ScenarioResult, parts ...string) {
	t.Helper()
	if len(sc.PendingNotes) != 1 {
		t.Fatalf("next request would carry %d notes, want 1: %q", len(sc.PendingNotes), sc.PendingNotes)
	}
	for _, p := range parts {
		if !strings.Contains(sc.PendingNotes[0], p) {
			t.Errorf("note %q lacks %q", sc.PendingNotes[0], p)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/google/go-cmp/cmp"
)

// step is what the test checks of one Decision.
type step struct {
	Action erradvisor.Action
	Cause  erradvisor.Cause
	Class  erradvisor.Class
	Reason erradvisor.Reason
	Delay  time.Duration
}

func steps(ds []erradvisor.Decision) []step {
	out := make([]step, len(ds))
	for i, d := range ds {
		out[i] = step{d.Action, d.Cause, d.Classification.Class, d.Classification.Reason, d.Delay}
	}
	return out
}

// TestRun runs the program's scenarios against its fake API through the
// real SDK client.
func TestRun(t *testing.T) {
	var log bytes.Buffer
	start := time.Now()
	got, err := run(context.Background(), &log)
	elapsed := time.Since(start)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("run took %s; it must finish in a few seconds", elapsed)
	}

	type result struct {
		Steps    []step
		Requests int
		Answer   string
	}
	want := map[string]result{
		"1. overloaded twice, then an answer": {
			Steps: []step{
				{erradvisor.Retry, erradvisor.CauseRetryable, erradvisor.Transient, erradvisor.ReasonOverloaded, 20 * time.Millisecond},
				{erradvisor.Retry, erradvisor.CauseRetryable, erradvisor.Transient, erradvisor.ReasonOverloaded, 40 * time.Millisecond},
				{Action: erradvisor.None, Cause: erradvisor.CauseSuccess},
			},
			Requests: 3,
			Answer:   "- Pure decisions\n- The host owns I/O\n- Notes for the next request only",
		},
		"2. prompt too long: compact, then one fresh attempt": {
			Steps: []step{
				{Action: erradvisor.Compact, Cause: erradvisor.CauseOverflow, Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow},
				{Action: erradvisor.None, Cause: erradvisor.CauseSuccess},
			},
			Requests: 2,
			Answer:   "The bug is a missing symbol at step 412: libfoo is linked before the library that needs it.",
		},
		"3. rate limited with retry-after": {
			Steps: []step{
				// retry-after: 1 wins over the 20 ms backoff.
				{erradvisor.Retry, erradvisor.CauseRetryable, erradvisor.Transient, erradvisor.ReasonRateLimit, time.Second},
				{Action: erradvisor.None, Cause: erradvisor.CauseSuccess},
			},
			Requests: 2,
			Answer:   "Issues 3, 5 and 8 are open.",
		},
		"4. refusal": {
			Steps: []step{
				{Action: erradvisor.Stop, Cause: erradvisor.CauseRefused, Class: erradvisor.Permanent, Reason: erradvisor.ReasonContentPolicy},
			},
			Requests: 1,
			Answer:   "I",
		},
	}
	gotRes := map[string]result{}
	for _, sc := range got {
		gotRes[sc.Name] = result{steps(sc.Decisions), len(sc.Received), sc.Answer}
		// WithMaxRetries(0): every attempt the server saw is a first one,
		// and every one reached the Session.
		for i, r := range sc.Received {
			if r.RetryCount != "0" {
				t.Errorf("%s: request %d has x-stainless-retry-count %q, want 0", sc.Name, i+1, r.RetryCount)
			}
		}
		if len(sc.Received) != len(sc.Decisions) {
			t.Errorf("%s: %d requests, %d decisions", sc.Name, len(sc.Received), len(sc.Decisions))
		}
	}
	if diff := cmp.Diff(want, gotRes); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
	if len(got) != 4 {
		t.Fatalf("%d scenarios, want 4", len(got))
	}

	t.Run("retry-after is honoured from the SDK error's headers", func(t *testing.T) {
		if c := got[2].Decisions[0].Classification; c.RetryAfter != time.Second || c.Rule == "" {
			t.Errorf("classification %+v, want RetryAfter 1s and a rule", c)
		}
	})
	t.Run("the fresh attempt after compaction is smaller and says so", func(t *testing.T) {
		r := got[1].Received
		if r[1].Messages >= r[0].Messages {
			t.Errorf("messages %d then %d; the compacted request must be smaller", r[0].Messages, r[1].Messages)
		}
		if !strings.Contains(r[1].Text, "compacted") {
			t.Errorf("the fresh attempt's last message %q carries no compaction note", r[1].Text)
		}
		if strings.Contains(r[0].Text, "[advisory]") {
			t.Errorf("the first request carries a note: %q", r[0].Text)
		}
	})
	t.Run("retries carry no note about the failure they retry", func(t *testing.T) {
		for _, r := range got[0].Received {
			if strings.Contains(r.Text, "[advisory]") {
				t.Errorf("a retry carries a note: %q", r.Text)
			}
		}
	})
	t.Run("the refusal is explained", func(t *testing.T) {
		if e := got[3].Decisions[0].Explain(); !strings.Contains(e, "refused") {
			t.Errorf("Explain() = %q", e)
		}
	})
}

// TestCancel checks that a cancelled context ends the run during a wait.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var log bytes.Buffer
	if _, err := run(ctx, &log); err == nil {
		t.Fatal("run ended without the context's error")
	}
}

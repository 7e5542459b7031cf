package main

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/erradvisor/erradvisor"
)

// recordedKind is what the recorded agent did after an assistant turn, as
// the following entries on the session's main line show it.
type recordedKind uint8

const (
	// The zero recordedKind: not an assistant turn (never printed).
	_ recordedKind = iota

	// recRetried: after a failed turn (stop reason "error"), another
	// request of the same user turn: an assistant entry with no user
	// message, tool result or compaction in between.
	recRetried
	// recContinued: after a turn that did not fail, another request with no
	// user message, tool result or compaction in between: a hidden
	// continuation (an extension's custom_message, or none at all).
	recContinued
	// recTools: tool results follow; the loop went on with the turn's
	// tool calls.
	recTools
	// recCompacted: a compaction entry follows.
	recCompacted
	// recUserTyped: a user message follows.
	recUserTyped
	// recSwitched: the model was switched (a model_change entry) and no
	// request of the same turn followed; a user message may come after.
	recSwitched
	// recNothing: the file ends.
	recNothing
)

func (k recordedKind) String() string {
	switch k {
	case recRetried:
		return "retried"
	case recContinued:
		return "continued"
	case recTools:
		return "tools"
	case recCompacted:
		return "compacted"
	case recUserTyped:
		return "user_typed"
	case recSwitched:
		return "model_switched"
	case recNothing:
		return "nothing"
	}
	return "-"
}

// recorded is what the recorded agent did after one assistant turn.
type recorded struct {
	kind recordedKind
	// line is the line of the entry that shows it; 0 for the end of file.
	line int
	// after is the time from the turn's entry to that entry (to the start of
	// the next request for recRetried and recContinued); hasAfter is false
	// when a time is missing.
	after    time.Duration
	hasAfter bool
	// switchTo is the model a model_change before that entry switched to,
	// "" when there was none; switchLine is its line.
	switchTo   string
	switchLine int
}

// text renders r for the human output.
func (r recorded) text() string {
	var s string
	switch r.kind {
	case recRetried:
		s = "retried"
	case recContinued:
		s = "continued (another request without a user message)"
	case recTools:
		s = "ran the tool calls and went on"
	case recCompacted:
		s = "compacted"
	case recUserTyped:
		s = "the user typed"
	case recSwitched:
		s = "the model was switched to " + r.switchTo
	case recNothing:
		return "nothing (end of file)"
	default:
		return "-"
	}
	if r.hasAfter {
		s += " after " + durationText(r.after)
	}
	s += fmt.Sprintf(" (line %d)", r.line)
	if r.kind != recSwitched && r.switchTo != "" {
		s += fmt.Sprintf("; the model was switched to %s before it (line %d)", r.switchTo, r.switchLine)
	}
	return s
}

// durationText renders a time difference with 0.1 s precision.
// A time difference between timestamps centuries apart saturates; its
// negation is clamped rather than overflowed.
func durationText(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
		if d < 0 { // the most negative Duration has no positive counterpart
			d = math.MaxInt64
		}
	}
	if d < time.Minute {
		return sign + fmt.Sprintf("%.1fs", d.Seconds())
	}
	r := d.Round(time.Second)
	if r%time.Second != 0 { // Round saturated
		r = d.Truncate(time.Second)
	}
	return sign + r.String()
}

// decisive reports whether an entry ends the look-ahead after an assistant
// turn: a request, a user message, a tool result or a compaction.
func decisive(e *sessionEntry) bool {
	switch e.typ {
	case "compaction":
		return true
	case "message":
		switch e.role {
		case "user", "toolResult":
			return true
		case "assistant":
			return !e.checkpoint
		}
	}
	return false
}

// recordAll computes, for every assistant entry of path, what the recorded
// agent did next, in one backward pass (linear in len(path)). The result is
// indexed like path; other entries keep the zero recordedKind.
func recordAll(path []*sessionEntry) []recorded {
	out := make([]recorded, len(path))
	next, sw := -1, -1 // the nearest decisive entry and model_change after i
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		if e.typ == "message" && e.role == "assistant" && !e.checkpoint {
			out[i] = recordedAfter(e, path, next, sw)
		}
		switch {
		case decisive(e):
			next, sw = i, -1
		case e.typ == "model_change":
			sw = i
		}
	}
	return out
}

// recordedAfter classifies what follows the assistant entry e: next is the
// index in path of the first decisive entry after it (-1: none), sw that of
// the first model_change before next (-1: none).
func recordedAfter(e *sessionEntry, path []*sessionEntry, next, sw int) recorded {
	var r recorded
	if sw >= 0 {
		r.switchTo, r.switchLine = providerModel(path[sw].provider, path[sw].model), path[sw].line
	}
	since := func(t time.Time) {
		if !t.IsZero() && !e.time.IsZero() {
			r.after, r.hasAfter = t.Sub(e.time), true
		}
	}
	if next < 0 {
		r.kind = recNothing
		if sw >= 0 {
			r.kind, r.line = recSwitched, path[sw].line
			since(path[sw].time)
		}
		return r
	}
	n := path[next]
	r.line = n.line
	switch {
	case n.typ == "compaction":
		r.kind = recCompacted
		since(n.time)
	case n.role == "assistant":
		r.kind = recContinued
		if e.stopReason == "error" {
			r.kind = recRetried
		}
		start := n.requestTime
		if start.IsZero() {
			start = n.time
		}
		since(start)
	case n.role == "toolResult":
		r.kind = recTools
		since(n.time)
	case sw >= 0:
		r.kind = recSwitched
		since(path[sw].time)
	default:
		r.kind = recUserTyped
		since(n.time)
	}
	return r
}

// agreement compares the library's verdict with what the recorded agent
// did; compared is false where the two cannot be compared. The mapping:
//
//	verdict         agrees with                                   disagrees with
//	Retry           retried                                       anything else
//	Compact         compacted                                     anything else
//	Stop            user typed, model switched, nothing            retried, continued, tools, compacted
//	Continue, Nudge continued (a hidden continuation)              anything else
//	None            tools, user typed, model switched, nothing     retried, continued, compacted
//	Defer           not compared: the host's own retry layer decides
//
// A turn with no verdict (a stop reason the Session does not decide on) is
// not compared either.
func agreement(a erradvisor.Action, k recordedKind) (agrees, compared bool) {
	switch a {
	case erradvisor.Retry:
		return k == recRetried, true
	case erradvisor.Compact:
		return k == recCompacted, true
	case erradvisor.Stop:
		return k == recUserTyped || k == recSwitched || k == recNothing, true
	case erradvisor.Continue, erradvisor.Nudge:
		return k == recContinued, true
	case erradvisor.None:
		return k == recTools || k == recUserTyped || k == recSwitched || k == recNothing, true
	}
	return false, false
}

// tally counts agreements by kind: verdict action and recorded kind.
type tally struct {
	counts      map[pairKey]int
	notCompared int
}

type pairKey struct {
	verdict  string
	recorded string
	agrees   bool
}

func (t *tally) add(verdict string, k recordedKind, agrees, compared bool) {
	if !compared {
		t.notCompared++
		return
	}
	if t.counts == nil {
		t.counts = map[pairKey]int{}
	}
	t.counts[pairKey{verdict, k.String(), agrees}]++
}

// pairCount is one line of the summary.
type pairCount struct {
	Verdict  string `json:"verdict"`
	Recorded string `json:"recorded"`
	Agrees   bool   `json:"agrees"`
	Count    int    `json:"count"`
}

// pairs returns the counts, agreements first, then by count (descending),
// verdict and recorded kind.
func (t *tally) pairs() (ps []pairCount, agree, disagree int) {
	for k, n := range t.counts {
		ps = append(ps, pairCount{k.verdict, k.recorded, k.agrees, n})
		if k.agrees {
			agree += n
		} else {
			disagree += n
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Agrees != b.Agrees {
			return a.Agrees
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Verdict != b.Verdict {
			return a.Verdict < b.Verdict
		}
		return a.Recorded < b.Recorded
	})
	return ps, agree, disagree
}

package main

import (
	"iter"

	"github.com/erradvisor/erradvisor"
)

// transcript is the conversation a replay hands to Session.Notes: one
// slice of entries, oldest first, that only grows, with a newest-first view
// over it. Every operation a replay makes per entry is O(1) amortized, so a
// replay is linear in the length of the session file:
//
//   - add appends;
//   - drop removes a superseded attempt: the last entry is truncated, any
//     other one is marked and skipped by the view;
//   - compact replaces everything before the first kept entry with the
//     summary by moving the start of the live part and keeping the summary
//     aside; the dead prefix is reclaimed once it is the larger half.
//
// The view (newestFirst) stops as soon as its consumer does, so the cost
// of one request's notes is that of the scan (turns since the last
// success), not the transcript's length.
type transcript struct {
	entries []erradvisor.Entry
	meta    []tmeta
	// start is the index of the first live entry; before it, entries were
	// replaced by a compaction summary.
	start int
	// summary is the latest compaction summary, older than every live
	// entry, when hasSummary is set.
	summary    erradvisor.Entry
	hasSummary bool
	// byID and byIndex find a compaction's first kept entry by id (versions
	// 2 and 3) or by parsed index (version 1).
	byID    map[string]int
	byIndex map[int]int
	// base is the number of entries reclaimed from the front of the slices:
	// positions handed out by add are base-relative, so they stay valid.
	base int
}

// tmeta is what a transcript keeps beside each entry.
type tmeta struct {
	id      string
	index   int
	dropped bool
}

// add appends an entry with its file id and parsed index and returns its
// position.
func (t *transcript) add(id string, index int, e erradvisor.Entry) int {
	if t.byID == nil {
		t.byID, t.byIndex = map[string]int{}, map[int]int{}
	}
	pos := t.base + len(t.entries)
	t.entries = append(t.entries, e)
	t.meta = append(t.meta, tmeta{id: id, index: index})
	if id != "" {
		t.byID[id] = pos
	}
	t.byIndex[index] = pos
	return pos
}

// live reports whether position pos holds a live entry.
func (t *transcript) live(pos int) bool {
	i := pos - t.base
	return i >= t.start && i < len(t.entries) && !t.meta[i].dropped
}

// drop removes the entry at position pos from the view: a failed attempt
// that a retry or a recovery supersedes. The last entry is truncated;
// another is marked.
func (t *transcript) drop(pos int) {
	if !t.live(pos) {
		return
	}
	i := pos - t.base
	if i == len(t.entries)-1 {
		m := t.meta[i]
		if p, ok := t.byID[m.id]; ok && p == pos {
			delete(t.byID, m.id)
		}
		if p, ok := t.byIndex[m.index]; ok && p == pos {
			delete(t.byIndex, m.index)
		}
		t.entries[i] = erradvisor.Entry{}
		t.entries, t.meta = t.entries[:i], t.meta[:i]
		return
	}
	t.meta[i].dropped = true
}

// find returns the position of the entry after the last compaction with
// file id id (byID) or parsed index index (version 1, byIndex), or -1. A
// dropped entry is found too: what follows it is kept.
func (t *transcript) find(byID bool, id string, index int) int {
	var pos int
	var ok bool
	if byID {
		pos, ok = t.byID[id]
	} else {
		pos, ok = t.byIndex[index]
	}
	if i := pos - t.base; !ok || i < t.start || i >= len(t.entries) {
		return -1
	}
	return pos
}

// compact replaces every entry before position keep (-1: every entry)
// with summary.
func (t *transcript) compact(summary erradvisor.Entry, keep int) {
	t.summary, t.hasSummary = summary, true
	if keep < 0 {
		t.start = len(t.entries)
	} else {
		t.start = keep - t.base
	}
	t.reclaim()
}

// reclaim frees the dead prefix once it holds most of the slice, so a long
// session with many compactions keeps only its live part.
func (t *transcript) reclaim() {
	if t.start < 1024 || t.start < len(t.entries)/2 {
		return
	}
	n := t.start
	t.entries = append([]erradvisor.Entry(nil), t.entries[n:]...)
	t.meta = append([]tmeta(nil), t.meta[n:]...)
	t.base += n
	t.start = 0
	t.byID, t.byIndex = make(map[string]int, len(t.meta)), make(map[int]int, len(t.meta))
	for i, m := range t.meta {
		if m.id != "" {
			t.byID[m.id] = t.base + i
		}
		t.byIndex[m.index] = t.base + i
	}
}

// len returns the number of entries in the view.
func (t *transcript) len() int {
	n := 0
	for _, m := range t.meta[t.start:] {
		if !m.dropped {
			n++
		}
	}
	if t.hasSummary {
		n++
	}
	return n
}

// newestFirst is the view Session.Notes reads: the live entries newest
// first, then the summary. It copies nothing.
func (t *transcript) newestFirst() iter.Seq[erradvisor.Entry] {
	return func(yield func(erradvisor.Entry) bool) {
		for i := len(t.entries) - 1; i >= t.start; i-- {
			if t.meta[i].dropped {
				continue
			}
			if !yield(t.entries[i]) {
				return
			}
		}
		if t.hasSummary {
			yield(t.summary)
		}
	}
}

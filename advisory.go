package erradvisor

import (
	"context"
	"iter"
	"log/slog"
	"strings"
	"time"
)

// The notes side of a Session lives here: the host's view of its transcript
// (Entry), and the scan that picks the notes for the next outgoing request.

// EntryKind is the kind of a transcript entry.
type EntryKind uint8

// The entry kinds. The zero value is EntryOther.
const (
	// EntryOther is any entry the scan does not read: custom or
	// host-specific messages, shell output, labels.
	EntryOther EntryKind = iota
	// EntryUser is a user message.
	EntryUser
	// EntryAssistant is a model response, finished or failed.
	EntryAssistant
	// EntryToolResult is the result of a tool call, successful or not. Tool
	// errors are already visible to the model and give no note.
	EntryToolResult
	// EntryCompactionSummary is the summary that replaced compacted turns.
	EntryCompactionSummary
	// EntryBranchSummary is the summary of an abandoned branch.
	EntryBranchSummary
)

// String returns the kind's lower-case name ("user", "assistant", ...).
func (k EntryKind) String() string {
	switch k {
	case EntryUser:
		return "user"
	case EntryAssistant:
		return "assistant"
	case EntryToolResult:
		return "tool_result"
	case EntryCompactionSummary:
		return "compaction_summary"
	case EntryBranchSummary:
		return "branch_summary"
	default:
		return "other"
	}
}

// Entry is the Session's view of one transcript entry. The host fills it
// from its own message type; it is a small value, and the Session never
// keeps it, nor anything it refers to, beyond the call that received it.
type Entry struct {
	// Kind is what the entry is.
	Kind EntryKind
	// StopReason is how an assistant entry ended; other kinds ignore it.
	// StopError marks a failed request, StopAborted an aborted one.
	StopReason StopReason
	// ErrorMessage is the error text of a failed assistant entry.
	ErrorMessage string
	// Classification is the verdict on a failed assistant entry, when the
	// host stored the one its Decision carried. When it is zero, the
	// Session uses the verdict it decided itself on that failure, and reads
	// ErrorMessage only for a failure it never saw (a session resumed from
	// disk, say).
	Classification Classification
	// Provider and Model identify where an assistant entry's request went.
	Provider, Model string
	// Time is when the entry was created. A zero Time is never stale.
	Time time.Time
	// Content is what an assistant entry produced. An entry with neither
	// text nor tool calls stated is not a success for the scan, which reads
	// past it; the zero Content (not stated) counts as a success.
	Content Content
}

// success reports whether e is an assistant entry whose request succeeded
// with usable output.
func (e *Entry) success() bool {
	switch e.StopReason {
	case StopError, StopAborted:
		return false
	}
	return e.Content.usable()
}

// NewestFirst returns a view of entries, stored oldest first, that yields
// them newest first without copying them. It allocates once per call; a
// host can keep the returned sequence and reuse it while the slice is
// unchanged.
func NewestFirst(entries []Entry) iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for i := len(entries) - 1; i >= 0; i-- {
			if !yield(entries[i]) {
				return
			}
		}
	}
}

// Target is where the next request goes: its provider id and model.
type Target struct {
	Provider string
	Model    string
}

// scanState is the state of one transcript scan, kept in the Session so a
// scan allocates nothing.
type scanState struct {
	failed  Entry
	hasFail bool
	prev    time.Time // the time of the last timed entry read
	// mode says how the scan reads: scanNewest stops early and notices a
	// timed entry newer than the one before it (reversed); scanWhole reads
	// everything as if oldest first, keeping the last failure after the
	// last success and counting the timed pairs in each order; scanTrusted
	// reads newest first and ignores times.
	mode            uint8
	reversed        bool
	rising, falling int
	// held is set in scanNewest mode when the first timed entry stops the
	// scan: the next entry is read too, to tell the order, before the
	// stop stands.
	held bool
}

const (
	scanNewest uint8 = iota
	scanWhole
	scanTrusted
)

// Notes returns the notes for the next outgoing request; see AppendNotes.
func (s *Session) Notes(now time.Time, next Target, transcript iter.Seq[Entry]) []Note {
	return s.appendNotes(nil, now, next, transcript, true)
}

// AppendNotes appends to dst the notes for the next outgoing request, in
// priority order, and returns the extended slice. now is the time the
// request is built; next is where it goes; transcript is the request's
// conversation, newest entry first (see NewestFirst); nil reads as an empty
// one. The scan stops at the latest successful or aborted assistant entry or
// summary (reading one entry more when that is the first, to tell the
// order), so its cost does not grow with the transcript's length, and
// nothing is allocated when there is no note. A transcript handed oldest
// first is detected from its entries' times and read whole instead.
//
// The notes say only what is true for the request being built:
//
//   - an automatic retry carries no note about the failure it retries;
//   - the fresh attempt after an overflow recovery carries the recovery's
//     outcome, once;
//   - any other request carries a note on the newest failure since the last
//     success, with the verdict the Session's Decision used (or the entry's
//     own Classification), saying that automatic retries did not succeed only
//     when retries were made, and giving a quota's reset time when known.
//
// When the failed request went to another model or provider than next, its
// overflow note does not suggest a change the user has already made. A
// pending command failure is reported once, and kept for a later request if
// the cap cuts it.
func (s *Session) AppendNotes(dst []Note, now time.Time, next Target, transcript iter.Seq[Entry]) []Note {
	return s.appendNotes(dst, now, next, transcript, true)
}

// PeekNotes returns the notes AppendNotes would return now, without
// consuming the one-shot ones: for showing a user what the next request will
// carry. A compaction outcome and a command failure stay pending.
func (s *Session) PeekNotes(now time.Time, next Target, transcript iter.Seq[Entry]) []Note {
	return s.appendNotes(nil, now, next, transcript, false)
}

func (s *Session) appendNotes(dst []Note, now time.Time, next Target, transcript iter.Seq[Entry], consume bool) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()

	room := s.p.maxNotes()
	compacted := false
	if r, ok := s.tracker.takeReport(consume); ok {
		dst = s.add(dst, compactionNote(r), slog.String("outcome", r.outcome.String()))
		room--
		compacted = true
	}

	if room > 0 && transcript != nil {
		if n, ok := s.failureNote(now, next, transcript, compacted); ok {
			dst = append(dst, n)
			room--
		}
	}

	if cf := &s.command; cf.ok {
		switch {
		case stale(cf.at, now, s.p.commandTTL()):
			s.skip("stale command failure", slog.Time("at", cf.at))
			if consume {
				*cf = commandFailure{}
			}
		case room > 0:
			dst = s.add(dst, commandNote(cf.name, cf.errText))
			if consume {
				*cf = commandFailure{}
			}
		default:
			s.skip("command failure kept for a later request: note cap reached")
		}
	}
	return dst
}

// failureNote reads the transcript for the newest failure since the last
// success and returns its note, if it calls for one.
func (s *Session) failureNote(now time.Time, next Target, transcript iter.Seq[Entry], compacted bool) (Note, bool) {
	s.scan = scanState{}
	transcript(s.stepFn)
	if s.scan.reversed {
		// One entry out of order may be clock skew; the whole sequence's
		// order decides, at the cost of reading it all.
		s.scan = scanState{mode: scanWhole}
		transcript(s.stepFn)
		if s.scan.rising <= s.scan.falling {
			s.scan = scanState{mode: scanTrusted}
			transcript(s.stepFn)
		}
	}
	e, found := s.scan.failed, s.scan.hasFail
	s.scan = scanState{}
	if !found {
		return Note{}, false
	}
	if s.next == nextRetry {
		s.skip("the request is an automatic retry")
		return Note{}, false
	}
	c, retried, msg, at := s.verdictFor(&e)
	switch {
	case stale(at, now, s.p.errorTTL()):
		s.skip("stale failed request", slog.Time("at", at))
		return Note{}, false
	case compacted && c.Class == Overflow:
		s.skip("overflow reported by the compaction note")
		return Note{}, false
	}
	// Provider ids are compared by their canonical form: "claude" and
	// "anthropic" are the same provider.
	switched := differs(e.Model, next.Model) ||
		e.Provider != "" && next.Provider != "" && !sameProvider(e.Provider, next.Provider)
	n, ok := providerNote(e.Model, msg, c, retried, switched, now)
	if !ok {
		s.skip("cancelled request", slog.String("rule", c.Rule))
		return Note{}, false
	}
	s.add(nil, n, slog.String("class", c.Class.String()), slog.String("rule", c.Rule),
		slog.Bool("model_switched", switched))
	return n, true
}

// verdictFor returns the verdict on the failed entry e, the retries made for
// it (-1 when not known), and the text and time to report: the entry's own
// Classification; else the Session's verdict on the newest failure since
// the last success; else, for a failure the Session never decided on (a
// session resumed from disk), a reading of e's text.
func (s *Session) verdictFor(e *Entry) (c Classification, retried int, msg string, at time.Time) {
	msg, at, retried = e.ErrorMessage, e.Time, -1
	// The Session forgets its verdict when a turn succeeds, so a verdict it
	// holds is on the newest failure since then: the one the scan found,
	// whatever text and time the host stored it with.
	v := &s.last
	mine := v.ok
	switch {
	case e.Classification != (Classification{}):
		c = e.Classification
		if mine && v.message == e.ErrorMessage {
			retried = v.retried
		}
	case mine:
		c, retried = v.c, v.retried
		if v.message != "" {
			msg = v.message
		}
		at = v.at
	default:
		c = s.classify(Failure{Provider: e.Provider, Model: e.Model, Message: e.ErrorMessage, At: e.Time})
	}
	return c, retried, msg, at
}

// step examines one entry and reports whether the scan goes on. Newest
// first, it stops at a summary, at an aborted assistant entry, at one that
// succeeded, and at the first failed one, which it records. Oldest first, it
// reads everything and keeps the last failure after the last of those.
func (s *Session) step(e Entry) bool {
	sc := &s.scan
	if sc.held {
		// The entry after a held stop only tells the order.
		sc.reversed = !e.Time.IsZero() && !sc.prev.IsZero() && e.Time.After(sc.prev)
		return false
	}
	first := sc.prev.IsZero()
	if !e.Time.IsZero() && sc.mode != scanTrusted {
		if !sc.prev.IsZero() {
			switch {
			case sc.mode == scanWhole && e.Time.After(sc.prev):
				sc.rising++
			case sc.mode == scanWhole && e.Time.Before(sc.prev):
				sc.falling++
			case e.Time.After(sc.prev):
				sc.reversed = true
				return false
			}
		}
		sc.prev = e.Time
	}
	stop, failed := false, false
	switch e.Kind {
	case EntryCompactionSummary, EntryBranchSummary:
		stop = true
	case EntryAssistant:
		switch {
		case e.StopReason == StopError:
			stop, failed = true, true
		case e.StopReason == StopAborted, e.success():
			stop = true
		}
	}
	if sc.mode == scanWhole {
		if stop {
			sc.failed, sc.hasFail = e, failed
		}
		return true
	}
	if failed {
		sc.failed, sc.hasFail = e, true
	}
	if stop && first && sc.mode == scanNewest && !e.Time.IsZero() {
		// A transcript handed oldest first may begin with a summary or a
		// success: read one more entry before trusting the order.
		sc.held = true
		return true
	}
	return !stop
}

// add appends n to dst and logs it.
func (s *Session) add(dst []Note, n Note, attrs ...slog.Attr) []Note {
	if s.logger != nil {
		s.logger.LogAttrs(context.Background(), slog.LevelDebug, "erradvisor: note",
			append([]slog.Attr{slog.String("kind", n.Kind.String())}, attrs...)...)
	}
	return append(dst, n)
}

// skip logs why something gives no note.
func (s *Session) skip(why string, attrs ...slog.Attr) {
	if s.logger != nil {
		s.logger.LogAttrs(context.Background(), slog.LevelDebug, "erradvisor: no note",
			append([]slog.Attr{slog.String("why", why)}, attrs...)...)
	}
}

// differs reports whether two known identifiers differ, ignoring case.
func differs(was, now string) bool {
	return was != "" && now != "" && !strings.EqualFold(was, now)
}

// stale reports whether something that happened at t is older than ttl at
// now. A zero t is never stale.
func stale(t, now time.Time, ttl time.Duration) bool {
	return !t.IsZero() && now.Sub(t) > ttl
}

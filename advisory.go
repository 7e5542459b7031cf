package erradvisor

import (
	"context"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// The Advisor, which scans a transcript for the notes of the next request, lives here.

// EntryKind is the kind of a transcript entry.
type EntryKind uint8

// The entry kinds. The zero value is EntryOther.
const (
	// EntryOther is any entry the advisor does not read: custom or
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

// Entry is the advisor's view of one transcript entry. The host fills it
// from its own message type; it is a small value, and the advisor never
// keeps it, nor anything it refers to, beyond the call that received it.
type Entry struct {
	// Kind is what the entry is.
	Kind EntryKind
	// StopReason is how an assistant entry ended; other kinds ignore it.
	// StopError marks a failed request, StopAborted an aborted one; the
	// other reasons are a success when the entry has text or tool calls.
	StopReason StopReason
	// ErrorMessage is the error text of a failed assistant entry.
	ErrorMessage string
	// Provider and Model identify where an assistant entry's request went.
	Provider, Model string
	// Time is when the entry was created. A zero Time is never stale.
	Time time.Time
	// HasText reports visible text in an assistant entry.
	HasText bool
	// HasToolCalls reports tool calls in an assistant entry.
	HasToolCalls bool
	// ThinkingOnly reports an assistant entry that carried only thinking
	// content, neither text nor tool calls. Like an empty turn, it is not a
	// success: the scan reads past it.
	ThinkingOnly bool
}

// LogValue implements slog.LogValuer. It leaves out the error text, which
// may carry secrets.
func (e Entry) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("kind", e.Kind.String()),
		slog.String("stop_reason", e.StopReason.String()),
		slog.String("provider", e.Provider),
		slog.String("model", e.Model),
		slog.Time("time", e.Time),
	)
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

// Advisor defaults.
const (
	// DefaultMaxNotes is the cap on notes per request.
	DefaultMaxNotes = 2
	// DefaultErrorTTL is the age past which a failed request gives no note.
	DefaultErrorTTL = 15 * time.Minute
	// DefaultCommandTTL is the age past which a command failure gives no
	// note.
	DefaultCommandTTL = 3 * time.Minute
)

// AdvisorConfig configures an Advisor. The zero value selects the defaults.
type AdvisorConfig struct {
	// MaxNotes caps the notes of one request; the highest priorities are
	// kept. Zero or negative means DefaultMaxNotes.
	MaxNotes int
	// ErrorTTL is the age past which a failed request gives no note. Zero or
	// negative means DefaultErrorTTL.
	ErrorTTL time.Duration
	// CommandTTL is the age past which a command failure gives no note.
	// Zero or negative means DefaultCommandTTL.
	CommandTTL time.Duration
	// Tracker is the session's compaction tracker, shared with its
	// Retrier. Nil means the Advisor makes its own.
	Tracker *CompactionTracker
	// Classifier classifies the failed request's error text. Nil means the
	// package-level Classify with the embedded default rules.
	Classifier *Classifier
	// Logger, when set, receives a debug record for every note built and
	// for every failure or command failure left without a note, with the
	// reason. Records never carry provider or command text.
	Logger *slog.Logger
}

// commandFailure is a command failure waiting to be reported.
type commandFailure struct {
	name, errText string
	at            time.Time
}

// Advisor holds one session's advisory state: the compaction tracker and a
// pending command failure. Notes (or AppendNotes) yields what the next
// outgoing request should carry. Make one per session with NewAdvisor; the
// zero value works with the defaults and its own tracker.
//
// An Advisor is safe for concurrent use. It holds its lock while it reads
// the transcript, so the transcript's iterator must not call the Advisor.
type Advisor struct {
	mu         sync.Mutex
	maxNotes   int
	errorTTL   time.Duration
	commandTTL time.Duration
	tracker    *CompactionTracker
	classify   func(Failure) Classification
	logger     *slog.Logger

	command *commandFailure // the latest unreported command failure

	// Scan state, used under mu by step, which is made once so that a
	// scan does not allocate a closure.
	stepFn  func(Entry) bool
	failed  Entry
	hasFail bool
}

// NewAdvisor returns an Advisor configured by cfg.
func NewAdvisor(cfg AdvisorConfig) *Advisor {
	a := &Advisor{
		maxNotes:   cfg.MaxNotes,
		errorTTL:   cfg.ErrorTTL,
		commandTTL: cfg.CommandTTL,
		tracker:    cfg.Tracker,
		logger:     cfg.Logger,
	}
	if a.maxNotes <= 0 {
		a.maxNotes = DefaultMaxNotes
	}
	if a.errorTTL <= 0 {
		a.errorTTL = DefaultErrorTTL
	}
	if a.commandTTL <= 0 {
		a.commandTTL = DefaultCommandTTL
	}
	if a.tracker == nil {
		a.tracker = NewCompactionTracker()
	}
	if c := cfg.Classifier; c != nil {
		a.classify = c.Classify
	} else {
		a.classify = Classify
	}
	a.stepFn = a.step
	return a
}

// ensure gives a zero Advisor the defaults. It is called with a.mu held.
func (a *Advisor) ensure() {
	if a.stepFn != nil {
		return
	}
	d := NewAdvisor(AdvisorConfig{MaxNotes: a.maxNotes, ErrorTTL: a.errorTTL, CommandTTL: a.commandTTL, Tracker: a.tracker, Logger: a.logger})
	a.maxNotes, a.errorTTL, a.commandTTL = d.maxNotes, d.errorTTL, d.commandTTL
	a.tracker, a.classify = d.tracker, d.classify
	a.stepFn = a.step
}

// trackerRef returns the tracker, giving a zero Advisor its defaults first.
func (a *Advisor) trackerRef() *CompactionTracker {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ensure()
	return a.tracker
}

// Tracker returns the Advisor's compaction tracker, to share with the
// session's Retrier.
func (a *Advisor) Tracker() *CompactionTracker { return a.trackerRef() }

// UserTurn records a new user message; see CompactionTracker.UserTurn. A
// host whose Advisor shares its tracker with a Retrier calls
// Retrier.UserMessage instead, which re-arms the same tracker; calling both
// is harmless.
func (a *Advisor) UserTurn() { a.trackerRef().UserTurn() }

// CompactionStarted records that a compaction began; see
// CompactionTracker.Started.
func (a *Advisor) CompactionStarted(reason CompactionReason, at time.Time) CompactionStart {
	return a.trackerRef().Started(reason, at)
}

// CompactionEnded records that the compaction ended with res, or failed with
// err; see CompactionTracker.Ended.
func (a *Advisor) CompactionEnded(res *CompactionResult, err error, at time.Time) CompactionEnd {
	return a.trackerRef().Ended(res, err, at)
}

// CompactionCanceled records that the user cancelled the compaction; see
// CompactionTracker.Canceled.
func (a *Advisor) CompactionCanceled(at time.Time) CompactionEnd {
	return a.trackerRef().Canceled(at)
}

// CommandFailed records that the host command name failed with errText at
// the given time. The next request that is built within the command TTL
// carries a note about it; if the cap cuts that note, a later request
// carries it instead. Only the latest failure is kept. Use it for commands
// whose failure the model cannot otherwise see, not for tool or shell
// errors already in the transcript.
func (a *Advisor) CommandFailed(name, errText string, at time.Time) {
	a.mu.Lock()
	a.command = &commandFailure{name: name, errText: errText, at: at}
	a.mu.Unlock()
}

// Notes returns the notes for the next outgoing request; see AppendNotes.
func (a *Advisor) Notes(now time.Time, provider, model string, transcript iter.Seq[Entry]) []Note {
	return a.AppendNotes(nil, now, provider, model, transcript)
}

// AppendNotes appends to dst the notes for the next outgoing request, in
// priority order, and returns the extended slice. now is the time the
// request is built; provider and model are where it goes; transcript is the
// request's conversation, newest entry first (see NewestFirst); nil reads
// as an empty one. It is read
// only as far back as the latest successful or aborted assistant entry or
// summary, so the cost does not grow with the transcript's length, and
// nothing is allocated when there is no note. When the failed request went
// to another model or provider than this one, its overflow note is softened:
// it does not suggest a change the user has already made.
//
// The transcript must be the context the request is built from: a host that
// retries a transient failure automatically leaves the failed attempt out of
// the retry's context, so a trailing transient error means the retries have
// given up.
//
// Building notes consumes the one-shot ones: a compaction outcome is
// reported once, and a command failure once it is shown. Notes about a
// failed request come from the transcript and recur until a request
// succeeds or the error grows stale.
func (a *Advisor) AppendNotes(dst []Note, now time.Time, provider, model string, transcript iter.Seq[Entry]) []Note {
	return a.appendNotes(dst, now, provider, model, transcript, true)
}

// PeekNotes returns the notes AppendNotes would return now, without
// consuming the one-shot ones: for showing a user what the next request will
// carry. A compaction outcome and a command failure stay pending.
func (a *Advisor) PeekNotes(now time.Time, provider, model string, transcript iter.Seq[Entry]) []Note {
	return a.appendNotes(nil, now, provider, model, transcript, false)
}

func (a *Advisor) appendNotes(dst []Note, now time.Time, provider, model string, transcript iter.Seq[Entry], consume bool) []Note {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ensure()

	room := a.maxNotes
	compacted := false
	var r CompactionReport
	var ok bool
	if consume {
		r, ok = a.tracker.TakeReport(now)
	} else {
		r, ok = a.tracker.PeekReport(now)
	}
	if ok {
		dst = a.add(dst, compactionNote(r), slog.String("outcome", r.Outcome.String()))
		room--
		compacted = true
	}

	if room > 0 && transcript != nil {
		a.hasFail = false
		transcript(a.stepFn)
		e, found := a.failed, a.hasFail
		a.failed, a.hasFail = Entry{}, false
		switch {
		case !found:
		case a.stale(e.Time, now, a.errorTTL):
			a.skip("stale failed request", slog.Time("at", e.Time))
		default:
			c := a.classify(Failure{Provider: e.Provider, Model: e.Model, Message: e.ErrorMessage, At: e.Time})
			// Provider ids are compared by their canonical form: "claude"
			// and "anthropic" are the same provider.
			switched := differs(e.Model, model) ||
				e.Provider != "" && provider != "" && !sameProvider(e.Provider, provider)
			if compacted && c.Class == Overflow {
				// The compaction note already tells the model.
				a.skip("overflow reported by the compaction note")
			} else if n, ok := providerNote(e, c, switched, now); ok {
				dst = a.add(dst, n, slog.String("class", c.Class.String()), slog.String("rule", c.Rule),
					slog.Bool("model_switched", switched))
				room--
			} else {
				a.skip("cancelled request", slog.String("rule", c.Rule))
			}
		}
	}

	if cf := a.command; cf != nil {
		switch {
		case a.stale(cf.at, now, a.commandTTL):
			a.skip("stale command failure", slog.Time("at", cf.at))
			if consume {
				a.command = nil
			}
		case room > 0:
			dst = a.add(dst, commandNote(cf.name, cf.errText))
			if consume {
				a.command = nil
			}
		default:
			a.skip("command failure kept for a later request: note cap reached")
		}
	}
	return dst
}

// add appends n to dst and logs it.
func (a *Advisor) add(dst []Note, n Note, attrs ...slog.Attr) []Note {
	if a.logger != nil {
		a.logger.LogAttrs(context.Background(), slog.LevelDebug, "erradvisor: note",
			append([]slog.Attr{slog.String("kind", n.Kind.String())}, attrs...)...)
	}
	return append(dst, n)
}

// skip logs why something gives no note.
func (a *Advisor) skip(why string, attrs ...slog.Attr) {
	if a.logger != nil {
		a.logger.LogAttrs(context.Background(), slog.LevelDebug, "erradvisor: no note",
			append([]slog.Attr{slog.String("why", why)}, attrs...)...)
	}
}

// differs reports whether two known identifiers differ, ignoring case.
func differs(was, now string) bool {
	return was != "" && now != "" && !strings.EqualFold(was, now)
}

// stale reports whether something that happened at t is older than ttl at
// now. A zero t is never stale.
func (a *Advisor) stale(t, now time.Time, ttl time.Duration) bool {
	return !t.IsZero() && now.Sub(t) > ttl
}

// step examines one entry, newest first, and reports whether the scan goes
// on. It stops at a summary, at an aborted assistant entry, at one that
// succeeded with visible output or tool calls, and at the first failed one,
// which it records.
func (a *Advisor) step(e Entry) bool {
	switch e.Kind {
	case EntryCompactionSummary, EntryBranchSummary:
		return false
	case EntryAssistant:
		switch e.StopReason {
		case StopError:
			a.failed, a.hasFail = e, true
			return false
		case StopAborted:
			return false
		case StopEndTurn, StopLength, StopToolUse:
			// An empty or thinking-only turn is not a success.
			return !(e.HasText || e.HasToolCalls)
		}
	}
	return true
}

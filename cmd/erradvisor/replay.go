package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/events"
)

// replay feeds a recorded Pi session through an erradvisor.Session, as if
// it had been the request loop's advisor, and prints, for every
// request and every assistant turn on the session's main line, what it
// would have decided and told the model.
//
// What is replayed:
//
//   - The main line (see session.mainLine): file order for version 1 files,
//     the path from the last entry up through parentId for versions 2 and 3.
//   - A user message calls Session.UserMessage (printing the events of a
//     retry streak it ends) and joins the transcript.
//   - An assistant message is one request and its outcome. Just before it,
//     the replay prints the request: its provider and model (the assistant
//     message's), its start time (message.timestamp) and the notes
//     Session.Notes returns for the transcript so far. Then it prints the
//     outcome (stop reason, error summary, usage, content), the
//     classification of errorMessage (with providerError or diagnostics
//     status and code when the file has them), and the Decision of
//     Session.Decide at the entry's timestamp, with its events as JSON
//     lines. The transcript entry carries that verdict, so the notes say
//     what the decision said. Checkpoint snapshots (checkpoint:true) are
//     not requests and are skipped; stop reasons the Session does not know
//     ("deferred") are printed without a decision.
//   - A failed turn the Session retries (Retry) or recovers (Compact) leaves
//     the transcript when the next request is actually made, as a host's
//     retry leaves the failed attempt out of its context; when the file
//     shows no further request (the user wrote again), it stays, and the
//     next request's notes report it.
//   - A compaction entry after a Compact decision is the overflow
//     recovery: it is reported to the Session (CompactionStarted, then
//     CompactionEnded with its summary, firstKeptEntryId and tokensBefore)
//     and its events are printed. Any other compaction is a manual or
//     threshold one and is not reported. Either way the transcript becomes
//     the summary (an EntryCompactionSummary) followed by the kept entries
//     from firstKeptEntryId (v1: firstKeptEntryIndex) on.
//   - branch_summary entries become EntryBranchSummary, tool results
//     EntryToolResult, other message roles and custom_message entries
//     EntryOther; model_change entries set the current model. Other entry
//     types are not part of the conversation and are ignored.
//   - After the last entry, the replay prints the notes the next request
//     would carry, at the last entry's time, to the current model.
//
// Every time comes from the file; the clock is never read, so the output is
// the same on every run.
type replayer struct {
	w       *bufio.Writer
	s       *erradvisor.Session
	c       *erradvisor.Classifier
	version int

	transcript []tentry
	seq        int // next transcript sequence number

	provider, model string // the current model
	after           erradvisor.Preceding
	now             time.Time // the latest time seen in the file

	pendingCompact bool // the last decision was Compact; the next compaction is its recovery
	superseded     int  // seq of a retried failure, dropped at the next request; -1 when none
	requests       int
}

// tentry is one transcript entry with what is needed to find a compaction's
// kept range.
type tentry struct {
	seq   int
	id    string
	index int // parsed index, for v1 firstKeptEntryIndex
	e     erradvisor.Entry
}

// replayCmd runs `erradvisor replay [--policy P] [--rules FILE]... FILE.jsonl`.
func replayCmd(args []string, stdout, stderr io.Writer) error {
	var policyName string
	var rules stringList
	fs := newFlagSet("replay")
	fs.StringVar(&policyName, "policy", "conservative", "")
	fs.Var(&rules, "rules", "")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	p, err := policyByName(policyName)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("replay: give one session file (FILE.jsonl)")
	}
	c, err := loadClassifier(rules)
	if err != nil {
		return err
	}
	s, err := loadSession(files[0])
	if err != nil {
		return err
	}
	for _, w := range s.warnings {
		fmt.Fprintf(stderr, "erradvisor: warning: %s\n", w)
	}
	return replaySession(s, filepath.Base(files[0]), policyName, p, c, stdout)
}

// policyByName returns the preset named by --policy.
func policyByName(name string) (erradvisor.Policy, error) {
	switch strings.ToLower(name) {
	case "conservative":
		return erradvisor.Conservative(), nil
	case "persistent":
		return erradvisor.Persistent(), nil
	}
	return erradvisor.Policy{}, usageErr("--policy %q: want conservative or persistent", name)
}

// replaySession prints the replay of s; name is the file's base name.
func replaySession(s *session, name, policyName string, p erradvisor.Policy, c *erradvisor.Classifier, stdout io.Writer) error {
	rp := &replayer{
		w:          bufio.NewWriter(stdout),
		s:          erradvisor.NewSession(p, erradvisor.WithClassifier(c)),
		c:          c,
		version:    s.version,
		provider:   s.provider,
		model:      s.model,
		now:        s.created,
		superseded: -1,
	}
	path, how := s.mainLine()
	fmt.Fprintf(rp.w, "session %s  version %d  %s\n", s.id, s.version, name)
	if s.cwd != "" {
		fmt.Fprintf(rp.w, "cwd %s\n", s.cwd)
	}
	fmt.Fprintf(rp.w, "policy %s; %d entries; %s\n", strings.ToLower(policyName), len(s.entries), how)
	for _, e := range path {
		rp.entry(e)
	}
	rp.request(true, rp.now, rp.provider, rp.model)
	if err := rp.w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// entry replays one main-line entry.
func (rp *replayer) entry(e *sessionEntry) {
	if !e.time.IsZero() {
		rp.now = e.time
	}
	switch e.typ {
	case "model_change":
		rp.provider, rp.model = e.provider, e.model
		fmt.Fprintf(rp.w, "\nline %d  model_change  %s\n", e.line, providerModel(e.provider, e.model))
	case "compaction":
		rp.compaction(e)
	case "branch_summary":
		fmt.Fprintf(rp.w, "\nline %d  branch_summary  %q\n", e.line, excerpt(e.text, 60))
		rp.add(e, erradvisor.Entry{Kind: erradvisor.EntryBranchSummary, Time: e.time})
	case "custom_message":
		rp.add(e, erradvisor.Entry{Kind: erradvisor.EntryOther, Time: e.time})
	case "message":
		rp.message(e)
	}
}

// message replays a message entry.
func (rp *replayer) message(e *sessionEntry) {
	switch e.role {
	case "user":
		d := rp.s.UserMessage(rp.now)
		rp.pendingCompact = false
		rp.superseded = -1 // no retry followed: the failure stays in the context
		rp.after = erradvisor.AfterUser
		fmt.Fprintf(rp.w, "\nline %d  user  %q\n", e.line, excerpt(e.text, 60))
		for _, ev := range d.Events() {
			fmt.Fprintf(rp.w, "  event     %s\n", eventJSON(ev))
		}
		rp.add(e, erradvisor.Entry{Kind: erradvisor.EntryUser, Time: e.time})
	case "toolResult":
		rp.after = erradvisor.AfterToolResult
		fmt.Fprintf(rp.w, "\nline %d  toolResult  %s\n", e.line, dash(e.toolName))
		rp.add(e, erradvisor.Entry{Kind: erradvisor.EntryToolResult, Time: e.time})
	case "assistant":
		if e.checkpoint {
			return // a snapshot of a response in progress, not a request
		}
		rp.assistant(e)
	default:
		rp.add(e, erradvisor.Entry{Kind: erradvisor.EntryOther, Time: e.time})
	}
}

// assistant replays one request and its outcome.
func (rp *replayer) assistant(e *sessionEntry) {
	at := e.requestTime
	if at.IsZero() {
		at = rp.now
	}
	if e.provider != "" || e.model != "" {
		rp.provider, rp.model = e.provider, e.model
	}
	rp.request(false, at, e.provider, e.model)

	fmt.Fprintf(rp.w, "\nline %d  assistant  %s  %s\n", e.line, providerModel(e.provider, e.model), dash(e.stopReason))
	var content []string
	if e.hasText {
		content = append(content, "text")
	}
	if e.hasToolCalls {
		content = append(content, "toolCalls")
	}
	if e.hasThinking {
		content = append(content, "thinking")
	}
	if len(content) == 0 {
		content = append(content, "empty")
	}
	fmt.Fprintf(rp.w, "  outcome   stop=%s  content=%s  usage in=%d out=%d cacheRead=%d\n",
		dash(e.stopReason), strings.Join(content, "+"), e.usageIn, e.usageOut, e.usageCache)
	if e.errorMessage != "" {
		fmt.Fprintf(rp.w, "  error     %q\n", excerpt(errorSummary(e.errorMessage), 100))
	}

	stop, known := stopReasonOf(e.stopReason)
	produced := contentOf(e.hasText, e.hasToolCalls, e.hasThinking)
	o := erradvisor.Outcome{
		Stop: stop,
		Failure: erradvisor.Failure{
			Provider: e.provider, Model: e.model, Status: e.status, Code: e.code,
			Message: e.errorMessage, At: rp.now,
		},
		Provider: e.provider, Model: e.model, CurrentModel: rp.model,
		Usage:   erradvisor.TokenUsage{Input: e.usageIn, Output: e.usageOut, CacheRead: e.usageCache},
		Content: produced,
		After:   rp.after,
	}
	if stop == erradvisor.StopError || e.errorMessage != "" {
		// Classified once: the decision and the notes use this verdict.
		o.Classification = rp.c.Classify(o.Failure)
		fmt.Fprintf(rp.w, "  class     %s\n", humanLine(o.Classification))
	}

	entry := erradvisor.Entry{
		Kind: erradvisor.EntryAssistant, StopReason: stop, ErrorMessage: e.errorMessage,
		Provider: e.provider, Model: e.model, Time: e.time, Content: produced,
	}
	if stop == erradvisor.StopError {
		entry.Classification = o.Classification
	}
	if !known {
		fmt.Fprintf(rp.w, "  decision  - (stop reason %q is not one the Session decides on)\n", e.stopReason)
		entry.StopReason = erradvisor.StopEndTurn
		rp.add(e, entry)
		rp.after = erradvisor.AfterOther
		return
	}
	d := rp.s.Decide(o, rp.now)
	fmt.Fprintf(rp.w, "  decision  %s\n", decisionLine(d))
	for _, ev := range d.Events() {
		fmt.Fprintf(rp.w, "  event     %s\n", eventJSON(ev))
	}
	seq := rp.add(e, entry)
	rp.pendingCompact = d.Action == erradvisor.Compact
	switch d.Action {
	case erradvisor.Retry, erradvisor.Compact:
		rp.superseded = seq // the fresh attempt leaves this one out
	case erradvisor.Continue, erradvisor.Nudge:
		rp.superseded = -1
		rp.after = erradvisor.AfterContinuation
	default:
		rp.superseded = -1
		rp.after = erradvisor.AfterOther
	}
}

// compaction replays a compaction entry.
func (rp *replayer) compaction(e *sessionEntry) {
	recovery := rp.pendingCompact
	rp.pendingCompact = false
	kind := "manual or threshold (not an overflow recovery in this replay)"
	if recovery {
		kind = "overflow recovery"
	}
	fmt.Fprintf(rp.w, "\nline %d  compaction  tokensBefore=%d  %s\n", e.line, e.tokensBefore, kind)
	if recovery {
		start := rp.s.CompactionStarted(erradvisor.CompactionOverflow, rp.now)
		end := rp.s.CompactionEnded(&erradvisor.CompactionResult{
			Summary: e.text, FirstKeptEntryID: e.firstKeptID, TokensBefore: e.tokensBefore,
		}, nil, rp.now)
		fmt.Fprintf(rp.w, "  event     %s\n", eventJSON(start))
		fmt.Fprintf(rp.w, "  event     %s\n", eventJSON(end))
	}
	// The summary replaces everything before the first kept entry.
	keep := len(rp.transcript)
	for i, t := range rp.transcript {
		if (rp.version == 1 && e.firstKeptIndex >= 0 && t.index == e.firstKeptIndex) ||
			(rp.version > 1 && e.hasFirstKeptID && t.id == e.firstKeptID && t.id != "") {
			keep = i
			break
		}
	}
	kept := append([]tentry(nil), rp.transcript[keep:]...)
	rp.transcript = rp.transcript[:0]
	rp.add(e, erradvisor.Entry{Kind: erradvisor.EntryCompactionSummary, Time: e.time})
	rp.transcript = append(rp.transcript, kept...)
}

// add appends an entry to the transcript and returns its sequence number.
func (rp *replayer) add(e *sessionEntry, x erradvisor.Entry) int {
	rp.seq++
	rp.transcript = append(rp.transcript, tentry{seq: rp.seq, id: e.id, index: e.index, e: x})
	return rp.seq
}

// request prints one request point: the notes the Session appends for it.
// final marks the request after the last entry, which the file does not
// show.
func (rp *replayer) request(final bool, at time.Time, provider, model string) {
	if !final && rp.superseded >= 0 {
		// The retry is being made: the failed attempt is out of its context.
		for i, t := range rp.transcript {
			if t.seq == rp.superseded {
				rp.transcript = append(rp.transcript[:i], rp.transcript[i+1:]...)
				break
			}
		}
		rp.superseded = -1
	}
	entries := make([]erradvisor.Entry, len(rp.transcript))
	for i, t := range rp.transcript {
		entries[i] = t.e
	}
	notes := rp.s.Notes(at, erradvisor.Target{Provider: provider, Model: model}, erradvisor.NewestFirst(entries))
	label := "next request (after the last entry)"
	if !final {
		rp.requests++
		label = fmt.Sprintf("request %d", rp.requests)
	}
	fmt.Fprintf(rp.w, "  → %s  %s  at %s  notes: %d\n", label, providerModel(provider, model), formatTimeOrDash(at), len(notes))
	for _, n := range notes {
		fmt.Fprintf(rp.w, "      %s\n", n.Text)
	}
}

// contentOf describes what a turn produced; a turn with none of the three
// produced nothing.
func contentOf(text, toolCalls, thinking bool) erradvisor.Content {
	var c erradvisor.Content
	if text {
		c |= erradvisor.ContentText
	}
	if toolCalls {
		c |= erradvisor.ContentToolCalls
	}
	if thinking {
		c |= erradvisor.ContentThinking
	}
	if c == 0 {
		c = erradvisor.ContentNone
	}
	return c
}

// stopReasonOf maps Pi's stopReason to the Session's; ok is false for a
// reason the Session does not decide on.
func stopReasonOf(s string) (erradvisor.StopReason, bool) {
	switch s {
	case "stop":
		return erradvisor.StopEndTurn, true
	case "length":
		return erradvisor.StopLength, true
	case "toolUse":
		return erradvisor.StopToolUse, true
	case "error":
		return erradvisor.StopError, true
	case "aborted":
		return erradvisor.StopAborted, true
	}
	return erradvisor.StopEndTurn, false
}

// decisionLine renders a Decision on one line: action, delay, attempt and
// the explanation.
func decisionLine(d erradvisor.Decision) string {
	parts := []string{d.Action.String()}
	if d.Delay > 0 {
		parts = append(parts, "delay="+d.Delay.String())
	}
	if d.Attempt > 0 || d.Max > 0 {
		parts = append(parts, fmt.Sprintf("attempt=%d/%s", d.Attempt, maxString(d.Max)))
	}
	return strings.Join(parts, "  ") + "  — " + d.Explain()
}

// maxString renders a Decision's Max: "∞" when there is no limit.
func maxString(m int) string {
	if m == 0 {
		return "∞"
	}
	return fmt.Sprint(m)
}

// eventJSON marshals an event as one JSON line.
func eventJSON(ev events.Event) string {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Sprintf(`{"type":%q,"error":%q}`, ev.EventType(), err.Error())
	}
	return string(b)
}

// providerModel renders "provider/model", with "?" for a missing part.
func providerModel(provider, model string) string {
	if provider == "" && model == "" {
		return "?"
	}
	if provider == "" {
		provider = "?"
	}
	if model == "" {
		model = "?"
	}
	return provider + "/" + model
}

func formatTimeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// errorSummary shortens a provider error text: for "STATUS {json body}"
// shapes it gives "STATUS type: message", otherwise the text itself.
func errorSummary(msg string) string {
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return msg
	}
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	dec := json.NewDecoder(strings.NewReader(msg[i:]))
	if dec.Decode(&body) != nil {
		return msg
	}
	typ, text := body.Error.Type, body.Error.Message
	if text == "" {
		typ, text = body.Type, body.Message
	}
	if text == "" {
		return msg
	}
	prefix := strings.TrimSpace(msg[:i])
	s := text
	if typ != "" && typ != "error" {
		s = typ + ": " + text
	}
	if prefix != "" {
		s = prefix + " " + s
	}
	return s
}

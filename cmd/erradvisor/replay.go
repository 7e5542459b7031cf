package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/events"
	"github.com/erradvisor/erradvisor/internal/models"
)

// replayConfig is what the flags of replay set.
type replayConfig struct {
	policyName string
	policy     erradvisor.Policy
	classifier *erradvisor.Classifier
	// models is the limits table: the embedded one, with --models over it.
	models *models.Table
	// contextWindow and maxOutput override the table for every model when
	// non-zero (--context-window, --max-output).
	contextWindow, maxOutput int
	// compare adds the agreement of each verdict with what the recorded
	// agent did, and a summary at the end (--compare).
	compare bool
	// json writes JSON lines instead of the human text (--json).
	json bool
}

// replayer feeds a recorded Pi session through an erradvisor.Session, as if
// it had been the request loop's advisor, and prints, for every request and
// every assistant turn on the session's main line, what the library would
// have decided and told the model, beside what the recorded agent did.
//
// What is replayed:
//
//   - The main line (see session.mainLine): file order for version 1 files,
//     the path from the last entry up through parentId for versions 2 and 3.
//   - A user message calls Session.UserMessage (printing the events of a
//     retry streak the Session had started and that the message ends) and
//     joins the transcript.
//   - An assistant message is one request and its outcome. Just before it,
//     the replay prints the request: its provider and model (the assistant
//     message's), its start time (message.timestamp) and the notes
//     Session.Notes returns for the transcript so far. Then it prints the
//     outcome (stop reason, content, usage and the model's limits), the
//     classification of errorMessage (with providerError or diagnostics
//     status and code when the file has them), and the verdict: the
//     Decision of Session.Decide at the entry's timestamp, with its events.
//     The verdict is what the library would have done; it is not what
//     happened. Beside it, "recorded" says what the recorded agent did next
//     (see recordAll and agreement). Checkpoint snapshots (checkpoint:true)
//     are not requests and are skipped; stop reasons the Session does not
//     know ("deferred") are printed without a verdict.
//   - The outcome carries the model's context window and output limit
//     (TokenUsage.ContextWindow and MaxOutput): --context-window and
//     --max-output when given, else the limits table (internal/models, with
//     --models over it), so an early length stop is told from a genuine one
//     as a live loop would. A model without known limits is reported once.
//   - The transcript follows the file, not the verdict: a failed attempt
//     that the recorded agent retried leaves the transcript when the retry
//     is made (Pi removes it from the context it sends), whatever the
//     verdict was; so does a failed attempt the Session decided to compact
//     when the file shows the compaction. A failure followed by a user
//     message stays, and the next request's notes report it.
//   - A compaction entry after a Compact verdict is the overflow recovery:
//     it is reported to the Session (CompactionStarted, then
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
// the same on every run. Every provider text printed passes through redact.
// The work per entry is constant (amortized) but for the notes' scan, which
// stops at the latest success: a replay is linear in the file's length.
type replayer struct {
	cfg     replayConfig
	out     *bufio.Writer
	s       *erradvisor.Session
	version int

	t        transcript
	provider string // the current model
	model    string
	after    erradvisor.Preceding
	now      time.Time // the latest time seen in the file

	recs []recorded // what the recorded agent did after each path entry

	pendingCompact bool // the last verdict was Compact; the next compaction is its recovery
	superseded     int  // position of a failed attempt dropped at the next request; -1 when none
	requests       int
	decisions      int
	tally          tally

	limits  map[string]limitsInfo // per provider/model
	noLimit []string              // models without limits, in order of appearance
}

// limitsInfo is the limits used for one model and where they came from.
type limitsInfo struct {
	models.Limits
	source string // "flags", "table", "flags+table" or "" (none)
}

// replayCmd runs `erradvisor replay [flags] FILE.jsonl|-`.
func replayCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var cfg replayConfig
	var rules stringList
	var modelsFile string
	fs := newFlagSet("replay")
	fs.StringVar(&cfg.policyName, "policy", "conservative", "")
	fs.Var(&rules, "rules", "")
	fs.StringVar(&modelsFile, "models", "", "")
	fs.IntVar(&cfg.contextWindow, "context-window", 0, "")
	fs.IntVar(&cfg.maxOutput, "max-output", 0, "")
	fs.BoolVar(&cfg.compare, "compare", false, "")
	fs.BoolVar(&cfg.json, "json", false, "")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if cfg.policy, err = policyByName(cfg.policyName); err != nil {
		return err
	}
	cfg.policyName = strings.ToLower(cfg.policyName)
	if len(files) != 1 {
		return usageErr("replay: give one session file (FILE.jsonl, or - for standard input)")
	}
	if cfg.contextWindow < 0 || cfg.maxOutput < 0 {
		return usageErr("replay: --context-window and --max-output take a positive number of tokens")
	}
	if cfg.contextWindow > 0 && cfg.maxOutput > cfg.contextWindow {
		return usageErr("replay: --max-output %d is above --context-window %d", cfg.maxOutput, cfg.contextWindow)
	}
	if cfg.classifier, err = loadClassifier(rules); err != nil {
		return err
	}
	if cfg.models, err = loadModels(modelsFile); err != nil {
		return err
	}
	s, err := loadSession(files[0], stdin)
	if err != nil {
		return err
	}
	for _, w := range s.warnings {
		fmt.Fprintf(stderr, "erradvisor: warning: %s\n", w)
	}
	if s.moreWarnings > 0 {
		fmt.Fprintf(stderr, "erradvisor: warning: %d more warning(s) not shown\n", s.moreWarnings)
	}
	name := filepath.Base(files[0])
	if files[0] == "-" {
		name = "<stdin>"
	}
	err = replaySession(s, name, cfg, stdout)
	if s.skipped > 0 {
		fmt.Fprintf(stderr, "erradvisor: %d corrupt line(s) of %d skipped\n", s.skipped, s.lines)
	}
	return err
}

// loadModels returns the limits table: the embedded defaults, with the
// file over them when one is named.
func loadModels(file string) (*models.Table, error) {
	def := models.Default()
	if file == "" {
		return def, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--models: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, models.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("--models: %w", err)
	}
	over, err := models.Parse(file, data)
	if err != nil {
		return nil, err
	}
	return models.Overlay(over, def), nil
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
func replaySession(s *session, name string, cfg replayConfig, stdout io.Writer) error {
	if cfg.classifier == nil {
		cfg.classifier = new(erradvisor.Classifier) // the embedded defaults
	}
	if cfg.models == nil {
		cfg.models = models.Default()
	}
	rp := &replayer{
		cfg:        cfg,
		out:        bufio.NewWriter(stdout),
		s:          erradvisor.NewSession(cfg.policy, erradvisor.WithClassifier(cfg.classifier)),
		version:    s.version,
		provider:   s.provider,
		model:      s.model,
		now:        s.created,
		superseded: -1,
		limits:     map[string]limitsInfo{},
	}
	path, how := s.mainLine()
	rp.recs = recordAll(path)
	if cfg.json {
		rp.emit(jsonSession{Type: "session", ID: redact(s.id), Version: s.version, File: name,
			Cwd: redact(s.cwd), Policy: cfg.policyName, Entries: len(s.entries), MainLine: how})
	} else {
		fmt.Fprintf(rp.out, "session %s  version %d  %s\n", redact(s.id), s.version, name)
		if s.cwd != "" {
			fmt.Fprintf(rp.out, "cwd %s\n", redact(s.cwd))
		}
		fmt.Fprintf(rp.out, "policy %s; %d entries; %s\n", cfg.policyName, len(s.entries), how)
		fmt.Fprintf(rp.out, "verdict: what erradvisor decides under this policy (not what happened); recorded: what the agent in the file did next\n")
	}
	for i, e := range path {
		rp.entry(e, rp.recs[i])
	}
	rp.request(true, rp.now, rp.provider, rp.model)
	rp.summary(s)
	if err := rp.out.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// printf writes human output; nothing in JSON mode.
func (rp *replayer) printf(format string, args ...any) {
	if !rp.cfg.json {
		fmt.Fprintf(rp.out, format, args...)
	}
}

// emit writes one JSON line.
func (rp *replayer) emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"type": "error", "error": err.Error()})
	}
	rp.out.Write(b)
	rp.out.WriteByte('\n')
}

// entry replays one main-line entry; rec is what the recorded agent did
// after it (for assistant entries).
func (rp *replayer) entry(e *sessionEntry, rec recorded) {
	if !e.time.IsZero() {
		rp.now = e.time
	}
	switch e.typ {
	case "model_change":
		rp.provider, rp.model = e.provider, e.model
		rp.printf("\nline %d  model_change  %s\n", e.line, redact(providerModel(e.provider, e.model)))
	case "compaction":
		rp.compaction(e)
	case "branch_summary":
		rp.printf("\nline %d  branch_summary  %q\n", e.line, redact(excerpt(e.text, 60)))
		rp.t.add(e.id, e.index, erradvisor.Entry{Kind: erradvisor.EntryBranchSummary, Time: e.time})
	case "custom_message":
		rp.t.add(e.id, e.index, erradvisor.Entry{Kind: erradvisor.EntryOther, Time: e.time})
	case "message":
		rp.message(e, rec)
	}
}

// message replays a message entry.
func (rp *replayer) message(e *sessionEntry, rec recorded) {
	switch e.role {
	case "user":
		d := rp.s.UserMessage(rp.now)
		rp.pendingCompact = false
		rp.superseded = -1 // no retry followed: the failure stays in the context
		rp.after = erradvisor.AfterUser
		rp.printf("\nline %d  user  %q\n", e.line, redact(excerpt(e.text, 60)))
		evs := rp.events(d.Events())
		if rp.cfg.json && len(evs) > 0 {
			rp.emit(jsonUser{Type: "user", Line: e.line, Events: evs})
		}
		rp.t.add(e.id, e.index, erradvisor.Entry{Kind: erradvisor.EntryUser, Time: e.time})
	case "toolResult":
		rp.after = erradvisor.AfterToolResult
		rp.printf("\nline %d  toolResult  %s\n", e.line, redact(dash(e.toolName)))
		rp.t.add(e.id, e.index, erradvisor.Entry{Kind: erradvisor.EntryToolResult, Time: e.time})
	case "assistant":
		if e.checkpoint {
			return // a snapshot of a response in progress, not a request
		}
		rp.assistant(e, rec)
	default:
		rp.t.add(e.id, e.index, erradvisor.Entry{Kind: erradvisor.EntryOther, Time: e.time})
	}
}

// events prints a verdict's events (human mode) and returns them as JSON.
func (rp *replayer) events(evs []events.Event) []json.RawMessage {
	out := []json.RawMessage{}
	for _, ev := range evs {
		j := eventJSON(ev)
		rp.printf("  event     %s\n", j)
		out = append(out, json.RawMessage(j))
	}
	return out
}

// limitsFor returns the limits of provider/model: the flags, else the
// table. first is true the first time a model without limits is seen, so
// that the replay says so once per model.
func (rp *replayer) limitsFor(provider, model string) (l limitsInfo, first bool) {
	key := provider + "/" + model
	if l, ok := rp.limits[key]; ok {
		return l, false
	}
	l.ContextWindow, l.MaxOutput = rp.cfg.contextWindow, rp.cfg.maxOutput
	fromFlags := l.ContextWindow > 0 || l.MaxOutput > 0
	fromTable := false
	if tab, found := rp.cfg.models.Lookup(provider, model); found {
		if l.ContextWindow == 0 && tab.ContextWindow > 0 {
			l.ContextWindow, fromTable = tab.ContextWindow, true
		}
		if l.MaxOutput == 0 && tab.MaxOutput > 0 {
			l.MaxOutput, fromTable = tab.MaxOutput, true
		}
	}
	switch {
	case fromFlags && fromTable:
		l.source = "flags+table"
	case fromFlags:
		l.source = "flags"
	case fromTable:
		l.source = "table"
	}
	if len(rp.limits) >= maxModels {
		return l, false // a file cannot make the replay remember models without end
	}
	rp.limits[key] = l
	if l.source == "" {
		rp.noLimit = append(rp.noLimit, providerModel(provider, model))
		return l, true
	}
	return l, false
}

// maxModels bounds the number of models a replay remembers limits for.
const maxModels = 10000

// assistant replays one request and its outcome.
func (rp *replayer) assistant(e *sessionEntry, rec recorded) {
	at := e.requestTime
	if at.IsZero() {
		at = rp.now
	}
	if e.provider != "" || e.model != "" {
		rp.provider, rp.model = e.provider, e.model
	}
	rp.request(false, at, e.provider, e.model)

	lim, firstUnknown := rp.limitsFor(e.provider, e.model)
	out := jsonDecision{Type: "decision", Line: e.line, Provider: redact(e.provider), Model: redact(e.model),
		Stop: e.stopReason, Events: []json.RawMessage{}}
	rp.printf("\nline %d  assistant  %s  %s\n", e.line, redact(providerModel(e.provider, e.model)), redact(dash(e.stopReason)))
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
	out.Content = strings.Join(content, "+")
	out.Usage = jsonUsage{Input: e.usageIn, Output: e.usageOut, CacheRead: e.usageCache, CacheWrite: e.usageWrite}
	usage := fmt.Sprintf("usage in=%d out=%d cacheRead=%d", e.usageIn, e.usageOut, e.usageCache)
	if e.usageWrite != 0 {
		usage += fmt.Sprintf(" cacheWrite=%d", e.usageWrite)
	}
	limits := ""
	if lim.source != "" {
		limits = fmt.Sprintf("  limits window=%s max_output=%s (%s)", tokens(lim.ContextWindow), tokens(lim.MaxOutput), lim.source)
		if lim.ContextWindow > 0 {
			limits += fmt.Sprintf("  used=%d", e.usageIn+e.usageWrite+e.usageCache+e.usageOut)
		}
		out.Limits = &jsonLimits{ContextWindow: lim.ContextWindow, MaxOutput: lim.MaxOutput, Source: lim.source}
	}
	rp.printf("  outcome   stop=%s  content=%s  %s%s\n", redact(dash(e.stopReason)), out.Content, usage, limits)
	if firstUnknown {
		rp.printf("  limits    none known for %s: a length stop cannot be told early (--context-window, --max-output, --models)\n",
			redact(providerModel(e.provider, e.model)))
	}
	if e.errorMessage != "" {
		out.Error = redact(excerpt(errorSummary(e.errorMessage), 300))
		rp.printf("  error     %q\n", redact(excerpt(errorSummary(e.errorMessage), 100)))
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
		Usage: erradvisor.TokenUsage{Input: e.usageIn + e.usageWrite, Output: e.usageOut, CacheRead: e.usageCache,
			ContextWindow: lim.ContextWindow, MaxOutput: lim.MaxOutput},
		Content: produced,
		After:   rp.after,
	}
	if stop == erradvisor.StopError || e.errorMessage != "" {
		// Classified once: the verdict and the notes use this classification.
		o.Classification = rp.cfg.classifier.Classify(o.Failure)
		r := toResult(o.Classification)
		out.Class = &r
		rp.printf("  class     %s\n", humanLine(o.Classification))
	}

	entry := erradvisor.Entry{
		Kind: erradvisor.EntryAssistant, StopReason: stop, ErrorMessage: e.errorMessage,
		Provider: e.provider, Model: e.model, Time: e.time, Content: produced,
	}
	if stop == erradvisor.StopError {
		entry.Classification = o.Classification
	}
	out.Recorded = jsonRecorded{Kind: rec.kind.String(), Line: rec.line, SwitchTo: redact(rec.switchTo)}
	if rec.hasAfter {
		ms := rec.after.Milliseconds()
		out.Recorded.AfterMS = &ms
	}
	if !known {
		rp.printf("  verdict   - (stop reason %q is not one the Session decides on)\n", redact(e.stopReason))
		rp.printf("  recorded  %s\n", redact(rec.text()))
		rp.tally.add("-", rec.kind, false, false)
		entry.StopReason = erradvisor.StopEndTurn
		rp.t.add(e.id, e.index, entry)
		rp.after = erradvisor.AfterOther
		if rp.cfg.json {
			rp.emit(out)
		}
		return
	}
	d := rp.s.Decide(o, rp.now)
	rp.decisions++
	rp.printf("  verdict   %s\n", redact(decisionLine(d)))
	out.Verdict = &explainedDecision{
		Action: d.Action.String(), Cause: d.Cause.String(), DelayMS: d.Delay.Milliseconds(),
		Attempt: d.Attempt, Max: d.Max, Explain: redact(d.Explain()), Text: redact(d.Text),
	}
	out.Events = rp.events(d.Events())
	agrees, compared := agreement(d.Action, rec.kind)
	rp.tally.add(d.Action.String(), rec.kind, agrees, compared)
	mark := ""
	if compared {
		out.Agrees = &agrees
		if rp.cfg.compare {
			mark = "  [agrees]"
			if !agrees {
				mark = "  [DISAGREES with the verdict]"
			}
		}
	} else if rp.cfg.compare {
		mark = "  [not compared]"
	}
	rp.printf("  recorded  %s%s\n", redact(rec.text()), mark)
	if rp.cfg.json {
		rp.emit(out)
	}

	pos := rp.t.add(e.id, e.index, entry)
	rp.pendingCompact = d.Action == erradvisor.Compact
	rp.superseded = -1
	switch {
	case stop == erradvisor.StopError && rec.kind == recRetried:
		rp.superseded = pos // the retry leaves this attempt out of its context
	case stop == erradvisor.StopError && rec.kind == recCompacted && d.Action == erradvisor.Compact:
		rp.superseded = pos // so does the fresh attempt after the recovery
	}
	switch {
	case rec.kind == recRetried:
		// The retry is made in the same place as the failed attempt.
	case rec.kind == recContinued:
		rp.after = erradvisor.AfterContinuation
	default:
		rp.after = erradvisor.AfterOther
	}
}

// tokens renders a token count, "?" when unknown.
func tokens(n int) string {
	if n <= 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// compaction replays a compaction entry.
func (rp *replayer) compaction(e *sessionEntry) {
	recovery := rp.pendingCompact
	rp.pendingCompact = false
	kind := "manual or threshold (not an overflow recovery in this replay)"
	if recovery {
		kind = "overflow recovery"
	}
	rp.printf("\nline %d  compaction  tokensBefore=%d  %s\n", e.line, e.tokensBefore, kind)
	if recovery {
		start := rp.s.CompactionStarted(erradvisor.CompactionOverflow, rp.now)
		end := rp.s.CompactionEnded(&erradvisor.CompactionResult{
			Summary: e.text, FirstKeptEntryID: e.firstKeptID, TokensBefore: e.tokensBefore,
		}, nil, rp.now)
		evs := rp.events([]events.Event{start, end})
		if rp.cfg.json {
			rp.emit(jsonCompaction{Type: "compaction", Line: e.line, Recovery: true, TokensBefore: e.tokensBefore, Events: evs})
		}
	} else if rp.cfg.json {
		rp.emit(jsonCompaction{Type: "compaction", Line: e.line, TokensBefore: e.tokensBefore, Events: []json.RawMessage{}})
	}
	// The summary replaces everything before the first kept entry.
	keep := -1
	switch {
	case rp.version == 1 && e.firstKeptIndex >= 0:
		keep = rp.t.find(false, "", e.firstKeptIndex)
	case rp.version > 1 && e.hasFirstKeptID && e.firstKeptID != "":
		keep = rp.t.find(true, e.firstKeptID, 0)
	}
	rp.t.compact(erradvisor.Entry{Kind: erradvisor.EntryCompactionSummary, Time: e.time}, keep)
}

// request prints one request point: the notes the Session appends for it.
// final marks the request after the last entry, which the file does not
// show.
func (rp *replayer) request(final bool, at time.Time, provider, model string) {
	if !final && rp.superseded >= 0 {
		// The retry is being made: the failed attempt is out of its context.
		rp.t.drop(rp.superseded)
		rp.superseded = -1
	}
	notes := rp.s.Notes(at, erradvisor.Target{Provider: provider, Model: model}, rp.t.newestFirst())
	label := "next request (after the last entry)"
	if !final {
		rp.requests++
		label = fmt.Sprintf("request %d", rp.requests)
	}
	if rp.cfg.json {
		r := jsonRequest{Type: "request", Final: final, Provider: redact(provider), Model: redact(model),
			At: formatTimeOrDash(at), Notes: []explainedNote{}}
		if !final {
			r.N = rp.requests
		}
		for _, n := range notes {
			r.Notes = append(r.Notes, explainedNote{Kind: n.Kind.String(), Text: redact(n.Text)})
		}
		rp.emit(r)
		return
	}
	fmt.Fprintf(rp.out, "  → %s  %s  at %s  notes: %d\n", label, redact(providerModel(provider, model)), formatTimeOrDash(at), len(notes))
	for _, n := range notes {
		fmt.Fprintf(rp.out, "      %s\n", redact(n.Text))
	}
}

// summary prints the end of the replay: the models without limits and,
// with --compare (always in JSON), the agreement counts.
func (rp *replayer) summary(s *session) {
	pairs, agree, disagree := rp.tally.pairs()
	if rp.cfg.json {
		if pairs == nil {
			pairs = []pairCount{}
		}
		noLimits := []string{}
		for _, m := range rp.noLimit {
			noLimits = append(noLimits, redact(m))
		}
		rp.emit(jsonSummary{Type: "summary", Policy: rp.cfg.policyName, Requests: rp.requests, Decisions: rp.decisions,
			Agree: agree, Disagree: disagree, NotCompared: rp.tally.notCompared, Pairs: pairs,
			NoLimits: noLimits, SkippedLines: s.skipped})
		return
	}
	if !rp.cfg.compare {
		return
	}
	fmt.Fprintf(rp.out, "\ncompare (%s): %d agree, %d disagree, %d not compared\n", rp.cfg.policyName, agree, disagree, rp.tally.notCompared)
	for _, p := range pairs {
		word := "agree   "
		if !p.Agrees {
			word = "disagree"
		}
		fmt.Fprintf(rp.out, "  %s  %-9s vs %-15s %d\n", word, p.Verdict, p.Recorded, p.Count)
	}
	if s.skipped > 0 {
		fmt.Fprintf(rp.out, "corrupt lines skipped: %d\n", s.skipped)
	}
}

// The JSON lines of replay --json, one object per line, told apart by
// "type".
type (
	jsonSession struct {
		Type     string `json:"type"` // "session"
		ID       string `json:"id"`
		Version  int    `json:"version"`
		File     string `json:"file"`
		Cwd      string `json:"cwd,omitempty"`
		Policy   string `json:"policy"`
		Entries  int    `json:"entries"`
		MainLine string `json:"main_line"`
	}
	jsonRequest struct {
		Type     string          `json:"type"`        // "request"
		N        int             `json:"n,omitempty"` // 1, 2, ...; absent for the final one
		Final    bool            `json:"final,omitempty"`
		Provider string          `json:"provider"`
		Model    string          `json:"model"`
		At       string          `json:"at"`
		Notes    []explainedNote `json:"notes"`
	}
	jsonUsage struct {
		Input      int `json:"input"`
		Output     int `json:"output"`
		CacheRead  int `json:"cache_read"`
		CacheWrite int `json:"cache_write"`
	}
	jsonLimits struct {
		ContextWindow int    `json:"context_window"`
		MaxOutput     int    `json:"max_output"`
		Source        string `json:"source"`
	}
	jsonRecorded struct {
		Kind     string `json:"kind"`
		Line     int    `json:"line,omitempty"`
		AfterMS  *int64 `json:"after_ms,omitempty"`
		SwitchTo string `json:"model_switch,omitempty"`
	}
	jsonDecision struct {
		Type     string             `json:"type"` // "decision"
		Line     int                `json:"line"`
		Provider string             `json:"provider"`
		Model    string             `json:"model"`
		Stop     string             `json:"stop"`
		Content  string             `json:"content"`
		Usage    jsonUsage          `json:"usage"`
		Limits   *jsonLimits        `json:"limits,omitempty"`
		Error    string             `json:"error,omitempty"`
		Class    *result            `json:"class,omitempty"`
		Verdict  *explainedDecision `json:"verdict"`
		Events   []json.RawMessage  `json:"events"`
		Recorded jsonRecorded       `json:"recorded"`
		Agrees   *bool              `json:"agrees"`
	}
	jsonUser struct {
		Type   string            `json:"type"` // "user"
		Line   int               `json:"line"`
		Events []json.RawMessage `json:"events"`
	}
	jsonCompaction struct {
		Type         string            `json:"type"` // "compaction"
		Line         int               `json:"line"`
		Recovery     bool              `json:"recovery"`
		TokensBefore int               `json:"tokens_before"`
		Events       []json.RawMessage `json:"events"`
	}
	jsonSummary struct {
		Type         string      `json:"type"` // "summary"
		Policy       string      `json:"policy"`
		Requests     int         `json:"requests"`
		Decisions    int         `json:"decisions"`
		Agree        int         `json:"agree"`
		Disagree     int         `json:"disagree"`
		NotCompared  int         `json:"not_compared"`
		Pairs        []pairCount `json:"pairs"`
		NoLimits     []string    `json:"no_limits"`
		SkippedLines int         `json:"skipped_lines"`
	}
)

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

// eventJSON marshals an event as one JSON line, redacted.
func eventJSON(ev events.Event) string {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Sprintf(`{"type":%q,"error":%q}`, ev.EventType(), err.Error())
	}
	return redact(string(b))
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

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/erradvisor/erradvisor"
)

const usage = `usage:
  erradvisor classify [flags] [TEXT...]   classify TEXT, or standard input as one message
  erradvisor classify --jsonl [flags]     classify JSON lines from standard input
  erradvisor explain [flags] [TEXT...]    classify TEXT, then show the decision and the note
  erradvisor replay [flags] FILE.jsonl    replay a Pi session file ("-": standard input):
                                          the library's verdicts, notes, what the agent did
  erradvisor rules list [--rules FILE]... list the rules of the layered set
  erradvisor rules check FILE.yaml...     validate rule files
  erradvisor help                         show this help

classify flags (before or after TEXT; "--" ends the flags):
  --provider ID   provider id (anthropic, openai, bedrock, ...)
  --status N      HTTP status (0 = none)
  --code CODE     provider error type or code
  --rules FILE    rule file over the defaults (repeatable, first = highest priority)
  --json          print one JSON object
  --jsonl         read {"provider","status","code","message"} lines from standard
                  input, write {"class","reason","rule","retry_after_ms","reset_at"} lines

With no TEXT and nothing on standard input, classify shows built-in examples.

explain flags: the classify flags except --jsonl, and
  --model M       model id of the failed request
  --policy P      conservative (default) or persistent

replay flags:
  --policy P            conservative (default) or persistent
  --rules FILE          rule file over the defaults (repeatable)
  --compare             mark each verdict as agreeing or not with what the recorded
                        agent did next, and count them at the end
  --json                JSON lines: session, request, decision, user, compaction, summary
  --context-window N    context window of every model, in tokens (else the models table)
  --max-output N        output limit of every model, in tokens (else the models table)
  --models FILE         a models table (YAML) over the embedded one
`

// Limits on what is read from standard input.
const (
	maxMessage = 16 << 20 // one message for classify
	maxLine    = 8 << 20  // one JSON line for --jsonl (a 1 MiB body escapes to a few MiB at most)
)

// now is the observation time of a failure; tests replace it.
var now = time.Now

// errUsage marks a misused command line: exit status 2. With full set, the
// whole usage follows the message; otherwise a hint to 'erradvisor help'.
type errUsage struct {
	msg  string
	full bool
}

func (e *errUsage) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &errUsage{msg: fmt.Sprintf(format, args...)}
}

// run is the command: it returns the exit status.
func run(args []string, stdin io.Reader, stdinIsTerminal bool, stdout, stderr io.Writer) int {
	err := dispatch(args, stdin, stdinIsTerminal, stdout, stderr)
	var ue *errUsage
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		// Asked for: help goes to standard output.
		if _, err := fmt.Fprint(stdout, usage); err != nil {
			fmt.Fprintf(stderr, "erradvisor: writing output: %v\n", err)
			return 1
		}
		return 0
	case errors.As(err, &ue):
		if ue.full {
			fmt.Fprintf(stderr, "erradvisor: %s\n\n%s", ue.msg, usage)
		} else {
			fmt.Fprintf(stderr, "erradvisor: %s\nRun 'erradvisor help' for usage.\n", ue.msg)
		}
		return 2
	case errors.Is(err, errReported):
		return 1
	default:
		fmt.Fprintf(stderr, "erradvisor: %v\n", err)
		return 1
	}
}

// errReported means the details are already on stderr.
var errReported = errors.New("reported")

func dispatch(args []string, stdin io.Reader, stdinIsTerminal bool, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return classifyCmd(nil, stdin, stdinIsTerminal, stdout, stderr)
	}
	switch args[0] {
	case "classify":
		return classifyCmd(args[1:], stdin, stdinIsTerminal, stdout, stderr)
	case "explain":
		return explainCmd(args[1:], stdin, stdinIsTerminal, stdout, stderr)
	case "replay":
		return replayCmd(args[1:], stdin, stdout, stderr)
	case "rules":
		if len(args) < 2 {
			return &errUsage{msg: "rules: want 'list' or 'check'", full: true}
		}
		switch args[1] {
		case "list":
			return rulesListCmd(args[2:], stdout, stderr)
		case "check":
			return rulesCheckCmd(args[2:], stdout, stderr)
		case "help", "-h", "-help", "--help":
			return flag.ErrHelp
		}
		return usageErr("rules: unknown subcommand %q (want 'list' or 'check')", args[1])
	case "help", "-h", "-help", "--help":
		return flag.ErrHelp
	}
	return &errUsage{msg: fmt.Sprintf("unknown command %q", args[0]), full: true}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	if v == "" {
		return errors.New("empty file name")
	}
	*s = append(*s, v)
	return nil
}

// parseArgs parses fs with flags and positional arguments interleaved
// ("classify TEXT --json" works); "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErr("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are reported by run
	return fs
}

// loadClassifier layers the rule files over the defaults. A missing file is
// an error: the user named it.
func loadClassifier(files []string) (*erradvisor.Classifier, error) {
	if len(files) == 0 {
		return new(erradvisor.Classifier), nil // the zero Classifier uses the defaults, built once per process
	}
	layers, err := loadLayers(files)
	if err != nil {
		return nil, err
	}
	return erradvisor.NewClassifier(layers...)
}

func loadLayers(files []string) ([]*erradvisor.RuleSet, error) {
	layers := make([]*erradvisor.RuleSet, 0, len(files)+1)
	for _, f := range files {
		s, err := erradvisor.LoadRuleFile(f)
		if err != nil {
			return nil, err
		}
		layers = append(layers, s)
	}
	d, err := erradvisor.DefaultRules()
	if err != nil {
		return nil, fmt.Errorf("default rules: %w", err)
	}
	return append(layers, d), nil
}

// classifyOpts are the flags of classify.
type classifyOpts struct {
	provider, code string
	status         int
	rules          stringList
	json, jsonl    bool
}

// bind registers the flags classify and explain share: the failure's
// provider, status and code, extra rule files, and JSON output.
func (o *classifyOpts) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.provider, "provider", "", "")
	fs.IntVar(&o.status, "status", 0, "")
	fs.StringVar(&o.code, "code", "", "")
	fs.Var(&o.rules, "rules", "")
	fs.BoolVar(&o.json, "json", false, "")
}

func classifyCmd(args []string, stdin io.Reader, stdinIsTerminal bool, stdout, stderr io.Writer) error {
	var o classifyOpts
	fs := newFlagSet("classify")
	o.bind(fs)
	fs.BoolVar(&o.jsonl, "jsonl", false, "")
	text, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := checkStatus(o.status); err != nil {
		return usageErr("--status %d: %v", o.status, err)
	}
	if o.jsonl && len(text) > 0 {
		return usageErr("--jsonl reads standard input; it takes no TEXT")
	}
	c, err := loadClassifier(o.rules)
	if err != nil {
		return err
	}
	if o.jsonl {
		return classifyJSONL(c, o, stdin, stdout, stderr)
	}

	var msg string
	if len(text) > 0 {
		msg = strings.Join(text, " ")
	} else if !stdinIsTerminal {
		b, err := io.ReadAll(io.LimitReader(stdin, maxMessage+1))
		if err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
		if len(b) > maxMessage {
			return fmt.Errorf("standard input is larger than %d MiB", maxMessage>>20)
		}
		msg = strings.TrimSpace(string(b))
	}
	if msg == "" && o.provider == "" && o.status == 0 && o.code == "" {
		if o.json {
			return usageErr("--json needs a failure: give TEXT, pipe a message on standard input, or set --status or --code")
		}
		return printExamples(c, stdout)
	}
	f := erradvisor.Failure{Provider: o.provider, Status: o.status, Code: o.code, Message: msg, At: now()}
	cl := c.Classify(f)
	if o.json {
		return writeJSON(stdout, cl)
	}
	_, err = fmt.Fprintln(stdout, humanLine(cl))
	return err
}

func checkStatus(s int) error {
	if s != 0 && (s < 100 || s > 599) {
		return errors.New("want 0 (none) or an HTTP status from 100 to 599")
	}
	return nil
}

// humanLine renders a classification as one short line.
func humanLine(cl erradvisor.Classification) string {
	parts := []string{cl.Class.String()}
	if cl.Reason != "" {
		parts = append(parts, string(cl.Reason))
	}
	if cl.Rule != "" {
		parts = append(parts, "rule="+cl.Rule)
	}
	if cl.RetryAfter > 0 {
		parts = append(parts, "retry_after="+cl.RetryAfter.String())
	}
	if !cl.ResetAt.IsZero() {
		parts = append(parts, "reset_at="+formatTime(cl.ResetAt))
	}
	return strings.Join(parts, "  ")
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// result is the JSON form of a Classification.
type result struct {
	Class        string `json:"class"`
	Reason       string `json:"reason"`
	Rule         string `json:"rule"`
	RetryAfterMS int64  `json:"retry_after_ms"`
	ResetAt      string `json:"reset_at,omitempty"`
}

func toResult(cl erradvisor.Classification) result {
	r := result{Class: cl.Class.String(), Reason: string(cl.Reason), Rule: cl.Rule}
	if cl.RetryAfter > 0 {
		r.RetryAfterMS = int64((cl.RetryAfter + time.Millisecond - 1) / time.Millisecond)
	}
	if !cl.ResetAt.IsZero() {
		r.ResetAt = formatTime(cl.ResetAt)
	}
	return r
}

func writeJSON(w io.Writer, cl erradvisor.Classification) error {
	b, err := json.Marshal(toResult(cl))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// jsonlInput is one line of --jsonl input.
type jsonlInput struct {
	Provider *string `json:"provider"`
	Model    string  `json:"model"`
	Status   *int    `json:"status"`
	Code     *string `json:"code"`
	Message  string  `json:"message"`
}

func classifyJSONL(c *erradvisor.Classifier, o classifyOpts, stdin io.Reader, stdout, stderr io.Writer) error {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	tooLong := false
	sc.Split(skipLongLines(maxLine, &tooLong))
	w := bufio.NewWriter(stdout)
	line, bad := 0, 0
	report := func(format string, args ...any) {
		bad++
		fmt.Fprintf(stderr, "erradvisor: line %d: %s\n", line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		if tooLong {
			tooLong = false
			report("longer than %d MiB; skipped", maxLine>>20)
			continue
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if b[0] != '{' {
			report("not a JSON object: %s", redact(excerpt(string(b), 40)))
			continue
		}
		var in jsonlInput
		if err := json.Unmarshal(b, &in); err != nil {
			report("%s", jsonError(err))
			continue
		}
		f := erradvisor.Failure{Provider: o.provider, Model: in.Model, Status: o.status, Code: o.code,
			Message: in.Message, At: now()}
		if in.Provider != nil {
			f.Provider = *in.Provider
		}
		if in.Code != nil {
			f.Code = *in.Code
		}
		if in.Status != nil {
			if err := checkStatus(*in.Status); err != nil {
				report("status %d: %v", *in.Status, err)
				continue
			}
			f.Status = *in.Status
		}
		if err := writeJSON(w, c.Classify(f)); err != nil {
			return err
		}
		if err := w.Flush(); err != nil { // one line at a time, for pipes that stay open
			return fmt.Errorf("writing output: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading standard input after line %d: %w", line, err)
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "erradvisor: %d bad line(s) of %d\n", bad, line)
		return errReported
	}
	return nil
}

// jsonError describes a json.Unmarshal error of a --jsonl line without Go
// type names.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := "a string"
		if te.Field == "status" {
			want = "an integer"
		}
		return fmt.Sprintf("field %q: want %s, got a JSON %s", te.Field, want, te.Value)
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// skipLongLines is bufio.ScanLines, except that a line longer than max is
// discarded instead of stopping the scan: it yields an empty token with
// *tooLong set in its place.
func skipLongLines(max int, tooLong *bool) bufio.SplitFunc {
	skipping := false
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if skipping {
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				skipping, *tooLong = false, true
				return i + 1, []byte{}, nil
			}
			if atEOF {
				skipping, *tooLong = false, true
				return len(data), []byte{}, nil
			}
			return len(data), nil, nil
		}
		adv, tok, err := bufio.ScanLines(data, atEOF)
		if tok == nil && err == nil && len(data) >= max {
			skipping = true
			return len(data), nil, nil
		}
		return adv, tok, err
	}
}

// excerpt returns s on one line, cut to about n runes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// example is a built-in real failure.
type example struct {
	provider string
	status   int
	code     string
	message  string
}

// examples are real error texts from provider APIs, SDKs and gateways.
var examples = []example{
	{"anthropic", 529, "overloaded_error",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	{"openai", 429, "insufficient_quota",
		`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
	{"anthropic", 400, "invalid_request_error",
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"}}`},
	{"openai", 429, "",
		`Rate limit reached for gpt-4o in organization org-xxxx on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 20s.`},
	{"bedrock", 429, "ThrottlingException", `Too many tokens, please wait before trying again.`},
	{"openai-codex", 429, "usage_limit_reached",
		`{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_in_seconds":13872}}`},
	{"anthropic", 401, "authentication_error",
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`},
	{"openrouter", 400, "", `400 status code (no body)`},
}

// printExamples classifies the built-in examples and prints a table.
func printExamples(c *erradvisor.Classifier, stdout io.Writer) error {
	var b bytes.Buffer
	b.WriteString("No input, so here are some real provider errors and their verdicts:\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INPUT\tCLASS\tREASON\tRULE\tWAIT")
	at := now()
	for _, ex := range examples {
		cl := c.Classify(erradvisor.Failure{Provider: ex.provider, Status: ex.status, Code: ex.code,
			Message: ex.message, At: at})
		in := ex.provider
		if ex.status != 0 {
			in += fmt.Sprintf(" %d", ex.status)
		}
		in += " " + redact(excerpt(summary(ex.message), 40))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", in, cl.Class, dash(string(cl.Reason)), dash(cl.Rule), wait(cl))
	}
	tw.Flush()
	b.WriteString("\nTry: erradvisor classify --provider openai --status 429 'You exceeded your current quota'\n" +
		"     erradvisor help\n")
	_, err := stdout.Write(b.Bytes())
	return err
}

// summary picks the human part of a JSON error body: its "message".
func summary(msg string) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(msg), &body) == nil && body.Error.Message != "" {
		return body.Error.Message
	}
	return msg
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// wait renders the stated wait and reset time.
func wait(cl erradvisor.Classification) string {
	var parts []string
	if cl.RetryAfter > 0 {
		parts = append(parts, cl.RetryAfter.String())
	}
	if !cl.ResetAt.IsZero() {
		parts = append(parts, "until "+formatTime(cl.ResetAt))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func rulesListCmd(args []string, stdout, stderr io.Writer) error {
	var files stringList
	fs := newFlagSet("rules list")
	fs.Var(&files, "rules", "")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("rules list: unexpected argument %q (give rule files with --rules)", rest[0])
	}
	layers, err := loadLayers(files)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLASS\tREASON\tPROVIDERS\tSOURCE")
	seen := map[string]bool{}
	n := 0
	for _, l := range layers {
		for _, r := range l.Rules() {
			if seen[r.ID] {
				continue // hidden by a higher layer
			}
			seen[r.ID] = true
			if r.Disabled {
				continue
			}
			n++
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d\n", r.ID, r.Class, dash(string(r.Reason)),
				dash(strings.Join(r.Providers, ",")), r.File, r.Line)
		}
	}
	tw.Flush()
	_, err = stdout.Write(b.Bytes())
	return err
}

func rulesCheckCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rules check")
	fixtures := fs.String("fixtures", "", "")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("rules check: give one or more rule files")
	}
	defaults, err := erradvisor.DefaultRules()
	if err != nil {
		return fmt.Errorf("default rules: %w", err)
	}
	def := map[string]erradvisor.RuleInfo{}
	for _, r := range defaults.Rules() {
		def[r.ID] = r
	}
	texts := defaultTexts(defaults)
	dir := *fixtures
	if dir == "" {
		if st, err := os.Stat(filepath.Join("testdata", "fixtures")); err == nil && st.IsDir() {
			dir = filepath.Join("testdata", "fixtures")
		}
	}
	if dir != "" {
		fx, err := fixtureTexts(dir)
		if err != nil {
			return fmt.Errorf("fixtures: %w", err)
		}
		texts = append(texts, fx...)
	}
	failed := false
	for _, f := range files {
		s, err := erradvisor.LoadRuleFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "erradvisor: %v\n", err)
			failed = true
			continue
		}
		rules := s.Rules()
		noun := "rules"
		if len(rules) == 1 {
			noun = "rule"
		}
		fmt.Fprintf(stdout, "%s: ok: %d %s\n", f, len(rules), noun)
		for _, r := range rules {
			d, ok := def[r.ID]
			switch {
			case ok && r.Disabled:
				fmt.Fprintf(stdout, "%s:%d: note: rule %q disables the default rule (%s:%d)\n", f, r.Line, r.ID, d.File, d.Line)
			case ok:
				fmt.Fprintf(stdout, "%s:%d: note: rule %q replaces the default rule (%s:%d)\n", f, r.Line, r.ID, d.File, d.Line)
			case r.Disabled:
				fmt.Fprintf(stdout, "%s:%d: note: rule %q is disabled but no default rule has that id\n", f, r.Line, r.ID)
			}
		}
		layered, err := erradvisor.NewClassifier(s, defaults)
		if err != nil {
			fmt.Fprintf(stderr, "erradvisor: %v\n", err)
			failed = true
			continue
		}
		if n := reportChanges(stdout, f, layered, texts); n > 0 {
			fmt.Fprintf(stdout, "%s: changes the verdict on %d of %d default examples and fixtures\n", f, n, len(texts))
		}
	}
	if failed {
		return errReported
	}
	return nil
}

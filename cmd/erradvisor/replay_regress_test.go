package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/google/go-cmp/cmp"
)

// This file holds one regression test per problem the replay had, each
// named for it.

// genSession writes a version 3 session of n lines to path: cycles of a
// user message, a rate-limit error, its retry (tool use), the tool result
// and a final answer, chained by parentId, one second apart.
func genSession(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, header3)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const asst = `"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":10,"cacheRead":0}`
	bodies := []string{
		`{"role":"user","content":"do the next step"}`,
		`{"role":"assistant","content":[],` + asst + `,"stopReason":"error","errorMessage":"429 rate limit exceeded, please slow down"}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{}}],` + asst + `,"stopReason":"toolUse"}`,
		`{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"file contents"}]}`,
		`{"role":"assistant","content":[{"type":"text","text":"done"}],` + asst + `,"stopReason":"stop"}`,
	}
	parent := "null"
	for i := 1; i < n; i++ {
		ts := start.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(w, `{"type":"message","id":"e%d","parentId":%s,"timestamp":%q,"message":%s}`+"\n", i, parent, ts, bodies[(i-1)%len(bodies)])
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReplayLinearTime is the regression test for the quadratic replay
// (every request copied the whole transcript): replaying 4 times the lines
// must take well under 16 times as long. The bound, 8, leaves room for the
// noise of a shared machine; a quadratic replay gives about 16.
func TestReplayLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("times two replays of 20,000 and 80,000 lines")
	}
	small, large := 20000, 80000
	if raceEnabled {
		small, large = small/10, large/10 // the race detector is ~10x slower; the ratio is what counts
	}
	dir := t.TempDir()
	paths := map[int]string{}
	for _, n := range []int{small, large} {
		paths[n] = filepath.Join(dir, fmt.Sprintf("s%d.jsonl", n))
		genSession(t, paths[n], n)
	}
	timeIt := func(n int) time.Duration {
		var stderr bytes.Buffer
		begin := time.Now()
		if code := run([]string{"replay", paths[n]}, noRead{t}, true, io.Discard, &stderr); code != 0 {
			t.Fatalf("replay of %d lines: exit %d: %s", n, code, stderr.String())
		}
		return time.Since(begin)
	}
	timeIt(small) // warm up: the default classifier is built once
	// The best of three runs of each, taken in turn, so that a burst of
	// load from other processes (CI runs packages side by side) falls on
	// one run of each size rather than on every run of one.
	ts, tl := time.Duration(1<<63-1), time.Duration(1<<63-1)
	for range 3 {
		ts = min(ts, timeIt(small))
		tl = min(tl, timeIt(large))
	}
	ratio := float64(tl) / float64(max(ts, time.Millisecond))
	t.Logf("%d lines: %v; %d lines: %v; ratio %.2f", small, ts, large, tl, ratio)
	if ratio >= 8 {
		t.Errorf("replay of %d lines took %v, %.1f times the %v of %d lines: not linear", large, tl, ratio, ts, small)
	}
}

// TestTranscriptView checks the transcript behind the linear replay: a
// dropped last entry is truncated, a dropped inner one is skipped, a
// compaction keeps the summary and the entries from the first kept one, and
// the view is newest first.
func TestTranscriptView(t *testing.T) {
	var tr transcript
	kinds := func() []erradvisor.EntryKind {
		var out []erradvisor.EntryKind
		for e := range tr.newestFirst() {
			out = append(out, e.Kind)
		}
		return out
	}
	u := erradvisor.Entry{Kind: erradvisor.EntryUser}
	a := erradvisor.Entry{Kind: erradvisor.EntryAssistant}
	r := erradvisor.Entry{Kind: erradvisor.EntryToolResult}
	tr.add("u1", 1, u)
	failed := tr.add("a1", 2, a)
	tr.drop(failed) // the last entry: truncated
	if len(tr.entries) != 1 {
		t.Fatalf("dropped last entry kept: %d entries", len(tr.entries))
	}
	inner := tr.add("a2", 3, a)
	tr.add("t1", 4, r)
	tr.drop(inner) // not the last: marked
	if diff := cmp.Diff([]erradvisor.EntryKind{erradvisor.EntryToolResult, erradvisor.EntryUser}, kinds()); diff != "" {
		t.Errorf("after drop (-want +got):\n%s", diff)
	}
	tr.add("a3", 5, a)
	tr.compact(erradvisor.Entry{Kind: erradvisor.EntryCompactionSummary}, tr.find(true, "t1", 0))
	want := []erradvisor.EntryKind{erradvisor.EntryAssistant, erradvisor.EntryToolResult, erradvisor.EntryCompactionSummary}
	if diff := cmp.Diff(want, kinds()); diff != "" {
		t.Errorf("after compaction (-want +got):\n%s", diff)
	}
	if got := tr.find(true, "u1", 0); got != -1 {
		t.Errorf("find of a compacted entry = %d, want -1", got)
	}
	if tr.len() != 3 {
		t.Errorf("len = %d, want 3", tr.len())
	}
	// Many compactions reclaim the dead prefix.
	for i := 0; i < 5000; i++ {
		pos := tr.add(fmt.Sprint("x", i), 10+i, u)
		tr.compact(erradvisor.Entry{Kind: erradvisor.EntryCompactionSummary}, pos)
	}
	if len(tr.entries) > 2048 {
		t.Errorf("dead prefix not reclaimed: %d entries held", len(tr.entries))
	}
	if diff := cmp.Diff([]erradvisor.EntryKind{erradvisor.EntryUser, erradvisor.EntryCompactionSummary}, kinds()); diff != "" {
		t.Errorf("after many compactions (-want +got):\n%s", diff)
	}
}

// endless is a reader that never ends: b, forever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestReplayEndlessInputReturns is the regression test for the replay
// that spun forever on input with no newline: it must fail within
// seconds, before and after the header.
func TestReplayEndlessInputReturns(t *testing.T) {
	tests := []struct {
		name   string
		r      io.Reader
		errHas string
	}{
		{"zeros", endless(0), "no session header line in the first 1024 KiB"},
		{"an endless header", io.MultiReader(strings.NewReader(`{"type":"session","id":"`), endless('x')), "no session header line"},
		{"newlines only", endless('\n'), "no session header line"},
		{"an endless entry", io.MultiReader(strings.NewReader(header3+"\n"+`{"type":"message","x":"`), endless('x')), "input larger than 96 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := parseSessionMax("in", tt.r, 96<<20) // parseSession's bound is 1 GiB: the same code, slower
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("err = %v, want one with %q", err, tt.errHas)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("no answer within 60 s")
			}
		})
	}
}

// TestReplayStdin is the regression test for `replay -`: the session comes
// from standard input.
func TestReplayStdin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sessionsDir, "real", "timeout-retry-success.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "-"}, bytes.NewReader(data), false, &stdout, &stderr)
	if code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var fromFile bytes.Buffer
	if code := run([]string{"replay", filepath.Join(sessionsDir, "real", "timeout-retry-success.jsonl")}, noRead{t}, true, &fromFile, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := strings.Replace(fromFile.String(), "timeout-retry-success.jsonl", "<stdin>", 1)
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("replay - (-from the file +from stdin):\n%s", diff)
	}
	// Errors name standard input.
	stderr.Reset()
	if code := run([]string{"replay", "-"}, strings.NewReader("oops\n"), false, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "<stdin>:1: invalid JSON") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestReplayCorruptLineSkipped is the regression test for corrupt lines,
// which stopped the replay: now they are skipped with a warning, counted
// at the end, and the replay goes on. A bad first line is still an error.
func TestReplayCorruptLineSkipped(t *testing.T) {
	user := `{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`
	asst := `{"type":"message","id":"a","parentId":"u","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"anthropic","model":"m","stopReason":"stop"}}`
	data := header3 + "\n" + user + "\n" +
		"not json\n" + // not JSON
		"[1,2]\n" + // not an object
		`{"type":5}` + "\n" + // a field of the wrong type
		`{"type":"message","id":"x",` + "\n" + // a truncated entry
		asst + "\n"
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "-"}, strings.NewReader(data), false, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	wantErr := "erradvisor: warning: <stdin>:3: invalid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 2); line skipped\n" +
		"erradvisor: warning: <stdin>:4: invalid JSON: want an object, got [1,2]; line skipped\n" +
		"erradvisor: warning: <stdin>:5: field \"type\": unexpected JSON number; entry skipped\n" +
		"erradvisor: warning: <stdin>:6: invalid JSON: unexpected end of line (truncated entry?); line skipped\n" +
		"erradvisor: 4 corrupt line(s) of 7 skipped\n"
	if diff := cmp.Diff(wantErr, stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if !strings.Contains(stdout.String(), "line 7  assistant  anthropic/m  stop") {
		t.Errorf("the replay did not go on past the corrupt lines:\n%s", stdout.String())
	}
	// The JSON summary counts them too.
	stdout.Reset()
	run([]string{"replay", "--json", "-"}, strings.NewReader(data), false, &stdout, io.Discard)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum jsonSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.SkippedLines != 4 {
		t.Errorf("summary %s: skipped %d, err %v", lines[len(lines)-1], sum.SkippedLines, err)
	}
	// Warnings beyond the first 20 are counted, not printed.
	many := header3 + "\n" + strings.Repeat("oops\n", 25)
	stderr.Reset()
	run([]string{"replay", "-"}, strings.NewReader(many), false, io.Discard, &stderr)
	if !strings.Contains(stderr.String(), "5 more warning(s) not shown") || !strings.Contains(stderr.String(), "25 corrupt line(s) of 26 skipped") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestHelpToStdout is the regression test for help printed on standard
// error: asked for, it goes to standard output with exit 0; a misused
// command line still goes to standard error with exit 2.
func TestHelpToStdout(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout bool // usage on stdout, nothing on stderr
	}{
		{[]string{"help"}, 0, true},
		{[]string{"-h"}, 0, true},
		{[]string{"--help"}, 0, true},
		{[]string{"classify", "--help"}, 0, true},
		{[]string{"explain", "-h"}, 0, true},
		{[]string{"replay", "--help"}, 0, true},
		{[]string{"replay", "-h"}, 0, true},
		{[]string{"rules", "list", "-h"}, 0, true},
		{[]string{"rules", "help"}, 0, true},
		{[]string{"replay", "--bogus"}, 2, false},
		{[]string{"frobnicate"}, 2, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, noRead{t}, true, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if tt.stdout {
				if !strings.Contains(stdout.String(), "replay flags:") || stderr.Len() != 0 {
					t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
				}
			} else if stdout.Len() != 0 || !strings.Contains(stderr.String(), "erradvisor: ") {
				t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}

// replayOut runs replay with args on data (standard input) and returns
// its standard output.
func replayOut(t *testing.T, data string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append(append([]string{"replay"}, args...), "-"), strings.NewReader(data), false, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return stdout.String()
}

// msg is one message entry of a synthetic session.
func msg(id, parent, ts, message string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:%s.000Z","message":%s}`+"\n", id, p, ts, message)
}

const (
	quotaError = `{"role":"assistant","content":[],"provider":"openai","model":"gpt-4o","stopReason":"error","errorMessage":"429 You exceeded your current quota, please check your plan and billing details."}`
	rateError  = `{"role":"assistant","content":[],"provider":"openai","model":"gpt-4o","stopReason":"error","errorMessage":"429 Rate limit reached, please try again later"}`
	okText     = `{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"openai","model":"gpt-4o","stopReason":"stop"}`
	userHi     = `{"role":"user","content":"hi"}`
)

// TestReplayVerdictNotRecorded is the regression test for a replay that
// printed retries and compactions that never happened: the decision is
// labelled as the library's verdict, what the agent did is printed beside
// it, and auto_retry_end appears only for a streak the Session started.
func TestReplayVerdictNotRecorded(t *testing.T) {
	// The library stops on a quota error; the recorded agent retried it
	// and the retry succeeded. No streak was started: no auto_retry_end,
	// and no auto_retry_start either.
	data := header3 + "\n" + msg("u", "", "01", userHi) + msg("a", "u", "02", quotaError) + msg("b", "a", "04", okText)
	out := replayOut(t, data)
	for _, h := range []string{
		"verdict: what erradvisor decides under this policy (not what happened)",
		"  verdict   stop  — quota",
		"  recorded  retried after 2.0s (line 4)",
	} {
		if !strings.Contains(out, h) {
			t.Errorf("output lacks %q:\n%s", h, out)
		}
	}
	for _, never := range []string{"auto_retry_end", "auto_retry_start", "decision  "} {
		if strings.Contains(out, never) {
			t.Errorf("output has %q:\n%s", never, out)
		}
	}
	// The retry carries no note: the failed attempt left its context.
	if !strings.Contains(out, "→ request 2  openai/gpt-4o  at 2026-01-01T00:00:04.000Z  notes: 0") {
		t.Errorf("the retry's request is not as expected:\n%s", out)
	}

	// The library retries a rate limit; the recorded agent did not: the user
	// typed. The streak the Session started ends once, when the user types.
	data = header3 + "\n" + msg("u", "", "01", userHi) + msg("a", "u", "02", rateError) + msg("v", "a", "30", userHi) + msg("b", "v", "31", okText)
	out = replayOut(t, data, "--compare")
	if n := strings.Count(out, "auto_retry_end"); n != 1 ||
		!strings.Contains(out, `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`) {
		t.Errorf("want one auto_retry_end (Retry cancelled), got %d:\n%s", n, out)
	}
	if !strings.Contains(out, "  recorded  the user typed after 28.0s (line 4)  [DISAGREES with the verdict]") {
		t.Errorf("output lacks the disagreement:\n%s", out)
	}
	// No auto_retry_end with success: the success is not a retry.
	if strings.Contains(out, `"success":true`) {
		t.Errorf("a success reported as the end of a retry streak:\n%s", out)
	}
}

// TestReplayModelLimits is the regression test for outcomes without the
// model's limits, which hid early length stops: the limits come from the
// flags, else the table (with --models over it), a model without limits
// is reported once, and the real GLM-5.1 length stop at 202,750 tokens is
// compacted under both presets.
func TestReplayModelLimits(t *testing.T) {
	real := filepath.Join(sessionsDir, "real", "length-stop-context-full.jsonl")
	for _, policy := range []string{"conservative", "persistent"} {
		var stdout bytes.Buffer
		if code := run([]string{"replay", "--policy", policy, real}, noRead{t}, true, &stdout, io.Discard); code != 0 {
			t.Fatalf("exit %d", code)
		}
		for _, h := range []string{
			"usage in=164 out=29018 cacheRead=173568  limits window=204800 max_output=131072 (table)  used=202750",
			"  verdict   compact  — early length stop: compact, then one fresh attempt",
			"  recorded  ran the tool calls and went on",
		} {
			if !strings.Contains(stdout.String(), h) {
				t.Errorf("%s: output lacks %q:\n%s", policy, h, stdout.String())
			}
		}
	}

	length := `{"role":"assistant","content":[{"type":"text","text":"..."}],"provider":"acme","model":"m1","usage":{"input":1000,"output":500,"cacheRead":0},"stopReason":"length"}`
	data := header3 + "\n" + msg("u", "", "01", userHi) + msg("a", "u", "02", length) +
		msg("v", "a", "03", userHi) + msg("b", "v", "04", length)
	tests := []struct {
		name  string
		args  []string
		has   []string
		count map[string]int
	}{
		{"unknown model: said once", nil,
			[]string{"verdict   none  — output limit reached"},
			map[string]int{"limits    none known for acme/m1": 1}},
		{"flags", []string{"--context-window", "4000", "--max-output", "2000"},
			[]string{"limits window=4000 max_output=2000 (flags)  used=1500", "verdict   compact  — early length stop"},
			map[string]int{"none known": 0}},
		{"output limit reached", []string{"--max-output", "500"},
			[]string{"limits window=? max_output=500 (flags)", "verdict   none  — output limit reached"}, nil},
		{"models file", []string{"--models", "MODELS"},
			[]string{"limits window=8000 max_output=4000 (table)", "verdict   compact  — early length stop"}, nil},
	}
	models := filepath.Join(t.TempDir(), "models.yaml")
	if err := os.WriteFile(models, []byte("models:\n  - provider: acme\n    id: m1\n    context_window: 8000\n    max_output: 4000\n    source: https://example.com/acme-models\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			for i := range args {
				if args[i] == "MODELS" {
					args[i] = models
				}
			}
			out := replayOut(t, data, args...)
			for _, h := range tt.has {
				if !strings.Contains(out, h) {
					t.Errorf("output lacks %q:\n%s", h, out)
				}
			}
			for h, n := range tt.count {
				if got := strings.Count(out, h); got != n {
					t.Errorf("%q appears %d times, want %d:\n%s", h, got, n, out)
				}
			}
		})
	}
}

// TestReplayCompare is the regression test for a replay that could not
// say what the recorded agent did: --compare marks each verdict against
// it and counts them, and --json gives the same as JSON lines.
func TestReplayCompare(t *testing.T) {
	modelChange := `{"type":"model_change","id":"m","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","provider":"openai","modelId":"gpt-5"}` + "\n"
	compaction := `{"type":"compaction","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:05.000Z","summary":"s","firstKeptEntryId":"u","tokensBefore":9}` + "\n"
	toolUse := `{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{}}],"provider":"openai","model":"gpt-4o","stopReason":"toolUse"}`
	tests := []struct {
		name     string
		data     string
		recorded string
		verdict  string
		agrees   *bool
	}{
		{"retried", msg("u", "", "01", userHi) + msg("a", "u", "02", rateError) + msg("b", "a", "06", okText),
			"retried", "retry", ptr(true)},
		{"stop, retried", msg("u", "", "01", userHi) + msg("a", "u", "02", quotaError) + msg("b", "a", "06", okText),
			"retried", "stop", ptr(false)},
		{"stop, user typed", msg("u", "", "01", userHi) + msg("a", "u", "02", quotaError) + msg("v", "a", "09", userHi),
			"user_typed", "stop", ptr(true)},
		{"stop, model switched", msg("u", "", "01", userHi) + msg("a", "u", "02", quotaError) + modelChange,
			"model_switched", "stop", ptr(true)},
		{"stop, nothing", msg("u", "", "01", userHi) + msg("a", "u", "02", quotaError),
			"nothing", "stop", ptr(true)},
		{"retry, compacted", msg("u", "", "01", userHi) + msg("a", "u", "02", rateError) + compaction,
			"compacted", "retry", ptr(false)},
		{"none, tools", msg("u", "", "01", userHi) + msg("a", "u", "02", toolUse) + `{"type":"message","id":"t","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolName":"read","content":[]}}` + "\n",
			"tools", "none", ptr(true)},
		{"none, continued", msg("u", "", "01", userHi) + msg("a", "u", "02", okText) + msg("b", "a", "03", okText),
			"continued", "none", ptr(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := replayOut(t, header3+"\n"+tt.data, "--json")
			var got *jsonDecision
			var sum jsonSummary
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var probe struct{ Type string }
				if err := json.Unmarshal([]byte(line), &probe); err != nil {
					t.Fatalf("not a JSON line: %q", line)
				}
				switch probe.Type {
				case "decision":
					if got == nil { // the first decision: line 3
						got = new(jsonDecision)
						if err := json.Unmarshal([]byte(line), got); err != nil {
							t.Fatal(err)
						}
					}
				case "summary":
					if err := json.Unmarshal([]byte(line), &sum); err != nil {
						t.Fatal(err)
					}
				case "session", "request", "user", "compaction":
				default:
					t.Errorf("unknown type %q", probe.Type)
				}
			}
			if got == nil {
				t.Fatalf("no decision object:\n%s", out)
			}
			if diff := cmp.Diff([]any{tt.verdict, tt.recorded, tt.agrees}, []any{got.Verdict.Action, got.Recorded.Kind, got.Agrees}); diff != "" {
				t.Errorf("verdict, recorded, agrees (-want +got):\n%s", diff)
			}
			if sum.Type != "summary" || sum.Agree+sum.Disagree+sum.NotCompared != sum.Decisions {
				t.Errorf("summary %+v does not add up", sum)
			}
		})
	}

	// The human summary.
	out := replayOut(t, header3+"\n"+tests[1].data, "--compare")
	want := "\ncompare (conservative): 1 agree, 1 disagree, 0 not compared\n" +
		"  agree     none      vs nothing         1\n" +
		"  disagree  stop      vs retried         1\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("summary: want suffix %q, got:\n%s", want, out)
	}
}

// TestDurationText checks the rendering of recorded delays, down to the
// saturated differences of timestamps centuries apart (a fuzzed file).
func TestDurationText(t *testing.T) {
	tests := map[time.Duration]string{
		2 * time.Second:              "2.0s",
		-2500 * time.Millisecond:     "-2.5s",
		69 * time.Second:             "1m9s",
		time.Duration(math.MinInt64): "-2562047h47m16s",
		time.Duration(math.MaxInt64): "2562047h47m16s",
	}
	for d, want := range tests {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestAgreement checks the mapping documented on agreement.
func TestAgreement(t *testing.T) {
	all := []recordedKind{recRetried, recContinued, recTools, recCompacted, recUserTyped, recSwitched, recNothing}
	want := map[erradvisor.Action][]recordedKind{
		erradvisor.Retry:    {recRetried},
		erradvisor.Compact:  {recCompacted},
		erradvisor.Stop:     {recUserTyped, recSwitched, recNothing},
		erradvisor.Continue: {recContinued},
		erradvisor.Nudge:    {recContinued},
		erradvisor.None:     {recTools, recUserTyped, recSwitched, recNothing},
	}
	for a, agreeing := range want {
		var got []recordedKind
		for _, k := range all {
			ok, compared := agreement(a, k)
			if !compared {
				t.Errorf("%v vs %v not compared", a, k)
			}
			if ok {
				got = append(got, k)
			}
		}
		if diff := cmp.Diff(agreeing, got); diff != "" {
			t.Errorf("%v agrees with (-want +got):\n%s", a, diff)
		}
	}
	if _, compared := agreement(erradvisor.Defer, recRetried); compared {
		t.Error("Defer compared")
	}
}

// secret is an API key planted in the inputs; it must never be printed.
const secret = "sk-ant-api03-PLANTEDsecretKEY0123456789abcdef"

// TestRedactSecrets is the regression test for provider text printed with
// its secrets: a key in a session's errorMessage and in explain's input
// never reaches standard output, in any output form.
func TestRedactSecrets(t *testing.T) {
	failure := `401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + secret + `; Authorization: Bearer ` + secret + `"}}`
	b, _ := json.Marshal(failure)
	asst := `{"role":"assistant","content":[],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"error","errorMessage":` + string(b) + `}`
	data := header3 + "\n" + msg("u", "", "01", userHi) + msg("a", "u", "02", asst) + msg("v", "a", "09", userHi)
	runs := [][]string{
		{"replay", "-"}, {"replay", "--compare", "-"}, {"replay", "--json", "-"},
		{"replay", "--policy", "persistent", "-"},
		{"explain", "--provider", "anthropic", "--status", "401", failure},
		{"explain", "--json", "--provider", "anthropic", failure},
		{"classify", failure}, {"classify", "--json", failure},
	}
	for _, args := range runs {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(data), false, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if strings.Contains(stdout.String(), "PLANTEDsecret") || strings.Contains(stderr.String(), "PLANTEDsecret") {
				t.Errorf("the secret was printed:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
	// classify --jsonl echoes a bad line on stderr: redacted too.
	var stderr bytes.Buffer
	run([]string{"classify", "--jsonl"}, strings.NewReader("key "+secret+"\n"), false, io.Discard, &stderr)
	if strings.Contains(stderr.String(), "PLANTEDsecret") {
		t.Errorf("the secret was printed: %s", stderr.String())
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"invalid key sk-proj-abcdefgh12345678", "invalid key [redacted]"},
		{"Authorization: Bearer abc.def.ghi-12345", "Authorization: Bearer [redacted]"},
		{"authorization: bearer abcdefghijk==", "authorization: bearer [redacted]"},
		{"https://x.googleapis.com/v1/models?key=AIzaSyA1234567890abcdefghijklmnopqrstu&alt=sse", "https://x.googleapis.com/v1/models?key=[redacted]&alt=sse"},
		{"key AIzaSyA1234567890abcdefghijklmnopqrstu here", "key [redacted] here"},
		{"nothing to see: task-12345678, risk-free, Bearer x", "nothing to see: task-12345678, risk-free, Bearer x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRedact checks that redact never panics, is idempotent and never
// leaves an sk- key of the planted shape.
func FuzzRedact(f *testing.F) {
	f.Add("sk-ant-api03-abcdefghijkl")
	f.Add("Bearer abcdefghijkl")
	f.Add("?key=abc&token=def")
	f.Add("\xff\xfeBEARER sk-")
	f.Fuzz(func(t *testing.T, s string) {
		r := redact(s)
		if redact(r) != r {
			t.Errorf("redact not idempotent on %q: %q then %q", s, r, redact(r))
		}
		if strings.Contains(r, "sk-"+"PLANTED") {
			t.Errorf("key left in %q", r)
		}
	})
}

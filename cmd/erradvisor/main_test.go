package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/google/go-cmp/cmp"
)

// fixedNow is the observation time of every failure in the tests.
var fixedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	now = func() time.Time { return fixedNow }
	os.Exit(m.Run())
}

// noRead fails the test when the command reads standard input.
type noRead struct{ t *testing.T }

func (r noRead) Read([]byte) (int, error) {
	r.t.Error("standard input was read")
	return 0, io.EOF
}

const goodRules = `rules:
  - id: acme.gateway_busy
    class: transient
    reason: overloaded
    description: our gateway says it is busy
    providers: [acme]
    match: ["gateway busy"]
    examples: ["502 gateway busy, retry"]
    not: ["gateway ok"]
  - id: transient.gateway_no_body
    disabled: true
`

const badRules = `rules:
  - id: acme.gateway_busy
    class: transient
    reason: overloaded
    match: ["gateway busy"]
    examples: ["something else entirely"]
`

const brokenYAML = "rules:\n  - id: x\n    class: [\n"

type outcome struct {
	Code   int
	Stdout string
	Stderr string
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", goodRules)
	bad := write("bad.yaml", badRules)
	broken := write("broken.yaml", brokenYAML)
	missing := filepath.Join(dir, "missing.yaml")

	const rateLimit = "429 Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 20s."
	codex := `{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached","resets_in_seconds":13872}}`

	tests := []struct {
		name     string
		args     []string
		stdin    string
		terminal bool
		want     outcome
		// When set, Stdout and Stderr of want are not compared exactly;
		// these substrings must occur instead.
		outHas, errHas []string
	}{
		{
			name: "text",
			args: []string{"classify", "--provider", "openai", "--status", "429", rateLimit},
			want: outcome{Stdout: "transient  rate_limit  rule=transient.rate_limit  retry_after=20s\n"},
		},
		{
			name: "text words joined, flags after text",
			args: []string{"classify", "invalid", "x-api-key", "--status", "401"},
			want: outcome{Stdout: "permanent  auth  rule=auth.invalid_credentials\n"},
		},
		{
			name: "double dash ends flags",
			args: []string{"classify", "--", "--json", "invalid x-api-key"},
			want: outcome{Stdout: "permanent  auth  rule=auth.invalid_credentials\n"},
		},
		{
			name:  "stdin message",
			args:  []string{"classify", "--provider", "anthropic"},
			stdin: "Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n",
			want:  outcome{Stdout: "transient  overloaded  rule=transient.overloaded\n"},
		},
		{
			name:     "status alone on a terminal",
			args:     []string{"classify", "--status", "429"},
			terminal: true,
			want:     outcome{Stdout: "transient  rate_limit  rule=status.429\n"},
		},
		{
			name: "unknown",
			args: []string{"classify", "something odd happened"},
			want: outcome{Stdout: "unknown\n"},
		},
		{
			name: "reset_at",
			args: []string{"classify", "--provider", "codex", "--status", "429", codex},
			want: outcome{Stdout: "quota  usage_limit  rule=quota.usage_limit  retry_after=3h51m12s  reset_at=2026-01-01T03:51:12Z\n"},
		},
		{
			name: "json",
			args: []string{"classify", "--json", "--provider", "openai", rateLimit},
			want: outcome{Stdout: `{"class":"transient","reason":"rate_limit","rule":"transient.rate_limit","retry_after_ms":20000}` + "\n"},
		},
		{
			name: "json reset_at",
			args: []string{"classify", "--json", "--provider", "codex", codex},
			want: outcome{Stdout: `{"class":"quota","reason":"usage_limit","rule":"quota.usage_limit","retry_after_ms":13872000,"reset_at":"2026-01-01T03:51:12Z"}` + "\n"},
		},
		{
			name: "json unknown",
			args: []string{"classify", "--json", "nothing to see"},
			want: outcome{Stdout: `{"class":"unknown","reason":"","rule":"","retry_after_ms":0}` + "\n"},
		},
		{
			name: "rules file layered over defaults",
			args: []string{"classify", "--rules", good, "--provider", "acme", "upstream said: gateway busy"},
			want: outcome{Stdout: "transient  overloaded  rule=acme.gateway_busy\n"},
		},
		{
			name: "jsonl",
			args: []string{"classify", "--jsonl"},
			stdin: `{"provider":"anthropic","status":529,"code":"overloaded_error","message":"Overloaded"}` + "\n" +
				"\n" + // blank lines are skipped
				`{"provider":"openai","status":429,"message":"` + rateLimit + `"}` + "\r\n" +
				`{"provider":"codex","message":` + jsonString(codex) + `}` + "\n" +
				`{"message":"no status, no provider","extra":true}`, // no final newline
			want: outcome{Stdout: `{"class":"transient","reason":"overloaded","rule":"transient.overloaded","retry_after_ms":0}
{"class":"transient","reason":"rate_limit","rule":"transient.rate_limit","retry_after_ms":20000}
{"class":"quota","reason":"usage_limit","rule":"quota.usage_limit","retry_after_ms":13872000,"reset_at":"2026-01-01T03:51:12Z"}
{"class":"unknown","reason":"","rule":"","retry_after_ms":0}
`},
		},
		{
			name:  "jsonl flags are defaults",
			args:  []string{"classify", "--jsonl", "--status", "429", "--provider", "anthropic"},
			stdin: `{"message":"oops"}` + "\n" + `{"status":401,"message":"invalid x-api-key"}` + "\n",
			want: outcome{Stdout: `{"class":"transient","reason":"rate_limit","rule":"status.429","retry_after_ms":0}
{"class":"permanent","reason":"auth","rule":"auth.invalid_credentials","retry_after_ms":0}
`},
		},
		{
			name: "jsonl bad lines reported, the rest classified",
			args: []string{"classify", "--jsonl"},
			stdin: `{"status":529,"message":"Overloaded"}` + "\n" +
				"not json\n" +
				`{"status":"429"}` + "\n" +
				`{"status":42}` + "\n" +
				`{"message":"unterminated` + "\n" +
				"null\n" +
				`{"message":"invalid x-api-key"}` + "\n",
			want: outcome{Code: 1,
				Stdout: `{"class":"transient","reason":"overloaded","rule":"transient.overloaded","retry_after_ms":0}
{"class":"permanent","reason":"auth","rule":"auth.invalid_credentials","retry_after_ms":0}
`,
				Stderr: `erradvisor: line 2: not a JSON object: not json
erradvisor: line 3: field "status": want an integer, got a JSON string
erradvisor: line 4: status 42: want 0 (none) or an HTTP status from 100 to 599
erradvisor: line 5: invalid JSON: unexpected end of JSON input
erradvisor: line 6: not a JSON object: null
erradvisor: 5 bad line(s) of 7
`},
		},
		{
			name:  "jsonl overlong line skipped, 1 MiB body classified",
			args:  []string{"classify", "--jsonl"},
			stdin: strings.Repeat("x", maxLine+10) + "\n" + `{"message":"` + strings.Repeat("a", 1<<20) + ` invalid x-api-key"}` + "\n",
			want: outcome{Code: 1,
				Stdout: `{"class":"permanent","reason":"auth","rule":"auth.invalid_credentials","retry_after_ms":0}` + "\n",
				Stderr: "erradvisor: line 1: longer than 8 MiB; skipped\nerradvisor: 1 bad line(s) of 2\n"},
		},
		{
			name:   "jsonl with text is misuse",
			args:   []string{"classify", "--jsonl", "text"},
			want:   outcome{Code: 2},
			errHas: []string{"--jsonl reads standard input", "erradvisor help"},
		},
		{
			name:     "examples on a terminal",
			args:     []string{"classify"},
			terminal: true,
			want:     outcome{},
			outHas: []string{
				"INPUT", "CLASS", "REASON", "RULE", "WAIT",
				"anthropic 529 Overloaded", "transient.overloaded",
				"quota.exhausted", "overflow.stated", "20s",
				"3h51m12s until 2026-01-01T03:51:12Z", "auth.invalid_credentials",
				"transient.gateway_no_body",
			},
		},
		{
			name:     "examples with no arguments at all",
			args:     nil,
			terminal: true,
			outHas:   []string{"INPUT", "anthropic 529 Overloaded"},
		},
		{
			name:   "examples on empty stdin",
			args:   []string{"classify"},
			stdin:  "  \n",
			outHas: []string{"INPUT", "anthropic 529 Overloaded"},
		},
		{
			name:     "examples with rules",
			args:     []string{"classify", "--rules", good},
			terminal: true,
			outHas:   []string{"INPUT", "openrouter 400"},
		},
		{
			name:     "json without input is misuse",
			args:     []string{"classify", "--json"},
			terminal: true,
			want:     outcome{Code: 2},
			errHas:   []string{"--json needs a failure"},
		},
		{
			name:   "bad status flag",
			args:   []string{"classify", "--status", "abc", "x"},
			want:   outcome{Code: 2},
			errHas: []string{`invalid value "abc" for flag -status`},
		},
		{
			name:   "unknown flag",
			args:   []string{"classify", "--bogus", "x"},
			want:   outcome{Code: 2},
			errHas: []string{"flag provided but not defined: -bogus"},
		},
		{
			name:   "missing rules file",
			args:   []string{"classify", "--rules", missing, "x"},
			want:   outcome{Code: 1},
			errHas: []string{missing, "no such file"},
		},
		{
			name:   "bad rules file for classify",
			args:   []string{"classify", "--rules", bad, "x"},
			want:   outcome{Code: 1},
			errHas: []string{bad + `:2: rule "acme.gateway_busy": example does not match`},
		},
		{
			name: "rules list",
			args: []string{"rules", "list"},
			outHas: []string{
				"ID  ", "CLASS", "REASON", "PROVIDERS", "SOURCE",
				"abort.request", "rules.yaml:", "transient.gateway_no_body", "status.429",
			},
		},
		{
			name:   "rules list layered",
			args:   []string{"rules", "list", "--rules", good},
			outHas: []string{"acme.gateway_busy", "overloaded", "acme", good + ":2"},
		},
		{
			name:   "rules list bad file",
			args:   []string{"rules", "list", "--rules", broken},
			want:   outcome{Code: 1},
			errHas: []string{broken + ":"},
		},
		{
			name: "rules check good",
			args: []string{"rules", "check", good},
			want: outcome{Stdout: good + ": ok: 2 rules\n" +
				good + `:10: note: rule "transient.gateway_no_body" disables the default rule (rules.yaml:` +
				ruleLine(t, "transient.gateway_no_body") + ")\n" +
				good + `: changes example of transient.gateway_no_body: transient/server (transient.gateway_no_body) becomes permanent/invalid_request (status.400): "400 status code (no body)"` + "\n" +
				good + ": changes the verdict on 1 of " + strconv.Itoa(defaultTextCount(t)) + " default examples and fixtures\n"},
		},
		{
			name: "rules check bad",
			args: []string{"rules", "check", bad},
			want: outcome{Code: 1,
				Stderr: "erradvisor: " + bad + `:2: rule "acme.gateway_busy": example does not match: "something else entirely"` + "\n"},
		},
		{
			name:   "rules check broken YAML",
			args:   []string{"rules", "check", broken},
			want:   outcome{Code: 1},
			errHas: []string{"erradvisor: " + broken + ":"},
		},
		{
			name:   "rules check several",
			args:   []string{"rules", "check", good, missing},
			want:   outcome{Code: 1},
			outHas: []string{good + ": ok: 2 rules"},
			errHas: []string{missing},
		},
		{name: "rules check nothing", args: []string{"rules", "check"}, want: outcome{Code: 2}, errHas: []string{"give one or more rule files"}},
		{name: "rules alone", args: []string{"rules"}, want: outcome{Code: 2}, errHas: []string{"usage:"}},
		{name: "rules unknown", args: []string{"rules", "lsit"}, want: outcome{Code: 2}, errHas: []string{`unknown subcommand "lsit"`}},
		// Help asked for goes to standard output with exit 0 (TestHelpToStdout
		// checks that nothing goes to standard error).
		{name: "help", args: []string{"help"}, outHas: []string{"usage:", "erradvisor rules check"}},
		{name: "-h", args: []string{"-h"}, outHas: []string{"usage:"}},
		{name: "classify -h", args: []string{"classify", "-h"}, outHas: []string{"usage:"}},
		{name: "unknown command", args: []string{"frobnicate"}, want: outcome{Code: 2}, errHas: []string{`unknown command "frobnicate"`, "usage:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdin io.Reader = strings.NewReader(tc.stdin)
			if tc.terminal {
				stdin = noRead{t}
			}
			var stdout, stderr bytes.Buffer
			got := outcome{Code: run(tc.args, stdin, tc.terminal, &stdout, &stderr)}
			got.Stdout, got.Stderr = stdout.String(), stderr.String()
			want := tc.want
			if tc.outHas != nil || tc.errHas != nil {
				for _, s := range tc.outHas {
					if !strings.Contains(got.Stdout, s) {
						t.Errorf("stdout lacks %q:\n%s", s, got.Stdout)
					}
				}
				for _, s := range tc.errHas {
					if !strings.Contains(got.Stderr, s) {
						t.Errorf("stderr lacks %q:\n%s", s, got.Stderr)
					}
				}
				got.Stdout, got.Stderr = "", ""
				want.Stdout, want.Stderr = "", ""
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("run(%q) mismatch (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestExamplesTable checks the built-in examples show a spread of verdicts.
func TestExamplesTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"classify"}, noRead{t}, true, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	var rows []string
	for i, l := range lines {
		if strings.HasPrefix(l, "INPUT") {
			for _, r := range lines[i+1:] {
				if r == "" {
					break
				}
				rows = append(rows, r)
			}
		}
	}
	if len(rows) != len(examples) || len(rows) < 6 || len(rows) > 8 {
		t.Fatalf("%d rows for %d examples:\n%s", len(rows), len(examples), stdout.String())
	}
	classes := map[string]bool{}
	for _, r := range rows {
		f := strings.Fields(r)
		for _, w := range f {
			if err := new(erradvisor.Class).UnmarshalText([]byte(w)); err == nil {
				classes[w] = true
			}
		}
	}
	want := map[string]bool{"transient": true, "quota": true, "overflow": true, "permanent": true}
	if diff := cmp.Diff(want, classes); diff != "" {
		t.Errorf("classes shown (-want +got):\n%s", diff)
	}
}

func TestSkipLongLines(t *testing.T) {
	in := "ab\n" + strings.Repeat("x", 25) + "\ncd\r\n" + strings.Repeat("y", 40)
	sc := bufio.NewScanner(strings.NewReader(in))
	sc.Buffer(make([]byte, 4), 10)
	tooLong := false
	sc.Split(skipLongLines(10, &tooLong))
	var got []string
	for sc.Scan() {
		if tooLong {
			tooLong = false
			got = append(got, "<too long>")
			continue
		}
		got = append(got, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"ab", "<too long>", "cd", "<too long>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"provider":"anthropic","status":529,"code":"overloaded_error","message":"Overloaded"}` + "\n"))
	f.Add([]byte(`{"status":429,"message":"Please try again in 20s."}` + "\nnot json\n\n" + `{"status":-1}`))
	f.Add([]byte(`{"provider":"codex","message":"usage_limit_reached resets_in_seconds: 99999999999999999999"}`))
	f.Add([]byte("null\n[]\n\"x\"\n{\"message\":\"\\ud800\"}\r\n\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var stdout, stderr bytes.Buffer
		code := run([]string{"classify", "--jsonl"}, bytes.NewReader(data), false, &stdout, &stderr)
		if code != 0 && code != 1 {
			t.Fatalf("exit %d", code)
		}
		if code == 1 && stderr.Len() == 0 {
			t.Fatal("exit 1 without a message on stderr")
		}
		for _, l := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			var r result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("output line %q: %v", l, err)
			}
			if err := new(erradvisor.Class).UnmarshalText([]byte(r.Class)); err != nil {
				t.Fatalf("output line %q: %v", l, err)
			}
			if r.ResetAt != "" {
				if _, err := time.Parse(time.RFC3339, r.ResetAt); err != nil {
					t.Fatalf("output line %q: %v", l, err)
				}
			}
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ruleLine returns the line of a default rule, as a string.
func ruleLine(t *testing.T, id string) string {
	t.Helper()
	d, err := erradvisor.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Rules() {
		if r.ID == id {
			return strconv.Itoa(r.Line)
		}
	}
	t.Fatalf("no default rule %q", id)
	return ""
}

// TestRulesCheckReportsChangedVerdicts: a rule file that reads "overloaded"
// as a quota changes default examples and fixtures, and says so; a project
// rule guarded by a status alone changes none, since it never beats a
// default rule that reads the text.
func TestRulesCheckReportsChangedVerdicts(t *testing.T) {
	dir := t.TempDir()
	quota := filepath.Join(dir, "overloaded-is-quota.yaml")
	status := filepath.Join(dir, "status-400.yaml")
	fixtures := filepath.Join(dir, "fixtures")
	for path, body := range map[string]string{
		quota:  "rules:\n  - id: user.overloaded\n    tier: abort\n    class: quota\n    reason: quota\n    match: [\"overloaded\"]\n",
		status: "rules:\n  - id: proxy.bad_request\n    class: permanent\n    reason: invalid_request\n    status: [400]\n",
		filepath.Join(fixtures, "f.yaml"): "- name: ctx\n  status: 400\n  message: \"maximum context length is 8192 tokens\"\n" +
			"- name: busy\n  status: 529\n  message: \"Overloaded\"\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"rules", "check", "--fixtures", fixtures, quota, status}, noRead{t}, true, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		quota + ": changes example of transient.overloaded",
		quota + ": changes fixture busy: transient/overloaded",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, status+": changes") {
		t.Errorf("a status-only project rule changed default verdicts:\n%s", got)
	}
}

// defaultTextCount is the number of examples and `not` texts of the default
// rules.
func defaultTextCount(t *testing.T) int {
	t.Helper()
	d, err := erradvisor.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	return len(defaultTexts(d))
}

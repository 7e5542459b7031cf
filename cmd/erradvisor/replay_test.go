package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/erradvisor/erradvisor"
	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files of the replay tests:
//
//	go test ./cmd/erradvisor -run TestReplayGolden -update
var update = flag.Bool("update", false, "rewrite testdata/sessions/*.golden")

// sessionsDir holds the session fixtures, at the root of the module.
const sessionsDir = "../../testdata/sessions"

// goldenVariants are the replays TestReplayGolden runs on every session
// fixture: both presets, without and with --compare, each with its golden
// file suffix.
var goldenVariants = []struct {
	suffix string
	args   []string
}{
	{".golden", []string{"--policy", "conservative"}},
	{".persistent.golden", []string{"--policy", "persistent"}},
	{".compare.golden", []string{"--policy", "conservative", "--compare"}},
	{".persistent.compare.golden", []string{"--policy", "persistent", "--compare"}},
}

// sessionFixtures returns the hand-built session files and the real ones
// (testdata/sessions/real).
func sessionFixtures(t *testing.T) (built, real []string) {
	t.Helper()
	built, err := filepath.Glob(filepath.Join(sessionsDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	real, err = filepath.Glob(filepath.Join(sessionsDir, "real", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return built, real
}

// TestReplayGolden replays every session fixture, hand-built and real,
// under both presets, without and with --compare, and compares the output
// with NAME.golden (conservative), NAME.persistent.golden,
// NAME.compare.golden and NAME.persistent.compare.golden.
func TestReplayGolden(t *testing.T) {
	built, real := sessionFixtures(t)
	if len(built) < 3 {
		t.Fatalf("want at least 3 hand-built session fixtures in %s, found %d", sessionsDir, len(built))
	}
	if len(real) < 6 {
		t.Fatalf("want at least 6 real session fixtures in %s/real, found %d", sessionsDir, len(real))
	}
	versions := map[int]bool{}
	for _, file := range append(built, real...) {
		for _, v := range goldenVariants {
			golden := strings.TrimSuffix(file, ".jsonl") + v.suffix
			t.Run(strings.TrimPrefix(golden, sessionsDir+"/"), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				args := append(append([]string{"replay"}, v.args...), file)
				code := run(args, noRead{t}, true, &stdout, &stderr)
				if code != 0 || stderr.Len() != 0 {
					t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
				}
				if *update {
					if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
					t.Errorf("replay %q (-%s +got):\n%s", args, filepath.Base(golden), diff)
				}
			})
		}
		s, err := loadSession(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		versions[s.version] = true
	}
	for _, v := range []int{1, 2, 3} {
		if !versions[v] {
			t.Errorf("no session fixture of version %d", v)
		}
	}
}

// TestReplayDecisions checks the verdicts that matter in the fixtures
// without the golden files: the scenarios the fixtures exist for.
func TestReplayDecisions(t *testing.T) {
	tests := []struct {
		file string
		args []string
		has  []string
	}{
		{"v1-abort-overloaded-length.jsonl", nil, []string{
			"verdict   none  — aborted by the user",
			"verdict   retry  delay=2s  attempt=1/3",
			"verdict   retry  delay=4s  attempt=2/3",
			`{"type":"auto_retry_end","success":true,"attempt":2}`,
			// 8,192 tokens out, below the table's 64,000 for the model: early.
			"verdict   compact  — early length stop",
		}},
		// With the request's own output limit, the same stop is genuine.
		{"v1-abort-overloaded-length.jsonl", []string{"--max-output", "8192"}, []string{
			"limits window=200000 max_output=8192 (flags+table)",
			"verdict   none  — output limit reached",
		}},
		{"v1-abort-overloaded-length.jsonl", []string{"--policy", "persistent", "--max-output", "8192"}, []string{
			"verdict   continue  attempt=1/∞  — length stop: continue 1",
		}},
		{"v2-overflow-compaction.jsonl", nil, []string{
			"verdict   compact  — context overflow: compact, then one fresh attempt",
			"compaction  tokensBefore=219898  overflow recovery",
			"was compacted into a summary",
			"2 entries on other branches skipped",
			"context overflow again: the recovery for this user message was already used",
		}},
		{"v3-quota-stop.jsonl", nil, []string{
			"class     quota  quota  rule=quota.exhausted",
			"verdict   stop  — quota",
			"(reason: quota). Retrying will not clear it.",
			"manual or threshold",
		}},
		{"v3-docs-branch-thinking.jsonl", []string{"--policy", "persistent"}, []string{
			"6 entries on other branches skipped",
			"verdict   nudge  attempt=1/1  — thinking-only stop: nudge once",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"replay"}, tt.args...), filepath.Join(sessionsDir, tt.file))
			code := run(args, noRead{t}, true, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			for _, h := range tt.has {
				if !strings.Contains(stdout.String(), h) {
					t.Errorf("output lacks %q:\n%s", h, stdout.String())
				}
			}
		})
	}
}

const header3 = `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`

func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.jsonl")
	noHeader := write("noheader.jsonl", `{"type":"message","timestamp":"2025-11-20T23:33:02.351Z","message":{"role":"user","content":"hi"}}`+"\n")
	noID := write("noid.jsonl", `{"type":"session","version":3}`+"\n")
	v4 := write("v4.jsonl", `{"type":"session","version":4,"id":"s"}`+"\n")
	vStr := write("vstr.jsonl", `{"type":"session","version":"3","id":"s"}`+"\n")
	empty := write("empty.jsonl", "\n\n")
	events := write("events.jsonl", header3+"\n"+`{"type":"agent_start"}`+"\n")
	firstGarbage := write("first.jsonl", "\nnot json\n"+header3+"\n")
	noNewline := write("nonewline.jsonl", `{"type":"session","version":3,"id":"s","cwd":"`+strings.Repeat("x", maxHeaderBytes)+`"}`)

	tests := []struct {
		name   string
		args   []string
		code   int
		errHas string
	}{
		{"missing file", []string{"replay", missing}, 1, "erradvisor: open " + missing + ": no such file\n"},
		{"directory", []string{"replay", dir}, 1, "is a directory"},
		{"no header", []string{"replay", noHeader}, 1, noHeader + `:1: not a Pi session file: the first line is a "message" entry, not a "session" header`},
		{"header without id", []string{"replay", noID}, 1, `no string "id"`},
		{"unknown version", []string{"replay", v4}, 1, v4 + ":1: unknown session format version 4 (this replay reads versions 1, 2 and 3)"},
		{"string version", []string{"replay", vStr}, 1, `unknown session format version "3"`},
		{"empty", []string{"replay", empty}, 1, empty + ": empty file: not a Pi session file"},
		{"event stream", []string{"replay", events}, 1, `"agent_start" is an event of the ` + "`pi --mode json`" + ` stream`},
		{"first line garbage", []string{"replay", firstGarbage}, 1, firstGarbage + ":2: invalid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 2)"},
		{"header line too long", []string{"replay", noNewline}, 1, noNewline + ":1: not a Pi session file: no session header line in the first 1024 KiB"},
		{"no file", []string{"replay"}, 2, "replay: give one session file"},
		{"negative window", []string{"replay", "--context-window", "-1", missing}, 2, "--context-window and --max-output take a positive number"},
		{"output above window", []string{"replay", "--context-window", "1000", "--max-output", "2000", missing}, 2, "--max-output 2000 is above --context-window 1000"},
		{"bad models file", []string{"replay", "--models", missing, missing}, 1, "--models: open " + missing},
		{"two files", []string{"replay", missing, missing}, 2, "replay: give one session file"},
		{"bad policy", []string{"replay", "--policy", "eager", missing}, 2, `--policy "eager": want conservative or persistent`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, noRead{t}, true, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout not empty:\n%s", stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.errHas) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.errHas)
			}
		})
	}
}

// TestReplayLargeLine replays a session whose tool result is a 3 MiB line.
func TestReplayLargeLine(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	data := header3 + "\n" +
		`{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"read it"}}` + "\n" +
		`{"type":"message","id":"a","parentId":"u","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{}}],"provider":"anthropic","model":"m","stopReason":"toolUse"}}` + "\n" +
		`{"type":"message","id":"t","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"message","id":"b","parentId":"t","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"` + big + `"}],"provider":"anthropic","model":"m","stopReason":"stop"}}`
	p := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil { // no final newline: the last line still counts
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", p}, noRead{t}, true, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, h := range []string{"line 4  toolResult  read", "line 5  assistant  anthropic/m  stop", "content=text"} {
		if !strings.Contains(stdout.String(), h) {
			t.Errorf("output lacks %q:\n%s", h, stdout.String())
		}
	}
}

// TestReplayTwoObjectsOnALine checks the quirk of real files: two entries
// written on one line are both read, with a warning.
func TestReplayTwoObjectsOnALine(t *testing.T) {
	data := header3 + "\n" +
		`{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}` +
		`{"type":"message","id":"a","parentId":"u","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m","stopReason":"error","errorMessage":"terminated"}}` + "\r\n"
	s, err := parseSession("two.jsonl", strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.entries) != 2 || s.entries[1].line != 2 || s.entries[1].index != 2 {
		t.Fatalf("entries: %d, want 2 on line 2", len(s.entries))
	}
	want := []string{"two.jsonl:2: 2 JSON objects on one line; read as separate entries (Pi skips such a line)"}
	if diff := cmp.Diff(want, s.warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestMainLine checks the choice of entries: the path from the last entry
// in v2/v3 files, stopping at a missing parent and at cycles.
func TestMainLine(t *testing.T) {
	entry := func(id, parent string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"label","id":"` + id + `","parentId":` + p + `}` + "\n"
	}
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"branches", header3 + "\n" + entry("a", "") + entry("b", "a") + entry("c", "a") + entry("d", "c"), []string{"a", "c", "d"}},
		{"missing parent", header3 + "\n" + entry("a", "") + entry("b", "gone"), []string{"b"}},
		{"cycle", header3 + "\n" + entry("a", "b") + entry("b", "a"), []string{"a", "b"}},
		{"second root", header3 + "\n" + entry("a", "") + entry("b", "a") + entry("c", ""), []string{"c"}},
		{"no ids", header3 + "\n" + `{"type":"label"}` + "\n" + `{"type":"label"}` + "\n", []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSession("x.jsonl", strings.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			path, _ := s.mainLine()
			var got []string
			for _, e := range path {
				got = append(got, e.id)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("main line (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorSummary(t *testing.T) {
	tests := map[string]string{
		`InternalServerError: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`: "InternalServerError: 529 overloaded_error: Overloaded",
		`503: {"message":"Service busy","type":"overloaded_error"}`:                                            "503: overloaded_error: Service busy",
		`fetch failed`:       "fetch failed",
		`400 {not json`:      "400 {not json",
		`{"error":{}}`:       `{"error":{}}`,
		`terminated {}`:      "terminated {}",
		`401 "Unauthorized"`: `401 "Unauthorized"`,
	}
	for in, want := range tests {
		if got := errorSummary(in); got != want {
			t.Errorf("errorSummary(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzReplay feeds arbitrary bytes to the session reader and the replay:
// they may fail, with a message naming the file, but never panic.
func FuzzReplay(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(sessionsDir, "*.jsonl"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(header3 + "\n" + `{"type":"compaction","firstKeptEntryIndex":-5,"firstKeptEntryId":null,"tokensBefore":1e300}` + "\n"))
	f.Add([]byte(`{"type":"session","id":"x"}` + "\n" + `{"type":"message","message":{"role":"assistant","stopReason":"error","errorMessage":"\ud800","timestamp":-1,"providerError":{"status":9999},"diagnostics":[{"details":{"status":"x"}}]}}{"a":1}`))
	f.Add([]byte("\xff\xfe\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSession("fuzz.jsonl", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		c := new(erradvisor.Classifier) // the embedded defaults
		for i, p := range []erradvisor.Policy{erradvisor.Conservative(), erradvisor.Persistent()} {
			var out bytes.Buffer
			cfg := replayConfig{policyName: "p", policy: p, classifier: c, compare: i == 0, json: i == 1}
			if err := replaySession(s, "fuzz.jsonl", cfg, &out); err != nil {
				t.Fatal(err)
			}
			if cfg.json {
				for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
					if !json.Valid(line) {
						t.Fatalf("not a JSON line: %q", line)
					}
				}
			}
		}
	})
}

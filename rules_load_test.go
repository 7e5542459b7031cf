package erradvisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor/internal/match"
	"github.com/google/go-cmp/cmp"
)

// ruleErrorShape is what a test compares of a *RuleError.
type ruleErrorShape struct {
	File     string
	Line     int
	Rule     string
	Mentions bool // the message holds the expected fragment
}

func shapeOf(t *testing.T, err error, fragment string) ruleErrorShape {
	t.Helper()
	var re *RuleError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *RuleError", err, err)
	}
	return ruleErrorShape{File: re.File, Line: re.Line, Rule: re.Rule, Mentions: strings.Contains(err.Error(), fragment)}
}

// slowParse is how long parsing a megabyte may take before a test calls it
// a failure. The shapes it guards against take minutes or never end; a
// linear parse takes well under a second, but the race detector and a
// loaded machine slow it several times.
func slowParse() time.Duration {
	if raceEnabled {
		return 60 * time.Second
	}
	return 15 * time.Second
}

// loadQuickly runs LoadRuleFile and fails the test if it takes more than a
// few seconds.
func loadQuickly(t *testing.T, path string) (*RuleSet, error) {
	t.Helper()
	type result struct {
		s   *RuleSet
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := LoadRuleFile(path)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(slowParse()):
		t.Fatalf("LoadRuleFile(%s) did not return within %v", path, slowParse())
	}
	return nil, nil
}

// TestLoadRuleFileRejects loads each bad shape in testdata/rules.
func TestLoadRuleFileRejects(t *testing.T) {
	tests := []struct {
		file     string
		line     int
		rule     string
		fragment string
	}{
		{"second_document.yaml", 6, "", "a second YAML document"},
		{"duplicate_rules_key.yaml", 6, "", "key 'rules' repeated"},
		{"duplicate_field.yaml", 6, "a.one", `key "class" repeated (first at line 3)`},
		{"duplicate_nested_key.yaml", 6, "a.one", `key "a" repeated`},
		{"float_status.yaml", 5, "a.half", "status: want a list of integers"},
		{"string_status.yaml", 5, "a.quoted", "status: want a list of integers"},
		{"status_out_of_range.yaml", 2, "a.range", "status 600: want 100 to 599"},
		{"all_error_statuses.yaml", 2, "a.everything", "covers every error status"},
		{"regex_matches_empty.yaml", 2, "a.star", `matches "" and so nearly any text`},
		{"regex_matches_one_char.yaml", 2, "a.dot", `matches " " and so nearly any text`},
		{"regex_matches_prose.yaml", 2, "a.words", `matches "The quick brown fox`},
		{"short_phrase.yaml", 2, "a.letter", `match: phrase "e" is too short`},
		{"short_all_phrase.yaml", 2, "a.two", `all: phrase "a b" is too short`},
		{"alias_bomb.yaml", 19, "a.bomb3", "aliases expand the document beyond"},
		{"exhausted_without_text.yaml", 2, "a.status", "exhausted: the rule must read text"},
		{"mapping_as_text.yaml", 5, "a.map", "match: want a list of texts"},
		{"regex_too_long.yaml", 2, "a.long", "regex: longer than 1024 bytes"},
		{"numbers_unknown.yaml", 2, "a.under", `numbers "under": want over`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "rules", tt.file)
			_, err := loadQuickly(t, path)
			if err == nil {
				t.Fatal("no error")
			}
			want := ruleErrorShape{File: path, Line: tt.line, Rule: tt.rule, Mentions: true}
			if diff := cmp.Diff(want, shapeOf(t, err, tt.fragment)); diff != "" {
				t.Errorf("%v\n(-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestLoadRuleFileOK(t *testing.T) {
	s, err := loadQuickly(t, filepath.Join("testdata", "rules", "ok.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type info struct {
		ID        string
		Exhausted bool
	}
	var got []info
	for _, r := range s.Rules() {
		got = append(got, info{r.ID, r.Exhausted})
	}
	if diff := cmp.Diff([]info{{"proxy.quota", false}, {"proxy.retries", true}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	d, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClassifier(s, d)
	if err != nil {
		t.Fatal(err)
	}
	cl := c.Classify(Failure{Status: 503, Message: "proxy gave up after retrying 5 times: 503 Service Unavailable"})
	want := Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "transient.unavailable", RetriesExhausted: true}
	if diff := cmp.Diff(want, cl, ignoreEvidence); diff != "" {
		t.Errorf("a user's exhausted rule (-want +got):\n%s", diff)
	}
}

func TestLoadRuleFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := loadQuickly(t, "/dev/zero")
	if diff := cmp.Diff(ruleErrorShape{File: "/dev/zero", Mentions: true}, shapeOf(t, err, "not a regular file")); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
}

func TestLoadRuleFileDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := loadQuickly(t, dir)
	if diff := cmp.Diff(ruleErrorShape{File: dir, Mentions: true}, shapeOf(t, err, "not a regular file")); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
}

func TestLoadRuleFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	data := []byte("rules: []\n" + strings.Repeat("#", maxRuleFileSize))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadQuickly(t, path)
	if diff := cmp.Diff(ruleErrorShape{File: path, Mentions: true}, shapeOf(t, err, "file larger than")); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
	if _, err := ParseRules(path, data); err == nil {
		t.Error("ParseRules took an oversized document")
	}
}

// TestLoadRuleFileMissingIsSkipped keeps LoadClassifier's promise.
func TestLoadRuleFileMissingIsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := LoadRuleFile(path)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	if _, err := LoadClassifier(path); err != nil {
		t.Errorf("LoadClassifier: %v", err)
	}
}

// TestParseRulesAliasBombMegabyte: a 1 MB file of nested aliases fails fast.
func TestParseRulesAliasBombMegabyte(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n  - &a0 [\"" + strings.Repeat("x", 64) + "\"]\n")
	for i := 1; b.Len() < maxRuleFileSize-4096; i++ {
		fmt.Fprintf(&b, "  - &a%d [", i)
		for j := 0; j < 64; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	data := []byte(b.String())
	start := time.Now()
	_, err := ParseRules("bomb.yaml", data)
	elapsed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "aliases expand the document beyond") {
		t.Fatalf("error %v", err)
	}
	if elapsed > slowParse() {
		t.Errorf("took %v for %d bytes", elapsed, len(data))
	}
	t.Logf("%d bytes rejected in %v", len(data), elapsed)
}

// TestParseRulesExamplesBudget: examples that aliases multiply past the
// examples budget are an error naming the rule.
func TestParseRulesExamplesBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n")
	b.WriteString("  - id: a.anchor\n    class: transient\n    reason: server\n    match: [\"out of juice\"]\n")
	b.WriteString("    description: &big \"out of juice " + strings.Repeat("z", 200) + "\"\n")
	for r := 0; r < 5; r++ {
		fmt.Fprintf(&b, "  - id: a.r%d\n    class: transient\n    reason: server\n    match: [\"out of juice\"]\n    examples: [", r)
		for j := 0; j < 1200; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*big")
		}
		b.WriteString("]\n")
	}
	_, err := ParseRules("examples.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("no error")
	}
	got := shapeOf(t, err, "examples and 'not' texts exceed")
	want := ruleErrorShape{File: "examples.yaml", Line: got.Line, Rule: "a.r4", Mentions: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
}

// TestParseRulesPhraseSetTooLarge: phrases beyond the automaton's states
// are reported with the file, line and rule that did not fit.
func TestParseRulesPhraseSetTooLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n")
	const perRule, length = 100, 120
	n := 0
	for r := 0; n*length < match.MaxStates+20*length; r++ {
		fmt.Fprintf(&b, "  - id: big.r%d\n    class: transient\n    reason: server\n    match: [", r)
		for j := 0; j < perRule; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			// Distinct from the first letter on: no shared trie prefix.
			p := make([]byte, length)
			for k := range p {
				p[k] = byte('a' + (n*7+k*13+k*k*k)%26)
			}
			p[0], p[1], p[2] = byte('a'+n%26), byte('a'+n/26%26), byte('a'+n/676%26)
			fmt.Fprintf(&b, "%q", p)
			n++
		}
		b.WriteString("]\n")
	}
	_, err := ParseRules("phrases.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("no error")
	}
	got := shapeOf(t, err, "phrase set too large to compile")
	if got.Rule == "" || got.Line == 0 || got.File != "phrases.yaml" || !got.Mentions {
		t.Errorf("error %v does not name the file, line and rule", err)
	}
}

// TestParseRulesLargeMappingFast: a mapping of a megabyte where a text is
// expected is rejected before the YAML decoder, whose duplicate-key check
// is quadratic, sees it.
func TestParseRulesLargeMappingFast(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n  - id: a.big\n    class: quota\n    reason: quota\n    match: [\"out of juice\"]\n    description: {")
	for i := 0; b.Len() < maxRuleFileSize-100; i++ {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	b.WriteString("z: 1}\n")
	start := time.Now()
	_, err := ParseRules("map.yaml", []byte(b.String()))
	if elapsed := time.Since(start); elapsed > slowParse() {
		t.Errorf("took %v", elapsed)
	}
	want := ruleErrorShape{File: "map.yaml", Line: 6, Rule: "a.big", Mentions: true}
	if diff := cmp.Diff(want, shapeOf(t, err, "description: want a single value")); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
}

// TestConceptLimit checks that a project's rule file can add its own
// concepts and clause combinations on top of the defaults' (which use about
// half of each), and that the limit is reported when a file goes past it.
func TestConceptLimit(t *testing.T) {
	build := func(n int) []byte {
		var b strings.Builder
		b.WriteString("concepts:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  proj_%d: [\"projword%dx\"]\n", i, i)
		}
		b.WriteString("rules:\n")
		for i := 0; i+1 < n; i += 2 {
			fmt.Fprintf(&b, "- id: proj.rule%d\n  class: permanent\n  reason: invalid_request\n  clause: [\"proj_%d + proj_%d\"]\n", i, i, i+1)
		}
		return []byte(b.String())
	}
	set, err := ParseRules("project.yaml", build(40))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClassifier(set)
	if err != nil {
		t.Fatalf("40 project concepts over the defaults: %v", err)
	}
	if got := c.Classify(Failure{Message: "projword38x and projword39x"}); got.Rule != "proj.rule38" {
		t.Errorf("a combination past the 64th: rule %q, want proj.rule38", got.Rule)
	}
	if got := c.Classify(Failure{Message: "projword38x. projword39x"}); got.Rule == "proj.rule38" {
		t.Errorf("words in two clauses combined")
	}
	set, err = ParseRules("project.yaml", build(maxConcepts))
	if err == nil {
		_, err = NewClassifier(set)
	}
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d project concepts over the defaults: err %v, want the limit named", maxConcepts, err)
	}
}

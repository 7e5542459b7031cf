package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  Rate limit   exceeded!! ", "rate limit exceeded"},
		{`{"error":{"code":429}}`, "error code 429"},
		{"余额不足，请充值", "余额不足 请充值"},
		{"---", ""},
		{"Überlastet\n\tJetzt", "überlastet jetzt"},
	} {
		if diff := cmp.Diff(tc.want, normalize(tc.in)); diff != "" {
			t.Errorf("normalize(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestDedupeKey(t *testing.T) {
	long := strings.Repeat("ab ", 50)
	got := dedupeKey(long)
	if n := utf8.RuneCountInString(got); n != dedupeLen {
		t.Errorf("key has %d characters, want %d", n, dedupeLen)
	}
	if diff := cmp.Diff(dedupeKey("Rate limit: exceeded"), dedupeKey("rate LIMIT exceeded.")); diff != "" {
		t.Errorf("keys differ:\n%s", diff)
	}
}

func TestCostly(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		not       []string
		costly    bool
	}{
		{"quota", "quota", nil, false},
		{"quota", "transient", nil, true},
		{"overflow", "transient", nil, true},
		{"transient", "overflow", nil, true},
		{"quota", "overflow", nil, true},
		{"permanent", "unknown", nil, false},
		{"permanent", "unknown", []string{"unknown"}, true},
		{"transient", "permanent", nil, false},
		{"canceled", "transient", nil, false},
	} {
		if got := costly(tc.want, tc.got, tc.not) != ""; got != tc.costly {
			t.Errorf("costly(%s, %s, %v) = %v, want %v", tc.want, tc.got, tc.not, got, tc.costly)
		}
	}
}

func TestScore(t *testing.T) {
	existing := []*entry{{Name: "old", Source: "https://example.com/old", Message: "Rate limit exceeded, please slow down"}}
	set := []*entry{
		{Name: "dup", Source: "https://example.com/new", Message: "rate limit exceeded -- please slow down!",
			Want: want{Class: "transient", Reason: "rate_limit"}},
		{Name: "same-source", Source: "https://example.com/old", Provider: "anthropic", Status: 529,
			Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			Want:    want{Class: "transient", Reason: "overloaded"}},
		{Name: "quota", Source: "https://example.com/q", Provider: "openai", Status: 429,
			Message: "You exceeded your current quota, please check your plan and billing details.",
			Want:    want{Class: "quota", Reason: "quota"}, Not: []string{"transient"}},
	}
	rep := score(set, existing)
	type row struct{ Name, With string }
	var got []row
	for _, c := range rep.collisions {
		got = append(got, row{c.name, c.with})
	}
	if diff := cmp.Diff([]row{{"dup", "old"}}, got); diff != "" {
		t.Errorf("collisions (-want +got):\n%s", diff)
	}
	got = nil
	for _, c := range rep.sameSources {
		got = append(got, row{c.name, c.with})
	}
	if diff := cmp.Diff([]row{{"same-source", "old"}}, got); diff != "" {
		t.Errorf("same sources (-want +got):\n%s", diff)
	}
	if len(rep.results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.results))
	}
	var buf bytes.Buffer
	rep.write(&buf)
	for _, s := range []string{"| entries scored | 2 |", "| class correct | 2 | 100.0% |", "## Costly mistakes\n\nNone."} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, buf.String())
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(dir, "fx.yaml")
	set := filepath.Join(dir, "set.yaml")
	if err := os.WriteFile(fx, []byte("- name: a\n  source: https://a\n  message: something else\n  want: {class: unknown}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(set, []byte("- name: b\n  source: https://b\n  message: |-\n    Request was aborted.\n  want: {class: canceled, reason: aborted}\n  disputed: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := run(&buf, set, []string{fx}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| class correct, undisputed only | 0 of 0 | n/a |") {
		t.Errorf("report:\n%s", buf.String())
	}
	if err := os.WriteFile(set, []byte("- name: b\n  source: https://b\n  message: x\n  want: {class: nope}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(&buf, set, []string{fx}); err == nil {
		t.Error("an unknown class was accepted")
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add("Rate limit: exceeded!")
	f.Add("余额不足，请充值")
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		n := normalize(s)
		if n != strings.TrimSpace(n) || strings.Contains(n, "  ") {
			t.Errorf("normalize(%q) = %q: untrimmed or double space", s, n)
		}
		if normalize(n) != n {
			t.Errorf("normalize is not idempotent on %q", s)
		}
		if k := dedupeKey(s); utf8.RuneCountInString(k) > dedupeLen {
			t.Errorf("key too long: %q", k)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("- name: a\n  message: x\n  want: {class: transient}\n"))
	f.Add([]byte("- ~\n- name: b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := parse(data)
		if err != nil {
			return
		}
		_ = validate(list)
		for _, e := range list {
			_ = classify(e)
		}
	})
}

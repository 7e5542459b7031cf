package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const repoRoot = "../../.."

// TestGeneratedIsCurrent checks that the committed model is the one the
// fixtures train: regenerate with `go run ./internal/tools/wordmodel`.
func TestGeneratedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the whole model")
	}
	entries, err := load(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(entries)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, outFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run `go run ./internal/tools/wordmodel` from the repository root", outFile)
	}
}

func TestGroup(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"https://github.com/Owner/Repo/issues/12#issuecomment-3", "github.com/owner/repo"},
		{"https://gitee.com/a/b/issues/X", "gitee.com/a/b"},
		{"https://www.reddit.com/r/LocalLLaMA/comments/x", "reddit.com"},
		{"https://github.com/owner", "github.com"},
		{"not a url", "not a url"},
	} {
		if got := group(tc.source); got != tc.want {
			t.Errorf("group(%q) = %q, want %q", tc.source, got, tc.want)
		}
	}
}

// TestCrossValidate runs the report on the repository's texts: every fold
// trains and the report names both measures.
func TestCrossValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("trains ten models")
	}
	entries, err := load(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := crossValidate(&b, entries, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"on every held-out text:", "on held-out texts the rules leave unknown:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if err := crossValidate(&b, entries, 1); err == nil {
		t.Error("one fold: no error")
	}
}

func TestRound(t *testing.T) {
	var got []string
	for _, n := range []string{"blindQ2-x", "blindA-y", "holdout-z", "blind", "blindq-lower"} {
		r, ok := round(n)
		if ok {
			got = append(got, r)
		}
	}
	if diff := cmp.Diff([]string{"q", "a"}, got); diff != "" {
		t.Error(diff)
	}
}

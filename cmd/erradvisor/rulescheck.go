package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/erradvisor/erradvisor"
)

// A rule file layered over the defaults can change what the defaults
// decide. rules check reports every default rule example and `not` text,
// and every fixture, whose class or reason the file changes.

// checkText is one text the defaults were checked against.
type checkText struct {
	label string // "example of RULE", "not-text of RULE" or "fixture NAME"
	f     erradvisor.Failure
}

// defaultTexts returns the examples and `not` texts of the default rules,
// as failures with the rule's first provider and status.
func defaultTexts(defaults *erradvisor.RuleSet) []checkText {
	var out []checkText
	for _, r := range defaults.Rules() {
		base := erradvisor.Failure{}
		if len(r.Providers) > 0 {
			base.Provider = r.Providers[0]
		}
		if len(r.Status) > 0 {
			base.Status = r.Status[0]
		}
		for _, list := range []struct {
			kind  string
			texts []string
		}{{"example", r.Examples}, {"not-text", r.Not}} {
			for _, ex := range list.texts {
				f := base
				f.Message = ex
				out = append(out, checkText{label: list.kind + " of " + r.ID, f: f})
			}
		}
	}
	return out
}

// fixtureTexts reads the fixture files (*.yaml) of dir, in the schema of
// testdata/fixtures/README.md.
func fixtureTexts(dir string) ([]checkText, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []checkText
	for _, file := range files {
		data, err := readCapped(file, maxMessage)
		if err != nil {
			return nil, err
		}
		var list []struct {
			Name     string            `yaml:"name"`
			Provider string            `yaml:"provider"`
			Model    string            `yaml:"model"`
			Status   int               `yaml:"status"`
			Code     string            `yaml:"code"`
			Headers  map[string]string `yaml:"headers"`
			Message  string            `yaml:"message"`
		}
		if err := yaml.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, e := range list {
			f := erradvisor.Failure{Provider: e.Provider, Model: e.Model, Status: e.Status, Code: e.Code, Message: e.Message}
			if len(e.Headers) > 0 {
				f.Header = http.Header{}
				for k, v := range e.Headers {
					f.Header.Set(k, v)
				}
			}
			out = append(out, checkText{label: "fixture " + e.Name, f: f})
		}
	}
	return out, nil
}

// readCapped reads at most limit bytes of a regular file, and fails on a
// larger one.
func readCapped(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

// reportChanges prints, for the rule file name layered over the defaults,
// every text whose class or reason changes, and returns how many did.
func reportChanges(w io.Writer, name string, layered *erradvisor.Classifier, texts []checkText) int {
	defaults := new(erradvisor.Classifier)
	n := 0
	for _, t := range texts {
		before, after := defaults.Classify(t.f), layered.Classify(t.f)
		if before.Class == after.Class && before.Reason == after.Reason {
			continue
		}
		n++
		fmt.Fprintf(w, "%s: changes %s: %s/%s (%s) becomes %s/%s (%s): %q\n", name, t.label,
			before.Class, dash(string(before.Reason)), dash(before.Rule),
			after.Class, dash(string(after.Reason)), dash(after.Rule), excerpt(redact(t.f.Message), 80))
	}
	return n
}

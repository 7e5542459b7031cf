package models

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

type lookupCase struct {
	Name          string `yaml:"name"`
	Provider      string `yaml:"provider"`
	Model         string `yaml:"model"`
	ContextWindow int    `yaml:"context_window"`
	MaxOutput     int    `yaml:"max_output"`
	Missing       bool   `yaml:"missing"`
	Source        string `yaml:"source"`
}

func loadLookupCases(t *testing.T) []lookupCase {
	t.Helper()
	data, err := os.ReadFile("testdata/lookup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []lookupCase
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestLookupDefault(t *testing.T) {
	for _, c := range loadLookupCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			if !strings.HasPrefix(c.Source, "https://") {
				t.Errorf("case has no source URL")
			}
			got, ok := Default().Lookup(c.Provider, c.Model)
			type result struct {
				Limits Limits
				Found  bool
			}
			want := result{Found: !c.Missing}
			if !c.Missing {
				want.Limits = Limits{ContextWindow: c.ContextWindow, MaxOutput: c.MaxOutput}
			}
			if diff := cmp.Diff(want, result{got, ok}); diff != "" {
				t.Errorf("Lookup(%q, %q) mismatch (-want +got):\n%s", c.Provider, c.Model, diff)
			}
		})
	}
}

// TestDefaultEntriesSane checks every embedded entry: a source URL, positive
// limits and an output limit within the context window.
func TestDefaultEntriesSane(t *testing.T) {
	d := Default()
	if d.Len() < 40 {
		t.Fatalf("default table has %d entries; the embedded file did not parse?", d.Len())
	}
	providers := map[string]int{}
	for _, e := range d.Entries() {
		providers[e.Provider]++
		if !strings.HasPrefix(e.Source, "https://") {
			t.Errorf("%s/%s: source %q is not an https URL", e.Provider, e.ID, e.Source)
		}
		if e.Limits.ContextWindow <= 0 || e.Limits.MaxOutput <= 0 {
			t.Errorf("%s/%s: limits %+v not positive", e.Provider, e.ID, e.Limits)
		}
		if e.Limits.MaxOutput > e.Limits.ContextWindow {
			t.Errorf("%s/%s: max_output %d > context_window %d", e.Provider, e.ID, e.Limits.MaxOutput, e.Limits.ContextWindow)
		}
		if e.Line <= 0 {
			t.Errorf("%s/%s: no line", e.Provider, e.ID)
		}
		// Every id and alias finds its own entry.
		for _, id := range append([]string{e.ID}, e.Aliases...) {
			if got, ok := d.Lookup(e.Provider, id); !ok || got != e.Limits {
				t.Errorf("Lookup(%q, %q) = %+v, %v; want %+v", e.Provider, id, got, ok, e.Limits)
			}
		}
	}
	t.Logf("default table: %d models, %d providers: %v", d.Len(), len(providers), providers)
}

func TestParseErrors(t *testing.T) {
	const good = "  - provider: p\n    id: m\n    context_window: 100\n    max_output: 10\n    source: https://example.com/m\n"
	cases := []struct {
		name, data, want string
	}{
		{"unknown field", "models:\n" + good + "    colour: red\n", "x.yaml:7: field colour not found"},
		{"unknown top-level field", "model:\n" + good, "x.yaml:1: field model not found"},
		{"duplicate key", "models:\n" + good + "    id: n\n", `x.yaml:7: mapping key "id" already defined at line 3`},
		{"duplicate id", "models:\n" + good + good, `x.yaml:7: model m: id "m" of provider p is already used by the entry at line 2`},
		{"alias repeats an id", "models:\n" + good + strings.Replace(good, "id: m", "id: n\n    aliases: [M]", 1), `x.yaml:7: model n: id "m" of provider p is already used`},
		{"no provider", "models:\n" + strings.Replace(good, "provider: p", "provider: ''", 1), "x.yaml:2: entry has no provider"},
		{"no id", "models:\n" + strings.Replace(good, "id: m", "id: ' '", 1), "x.yaml:2: entry has no id"},
		{"zero window", "models:\n" + strings.Replace(good, "context_window: 100", "context_window: 0", 1), "x.yaml:2: model m: context_window must be a positive"},
		{"negative output", "models:\n" + strings.Replace(good, "max_output: 10", "max_output: -1", 1), "x.yaml:2: model m: max_output must be a positive"},
		{"output above window", "models:\n" + strings.Replace(good, "max_output: 10", "max_output: 101", 1), "x.yaml:2: model m: max_output 101 is larger than context_window 100"},
		{"no source", "models:\n" + strings.Replace(good, "source: https://example.com/m", "source: docs", 1), "x.yaml:2: model m: source must be the URL"},
		{"not a number", "models:\n" + strings.Replace(good, "max_output: 10", "max_output: ten", 1), "x.yaml:5: cannot unmarshal !!str `ten` into int"},
		{"empty alias", "models:\n" + good + "    aliases: ['']\n", "x.yaml:2: model m: empty alias"},
		{"empty prefix", "models:\n" + good + "    prefixes: ['']\n", "x.yaml:2: model m: empty prefix"},
		{"second document", "models:\n" + good + "---\nmodels: []\n", "x.yaml:7: a second YAML document"},
		{"bad yaml", "models: [\n", "x.yaml:1: did not find expected node content"},
		{"too large", strings.Repeat("#", MaxFileSize+1), "x.yaml: file is 1048577 bytes, more than the 1048576 allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(c.data))
			if err == nil {
				t.Fatalf("Parse succeeded; want error %q", c.want)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error = %q; want prefix %q", err, c.want)
			}
		})
	}
}

func TestParseEmpty(t *testing.T) {
	for _, data := range []string{"", "# nothing\n", "models: []\n"} {
		tb, err := Parse("e.yaml", []byte(data))
		if err != nil {
			t.Fatalf("Parse(%q): %v", data, err)
		}
		if diff := cmp.Diff(0, tb.Len()); diff != "" {
			t.Errorf("Parse(%q) len (-want +got):\n%s", data, diff)
		}
		if _, ok := tb.Lookup("", "x"); ok {
			t.Errorf("empty table found a model")
		}
	}
}

func TestOverlay(t *testing.T) {
	host, err := Parse("host.yaml", []byte(`models:
  - provider: anthropic
    id: claude-sonnet-4-5
    context_window: 1000000
    max_output: 64000
    source: https://docs.anthropic.com/en/docs/build-with-claude/context-windows
  - provider: local
    id: my-model
    aliases: [mine]
    prefixes: [my-model]
    context_window: 32768
    max_output: 4096
    source: https://example.com/my-model
`))
	if err != nil {
		t.Fatal(err)
	}
	merged := Overlay(host, Default())
	cases := []struct {
		provider, model string
		want            Limits
		found           bool
	}{
		{"anthropic", "claude-sonnet-4-5-20250929", Limits{1000000, 64000}, true}, // alias kept, numbers replaced
		{"anthropic", "claude-haiku-4-5", Limits{200000, 64000}, true},            // untouched default
		{"local", "mine", Limits{32768, 4096}, true},
		{"", "my-model-q4", Limits{32768, 4096}, true},
		{"local", "claude-haiku-4-5", Limits{}, false},
	}
	for _, c := range cases {
		got, ok := merged.Lookup(c.provider, c.model)
		if diff := cmp.Diff([]any{c.want, c.found}, []any{got, ok}); diff != "" {
			t.Errorf("Lookup(%q, %q) (-want +got):\n%s", c.provider, c.model, diff)
		}
	}
	if diff := cmp.Diff(Default().Len()+1, merged.Len()); diff != "" {
		t.Errorf("merged len (-want +got):\n%s", diff)
	}
	// The default table is unchanged.
	if got, _ := Default().Lookup("anthropic", "claude-sonnet-4-5"); got.ContextWindow != 200000 {
		t.Errorf("Overlay changed the default table: %+v", got)
	}
	// Nil and empty arguments.
	if Overlay(nil, nil).Len() != 0 || Overlay(nil, host) != host || Overlay(host, nil) != host {
		t.Errorf("Overlay with nil arguments")
	}
	var nilTable *Table
	if _, ok := nilTable.Lookup("anthropic", "claude-3-haiku"); ok || nilTable.Entries() != nil {
		t.Errorf("nil table is not empty")
	}
}

func TestStripStamp(t *testing.T) {
	cases := map[string]string{
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"gpt-4o-2024-08-06":          "gpt-4o",
		"gemini-2.0-flash-001":       "gemini-2.0-flash",
		"claude-3-5-sonnet-latest":   "claude-3-5-sonnet",
		"claude-opus-4-1":            "claude-opus-4-1",
		"gpt-4.1":                    "gpt-4.1",
		"-latest":                    "-latest",
		"o3-12":                      "o3-12",
	}
	got := map[string]string{}
	for in := range cases {
		got[in] = stripStamp(in)
	}
	if diff := cmp.Diff(cases, got); diff != "" {
		t.Errorf("stripStamp (-want +got):\n%s", diff)
	}
}

func TestDefaultConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if _, ok := Default().Lookup("openai", "gpt-4o-2024-11-20"); !ok {
					t.Error("lookup failed")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func FuzzParse(f *testing.F) {
	f.Add(defaultYAML)
	f.Add([]byte("models:\n  - provider: p\n    id: m\n    context_window: 100\n    max_output: 10\n    source: https://e.com\n"))
	f.Add([]byte("models: [\n"))
	f.Add([]byte("models:\n  - {provider: a, id: b, aliases: [b], context_window: 1, max_output: 1, source: 'http://x'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, e := range tb.Entries() {
			if e.Limits.ContextWindow <= 0 || e.Limits.MaxOutput <= 0 || e.Limits.MaxOutput > e.Limits.ContextWindow {
				t.Fatalf("accepted bad limits: %+v", e)
			}
			if got, ok := tb.Lookup(e.Provider, e.ID); !ok || got != e.Limits {
				t.Fatalf("Lookup(%q, %q) = %+v, %v; want %+v", e.Provider, e.ID, got, ok, e.Limits)
			}
		}
	})
}

func FuzzLookup(f *testing.F) {
	for _, s := range []string{"claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "openai/gpt-4o", "gemini-2.5-flash-lite-preview", "-latest", "a/", "/", "x-2024-01-01", "\u00e9-001"} {
		f.Add("anthropic", s)
		f.Add("", s)
	}
	d := Default()
	f.Fuzz(func(t *testing.T, provider, model string) {
		got, ok := d.Lookup(provider, model)
		if !ok {
			if got != (Limits{}) {
				t.Fatalf("not found but limits %+v", got)
			}
			return
		}
		if got.ContextWindow <= 0 || got.MaxOutput <= 0 || got.MaxOutput > got.ContextWindow {
			t.Fatalf("Lookup(%q, %q) = %+v", provider, model, got)
		}
		// Case does not matter.
		// (Only where upper-casing and lower-casing round-trip, as they do
		// not for every Unicode letter.)
		up, upModel := strings.ToUpper(provider), strings.ToUpper(model)
		lowUp, low := strings.ToLower(up), strings.ToLower(provider)
		lowUpModel, lowModel := strings.ToLower(upModel), strings.ToLower(model)
		if again, ok2 := d.Lookup(up, upModel); lowUp == low && lowUpModel == lowModel && (again != got || !ok2) {
			t.Fatalf("upper-case lookup differs: %+v %v", again, ok2)
		}
	})
}

package match

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// loadYAML decodes a list of cases from a file under testdata and checks
// that each names its source.
func loadYAML[T any](t *testing.T, name string, source func(T) string) []T {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var cases []T
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", name)
	}
	for i, c := range cases {
		if source(c) == "" {
			t.Errorf("%s: case %d has no source", name, i)
		}
	}
	return cases
}

// normalizeCase is one entry of testdata/normalize.yaml.
type normalizeCase struct {
	Text   string `yaml:"text"`
	Want   string `yaml:"want"`
	Source string `yaml:"source"`
	Note   string `yaml:"note"`
}

func TestNormalize(t *testing.T) {
	for _, tt := range loadYAML(t, "normalize.yaml", func(c normalizeCase) string { return c.Source }) {
		if diff := cmp.Diff(tt.Want, Normalize(tt.Text)); diff != "" {
			t.Errorf("Normalize(%q) (-want +got):\n%s", tt.Text, diff)
		}
	}
}

// scanCase is one entry of testdata/scan.yaml.
type scanCase struct {
	Name     string         `yaml:"name"`
	Source   string         `yaml:"source"`
	Note     string         `yaml:"note"`
	Phrases  []string       `yaml:"phrases"`
	Concepts [][]string     `yaml:"concepts"`
	Combos   [][]int        `yaml:"combos"`
	Text     string         `yaml:"text"`
	Found    []string       `yaml:"found"`
	Held     []int          `yaml:"held"`
	FirstEnd map[string]int `yaml:"first_end"`
}

// compile builds a Matcher the way a classifier does: the phrases, then the
// concept words (each a phrase that knows its concepts), then the id
// markers. It returns the phrase list in id order.
func (c scanCase) compile(t *testing.T) (*Matcher, []string) {
	t.Helper()
	var phrases []string
	var concepts []Mask
	id := func(p string) int {
		p = Normalize(p)
		if i := slices.Index(phrases, p); i >= 0 {
			return i
		}
		phrases = append(phrases, p)
		concepts = append(concepts, Mask{})
		return len(phrases) - 1
	}
	for _, p := range c.Phrases {
		id(p)
	}
	for k, words := range c.Concepts {
		for _, w := range words {
			concepts[id(w)].Add(k)
		}
	}
	for _, w := range IDMarkers() {
		concepts[id(w)].Add(IDMarker)
	}
	var combos []Mask
	for _, cb := range c.Combos {
		var mask Mask
		for _, k := range cb {
			mask.Add(k)
		}
		combos = append(combos, mask)
	}
	m, err := New(phrases, concepts, combos)
	if err != nil {
		t.Fatal(err)
	}
	return m, phrases
}

func TestScan(t *testing.T) {
	type result struct {
		Found    []string
		Held     []int
		FirstEnd map[string]int
	}
	for _, tt := range loadYAML(t, "scan.yaml", func(c scanCase) string { return c.Source }) {
		t.Run(tt.Name, func(t *testing.T) {
			m, phrases := tt.compile(t)
			var anchors []int32
			var names []string
			for p := range tt.FirstEnd {
				anchors = append(anchors, int32(slices.Index(phrases, Normalize(p))))
				names = append(names, p)
			}
			ends := make([]int, len(anchors))
			for i := range ends {
				ends[i] = -1
			}
			h := Hits{Set: make([]uint64, (m.NumPhrases()+63)/64)}
			m.Scan(tt.Text, &h, anchors, ends)

			var got result
			markers := IDMarkers()
			for id, p := range phrases {
				if h.Has(int32(id)) && !slices.Contains(markers, p) {
					got.Found = append(got.Found, p)
				}
			}
			for k := range tt.Combos {
				if h.HasCombo(int32(k)) {
					got.Held = append(got.Held, k)
				}
			}
			if len(names) > 0 {
				got.FirstEnd = map[string]int{}
				for i, p := range names {
					got.FirstEnd[p] = ends[i]
				}
			}
			want := result{tt.Found, tt.Held, tt.FirstEnd}
			var found []string
			for _, p := range want.Found {
				found = append(found, Normalize(p))
			}
			want.Found = found
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\ntext: %s", diff, tt.Text)
			}
		})
	}
}

// TestScanAddsUp: a Hits reused for a second text keeps what the first one
// found.
func TestScanAddsUp(t *testing.T) {
	m, err := New([]string{"rate limit", "overloaded"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := Hits{Set: make([]uint64, 1)}
	m.Scan("rate_limit_error", &h, nil, nil)
	m.Scan("overloaded_error", &h, nil, nil)
	if diff := cmp.Diff([]bool{true, true}, []bool{h.Has(0), h.Has(1)}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNewLimits: too many combinations, too many distinct bytes.
func TestNewLimits(t *testing.T) {
	if _, err := New([]string{"a"}, nil, make([]Mask, MaxCombos+1)); !errors.Is(err, ErrTooManyCombos) {
		t.Errorf("%d combos: %v", MaxCombos+1, err)
	}
	var phrases []string
	for b := 1; b < 256; b++ {
		phrases = append(phrases, string([]byte{byte(b), 'x'}))
	}
	phrases = append(phrases, "\x00")
	_, err := New(phrases, nil, nil)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("256 distinct bytes: %v", err)
	}
	if diff := cmp.Diff(int32(len(phrases)-1), tl.Phrase); diff != "" {
		t.Errorf("phrase that did not fit (-want +got):\n%s", diff)
	}
}

// TestWideMasks checks concepts and combinations past the first 64: a
// combination of concepts 70 and 126, tracked as combination 100.
func TestWideMasks(t *testing.T) {
	var a, b Mask
	a.Add(70)
	b.Add(126)
	combos := make([]Mask, 101)
	for k := range combos {
		combos[k].Add(k) // filler combinations of one concept each
	}
	combos[100] = Mask{}
	combos[100].Add(70)
	combos[100].Add(126)
	m, err := New([]string{"quota", "exceed"}, []Mask{a, b}, combos)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"quota exceeded", true},
		{"quota. exceeded", false},
		{"exceeded", false},
	} {
		h := Hits{Set: make([]uint64, 1)}
		m.Scan(tt.text, &h, nil, nil)
		if got := h.HasCombo(100); got != tt.want {
			t.Errorf("%q: combination 100 = %v, want %v", tt.text, got, tt.want)
		}
		if h.HasCombo(5) {
			t.Errorf("%q: combination 5 reported, but concept 5 has no word", tt.text)
		}
		if got, want := h.HasCombo(70), strings.Contains(tt.text, "quota"); got != want {
			t.Errorf("%q: combination 70 (concept 70 alone) = %v, want %v", tt.text, got, want)
		}
	}
}

// TestTwoStreams reads long texts whose middle line break falls in each
// kind of place: between clauses, inside a phrase that runs over the break,
// inside a clause whose concepts lie on both sides, after an id marker, and
// inside an identifier. Two streams must give what one gives.
func TestTwoStreams(t *testing.T) {
	phrases := []string{"bad gateway", "quota", "exceed", "gateway", "limit"}
	pad := strings.Repeat("lorem ipsum dolor sit amet, ", 40) // no phrase
	tests := map[string]struct{ before, after string }{
		"clean break":           {"all fine.", "quota exceeded"},
		"phrase over break":     {"a bad", "gateway here"},
		"clause over break":     {"the quota", "exceed; ok"},
		"id marker at the end":  {"request id:", "quota7 exceeded"},
		"identifier at the end": {"see https://x.io/a", "b quota"},
		"no break near middle":  {"", ""},
		"limit at both ends":    {"limit", "limit"},
	}
	m, err := New(phrases, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range tests {
		head := pad + pad + tt.before
		text := head + "\n" + tt.after + " " + pad + " gateway exceed"
		split := len(head) + 1
		if name == "no break near middle" {
			text, split = strings.Repeat(pad, 12), 0
		}
		if got := m.splitPoint(text); len(text) < twoStreamMin || got != split {
			t.Fatalf("%s: %d bytes split at %d, want at least %d bytes split at %d", name, len(text), got, twoStreamMin, split)
		}
		if d := twoStreamCase(phrases, text); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
}

// TestSplitPointPrefersRootBreak: of two line breaks past the middle, the
// split goes after the one whose last byte no phrase holds before a space,
// where one stream is back at the root.
func TestSplitPointPrefersRootBreak(t *testing.T) {
	m, err := New([]string{"bad gateway"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Repeat("x", 1500)
	text := head + "a bad\n" + "<p>\r\n" + strings.Repeat("y", 1500)
	want := len(head) + len("a bad\n<p>\r\n")
	if got := m.splitPoint(text); got != want {
		t.Errorf("splitPoint = %d, want %d (after \"<p>\")", got, want)
	}
}

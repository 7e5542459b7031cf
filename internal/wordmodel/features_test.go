package wordmodel

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

type wordsCase struct {
	Name   string   `yaml:"name"`
	Status int      `yaml:"status"`
	Text   string   `yaml:"text"`
	Words  []string `yaml:"words"`
}

func TestWords(t *testing.T) {
	data, err := os.ReadFile("testdata/words.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []wordsCase
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var got []string
			for _, w := range Words(tc.Status, tc.Text) {
				got = append(got, w.Text)
			}
			if diff := cmp.Diff(tc.Words, got); diff != "" {
				t.Errorf("Words(%d, %q) (-want +got):\n%s", tc.Status, tc.Text, diff)
			}
		})
	}
}

// TestFeaturesAgree checks that the explanation path reads the same
// features as the scoring path.
func TestFeaturesAgree(t *testing.T) {
	for _, text := range []string{"", "rate limit exceeded, try again", "余额不足 503 https://x.y/z", strings.Repeat("quota ", 3000)} {
		var fromWords []uint32
		for _, w := range Words(429, text) {
			fromWords = append(fromWords, w.Feature)
		}
		if diff := cmp.Diff(AppendFeatures(nil, 429, text), fromWords); diff != "" {
			t.Errorf("%.40q: features differ (-AppendFeatures +Words):\n%s", text, diff)
		}
	}
}

// TestMaxText checks that nothing past MaxText is read.
func TestMaxText(t *testing.T) {
	head := strings.Repeat("x ", MaxText/2)
	got := AppendFeatures(nil, 0, head+" insufficient balance")
	if diff := cmp.Diff(AppendFeatures(nil, 0, head), got); diff != "" {
		t.Errorf("text past MaxText was read:\n%s", diff)
	}
}

// TestInflectionsMeet checks that the stemmer joins a word's common forms.
func TestInflectionsMeet(t *testing.T) {
	for _, forms := range [][]string{
		{"exceed", "exceeds", "exceeded", "exceeding"},
		{"token", "tokens"},
		{"request", "requests", "requested"},
		{"require", "required", "requires", "requiring"},
	} {
		want := AppendFeatures(nil, 0, forms[0])
		for _, f := range forms[1:] {
			if got := AppendFeatures(nil, 0, f); !slices.Equal(got, want) {
				t.Errorf("%q and %q are different features", forms[0], f)
			}
		}
	}
}

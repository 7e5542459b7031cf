package erradvisor

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// redactShape is one entry of testdata/redact/shapes.yaml.
type redactShape struct {
	Name   string `yaml:"name"`
	Source string `yaml:"source"`
	Input  string `yaml:"input"`
	Want   string `yaml:"want"`
}

func loadRedactShapes(t testing.TB) []redactShape {
	t.Helper()
	data, err := os.ReadFile("testdata/redact/shapes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var shapes []redactShape
	if err := yaml.Unmarshal(data, &shapes); err != nil {
		t.Fatal(err)
	}
	return shapes
}

func TestRedactShapes(t *testing.T) {
	shapes := loadRedactShapes(t)
	if len(shapes) < 80 {
		t.Errorf("%d shapes, want at least 80", len(shapes))
	}
	seen := map[string]bool{}
	negatives := 0
	for _, sh := range shapes {
		t.Run(sh.Name, func(t *testing.T) {
			if sh.Name == "" || seen[sh.Name] || !strings.HasPrefix(sh.Source, "https://") || sh.Input == "" {
				t.Fatalf("entry needs a unique name, an https source and an input: %+v", sh)
			}
			seen[sh.Name] = true
			if sh.Input == sh.Want {
				negatives++
			}
			got := Redact(sh.Input)
			if diff := cmp.Diff(sh.Want, got); diff != "" {
				t.Errorf("Redact(%q) (-want +got):\n%s", sh.Input, diff)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent on %q: %q", got, again)
			}
		})
	}
	if negatives < 15 {
		t.Errorf("%d negatives, want at least 15", negatives)
	}
}

func FuzzRedact(f *testing.F) {
	for _, sh := range loadRedactShapes(f) {
		f.Add(sh.Input)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Redact(s)
		if again := Redact(got); again != got {
			t.Fatalf("Redact(%q) = %q, but Redact of that = %q", s, got, again)
		}
	})
}

package erradvisor

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/erradvisor/erradvisor/internal/match"
)

// fixture is one real error text with the classification it must get. See
// testdata/fixtures/README.md.
type fixture struct {
	Name     string            `yaml:"name"`
	Source   string            `yaml:"source"`
	Provider string            `yaml:"provider"`
	Model    string            `yaml:"model"`
	Status   int               `yaml:"status"`
	Code     string            `yaml:"code"`
	Headers  map[string]string `yaml:"headers"`
	Message  string            `yaml:"message"`
	Want     fixtureWant       `yaml:"want"`
	Not      []string          `yaml:"not"`
	Comment  string            `yaml:"comment"`

	file string
}

type fixtureWant struct {
	Class      string        `yaml:"class"`
	Reason     string        `yaml:"reason"`
	RetryAfter time.Duration `yaml:"retry_after"`
}

// fixtureAt is the observation time every fixture is classified at.
var fixtureAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (fx *fixture) failure() Failure {
	f := Failure{Provider: fx.Provider, Model: fx.Model, Status: fx.Status, Code: fx.Code,
		Message: fx.Message, At: fixtureAt}
	if len(fx.Headers) > 0 {
		f.Header = http.Header{}
		for k, v := range fx.Headers {
			f.Header.Set(k, v)
		}
	}
	return f
}

func loadFixtures(t testing.TB) []*fixture {
	t.Helper()
	files, err := filepath.Glob("testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var all []*fixture
	names := map[string]string{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var list []*fixture
		if err := yaml.Unmarshal(data, &list); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, fx := range list {
			fx.file = file
			if fx.Name == "" || fx.Message == "" && fx.Status == 0 && fx.Code == "" || !strings.HasPrefix(fx.Source, "http") {
				t.Fatalf("%s: fixture %q needs name, source URL and message", file, fx.Name)
			}
			if prev, dup := names[fx.Name]; dup {
				t.Fatalf("fixture %q in %s and %s", fx.Name, prev, file)
			}
			names[fx.Name] = file
		}
		all = append(all, list...)
	}
	return all
}

func TestFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			got := Classify(fx.failure())
			gotW := fixtureWant{Class: got.Class.String(), Reason: string(got.Reason), RetryAfter: got.RetryAfter}
			if diff := cmp.Diff(fx.Want, gotW); diff != "" {
				t.Errorf("%s (rule %q) mismatch (-want +got):\n%s\nmessage: %.300s", fx.file, got.Rule, diff, fx.Message)
			}
			if slices.Contains(fx.Not, got.Class.String()) {
				t.Errorf("classified as %s, which this fixture guards against (%s)", got.Class, fx.Comment)
			}
			if got.Rule == "" && got.Class != Unknown || got.Class == Unknown && got.Rule != "" && !strings.HasPrefix(got.Rule, "outside.") {
				t.Errorf("rule %q with class %s", got.Rule, got.Class)
			}
		})
	}
}

// TestFixturesTraditionalSpelling rewrites every Chinese fixture in
// traditional characters (match.Traditional) and checks it gets the class
// and reason of its simplified text: the rules are written once, in
// simplified characters, and must read texts from Taiwan and Hong Kong
// alike. No real error text in traditional characters turned up in the
// sources gathered, so the real simplified texts stand in for them.
func TestFixturesTraditionalSpelling(t *testing.T) {
	n := 0
	for _, fx := range loadFixtures(t) {
		hant := match.Traditional(fx.Message)
		if hant == fx.Message {
			continue
		}
		n++
		f := fx.failure()
		want := Classify(f)
		f.Message = hant
		got := Classify(f)
		if diff := cmp.Diff(fixtureWant{Class: want.Class.String(), Reason: string(want.Reason)},
			fixtureWant{Class: got.Class.String(), Reason: string(got.Reason)}); diff != "" {
			t.Errorf("%s in traditional characters (rule %q, was %q) (-simplified +traditional):\n%s", fx.Name, got.Rule, want.Rule, diff)
		}
	}
	if n < 100 {
		t.Errorf("only %d fixtures have characters with a traditional form", n)
	}
}

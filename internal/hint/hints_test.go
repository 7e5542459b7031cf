package hint

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// fixtureAt is the time every text of testdata/hints.yaml is read at.
var fixtureAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hintCase is one entry of testdata/hints.yaml.
type hintCase struct {
	Name   string        `yaml:"name"`
	Source string        `yaml:"source"`
	Text   string        `yaml:"text"`
	Wait   time.Duration `yaml:"wait"`
	Reset  time.Time     `yaml:"reset"`
	Status int           `yaml:"status"`
}

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

// TestBodyAndStatus reads the wait, the reset time and the status of real
// error texts from the anchors a scan finds.
func TestBodyAndStatus(t *testing.T) {
	type result struct {
		Wait   time.Duration
		Reset  time.Time
		Status int
	}
	for _, tt := range loadYAML(t, "hints.yaml", func(c hintCase) string { return c.Source }) {
		ends := scanEnds(t, tt.Text)
		wait, reset, _ := Body(tt.Text, &ends, fixtureAt)
		got := result{wait, reset, Status(tt.Text, &ends)}
		want := result{tt.Wait, tt.Reset, tt.Status}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s\ntext: %s", tt.Name, diff, tt.Text)
		}
	}
}

// TestBodyWithoutAt: without an observation time only an absolute reset
// time is read, and the wait does not depend on it.
func TestBodyWithoutAt(t *testing.T) {
	for _, tt := range loadYAML(t, "hints.yaml", func(c hintCase) string { return c.Source }) {
		ends := scanEnds(t, tt.Text)
		wait, reset, _ := Body(tt.Text, &ends, time.Time{})
		if wait != tt.Wait {
			t.Errorf("%s: wait %v without at, %v with it", tt.Name, wait, tt.Wait)
		}
		if !reset.IsZero() && !reset.Equal(tt.Reset) {
			t.Errorf("%s: reset %v without at, %v with it", tt.Name, reset, tt.Reset)
		}
	}
}

// TestStatusWhere checks that a status the filter refuses is passed over
// for a later one in a clear shape, and that none is invented.
func TestStatusWhere(t *testing.T) {
	clientError := func(s int) bool { return s >= 400 && s < 500 }
	for _, tt := range []struct {
		text string
		want int
	}{
		{"500: Gateway API error: 404 Not Found", 404},
		{"HTTP 502 from proxy; upstream status code 401", 401},
		{"500 Internal Server Error", 0},
		{"404 page not found", 404},
		{"500: 404 tokens used", 0},
	} {
		ends := scanEnds(t, tt.text)
		if got := StatusWhere(tt.text, &ends, clientError); got != tt.want {
			t.Errorf("StatusWhere(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

package hint

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// parseCase is one entry of testdata/parse.yaml.
type parseCase struct {
	Kind        string `yaml:"kind"`
	Text        string `yaml:"text"`
	Start       int    `yaml:"start"`
	BareSeconds bool   `yaml:"bare_seconds"`
	Want        string `yaml:"want"`
	OK          bool   `yaml:"ok"`
	Source      string `yaml:"source"`
	Note        string `yaml:"note"`
}

// TestParsers runs every parser on the values of testdata/parse.yaml. Each
// result is written back in the fixture's notation, empty when nothing was
// read.
func TestParsers(t *testing.T) {
	for _, tt := range loadYAML(t, "parse.yaml", func(c parseCase) string { return c.Source }) {
		var got string
		var ok bool
		switch tt.Kind {
		case "number":
			var f float64
			f, ok = ParseNumber(tt.Text)
			got = strconv.FormatFloat(f, 'g', -1, 64)
		case "duration":
			var d time.Duration
			var n int
			d, n, ok = ParseDuration(tt.Text, tt.Start, tt.BareSeconds)
			if n < tt.Start || n > len(tt.Text) {
				t.Errorf("ParseDuration(%q, %d): consumed up to %d", tt.Text, tt.Start, n)
			}
			got = d.String()
		case "epoch", "timestamp":
			var at time.Time
			if tt.Kind == "epoch" {
				at, ok = parseEpoch(tt.Text, tt.Start)
			} else {
				at, ok = parseTimestamp(tt.Text, tt.Start)
			}
			got = at.UTC().Format(time.RFC3339)
		default:
			t.Fatalf("unknown kind %q", tt.Kind)
		}
		if !ok {
			got = ""
		}
		if diff := cmp.Diff(struct {
			Value string
			OK    bool
		}{tt.Want, tt.OK}, struct {
			Value string
			OK    bool
		}{got, ok}); diff != "" {
			t.Errorf("%s %q from %d (-want +got):\n%s", tt.Kind, tt.Text, tt.Start, diff)
		}
	}
}

// TestSeconds bounds a count of seconds to (0, MaxWait].
func TestSeconds(t *testing.T) {
	tests := []struct {
		in   float64
		want time.Duration
		ok   bool
	}{
		{1.5, 1500 * time.Millisecond, true},
		{0, 0, false},
		{-3, 0, false},
		{MaxWait.Seconds(), MaxWait, true},
		{MaxWait.Seconds() + 1, 0, false},
	}
	for _, tt := range tests {
		d, ok := Seconds(tt.in)
		if diff := cmp.Diff([2]any{tt.want, tt.ok}, [2]any{d, ok}); diff != "" {
			t.Errorf("Seconds(%v) (-want +got):\n%s", tt.in, diff)
		}
	}
}

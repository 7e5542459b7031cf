package wordmodel

import (
	"math"
	"slices"
	"testing"
)

// FuzzFeatures reads any text: no panic, the scoring and explanation paths
// read the same features, nothing past MaxText is read, and the verdict is
// a probability of a valid class.
func FuzzFeatures(f *testing.F) {
	for _, s := range []string{"", "RateLimitError: rate_limit_exceeded", "余额不足，请充值", "https://x/y", "HTTP 503 1.503", "\xff\xfe欠", "a://", "/", "aB9Cd_eF"} {
		f.Add(503, s)
	}
	m := Default()
	f.Fuzz(func(t *testing.T, status int, text string) {
		feats := AppendFeatures(nil, status, text)
		var fromWords []uint32
		for _, w := range Words(status, text) {
			fromWords = append(fromWords, w.Feature)
		}
		if !slices.Equal(feats, fromWords) {
			t.Fatalf("AppendFeatures and Words disagree: %v vs %v", feats, fromWords)
		}
		if len(text) > MaxText && !slices.Equal(feats, AppendFeatures(nil, status, text[:MaxText])) {
			t.Fatal("text past MaxText was read")
		}
		g := m.Guess(status, text)
		if g.Class >= NumClasses || g.Best >= NumClasses || math.IsNaN(g.P) || g.P < 0 || g.P > 1+1e-9 {
			t.Fatalf("bad guess %+v", g)
		}
		if g.Class == Overflow || g.Class == Canceled {
			t.Fatalf("guess gave %v", g.Class)
		}
	})
}

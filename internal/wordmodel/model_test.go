package wordmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExp(t *testing.T) {
	for x := -50.0; x <= 50; x += 0.37 {
		got, want := exp(x), math.Exp(x)
		if math.Abs(got-want) > 1e-13*want {
			t.Errorf("exp(%v) = %v, want %v", x, got, want)
		}
	}
	if exp(800) != math.Inf(1) || exp(-800) != 0 {
		t.Error("exp out of range")
	}
}

func TestClassNames(t *testing.T) {
	for c := Unknown; c < NumClasses; c++ {
		got, ok := ParseClass(c.String())
		if !ok || got != c {
			t.Errorf("ParseClass(%q) = %v, %v", c.String(), got, ok)
		}
	}
	if _, ok := ParseClass("retry"); ok {
		t.Error(`ParseClass("retry") ok`)
	}
}

// toyDocs is a small training set with a clear word per class.
func toyDocs() []Doc {
	var docs []Doc
	for i, g := range []string{"a", "b", "c", "d"} {
		_ = i
		docs = append(docs,
			Doc{Text: "the backend hiccuped, please retry", Class: Transient, Group: g},
			Doc{Text: "your wallet is empty, recharge it", Class: Billing, Group: g},
			Doc{Text: "malformed payload rejected", Class: Permanent, Group: g},
			Doc{Text: "the prompt is too long for the window", Class: Overflow, Group: g},
			Doc{Text: "startup banner printed", Class: Unknown, Group: g},
		)
	}
	return docs
}

func TestTrainIsDeterministic(t *testing.T) {
	a, b := Train(toyDocs(), DefaultOptions()), Train(toyDocs(), DefaultOptions())
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two trainings differ:\n%s", diff)
	}
}

func TestTrainLearnsAndGuessAbstains(t *testing.T) {
	m := Train(toyDocs(), Options{Epochs: 60, Rate: 0.5, Decay: 0.1, L2: 1e-4, MinGroups: 2})
	for _, tc := range []struct {
		text string
		want Class
	}{
		{"the backend hiccuped", Transient},
		{"your wallet is empty, recharge it", Billing},
		{"malformed payload", Permanent},
		// Overflow is never given by the model, however sure it is.
		{"the prompt is too long for the window", Unknown},
		{"startup banner", Unknown},
		{"words it never saw", Unknown},
	} {
		if got := m.Guess(0, tc.text); got.Class != tc.want {
			t.Errorf("Guess(%q) = %v (best %v, p %.2f), want %v", tc.text, got.Class, got.Best, got.P, tc.want)
		}
	}
	if g := m.Guess(0, "the prompt is too long for the window"); g.Best != Overflow {
		t.Errorf("best class %v, want overflow", g.Best)
	}
}

// TestGuessCostlyGuard builds a model by hand whose verdict is Transient
// with a large share on Permanent: it must abstain.
func TestGuessCostlyGuard(t *testing.T) {
	w := &Weights{Scale: 1}
	w.Bias[Transient] = 10
	w.Bias[Permanent] = 8
	g := w.GuessAt(0, "", 0.5, 0.1)
	if g.Best != Transient || g.Class != Unknown {
		t.Errorf("got %+v, want best transient and no verdict", g)
	}
	if g := w.GuessAt(0, "", 0.5, 0.2); g.Class != Transient {
		t.Errorf("with a looser guard got %+v, want transient", g)
	}
}

func TestDefaultModelDoesNotAllocate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are measured without -race")
	}
	m := Default()
	text := strings.Repeat("the upstream relay could not hand your call to any backend 余额不足 ", 200)
	if n := testing.AllocsPerRun(20, func() { _ = m.Guess(503, text) }); n != 0 {
		t.Errorf("%v allocs per Guess", n)
	}
}

func TestExplain(t *testing.T) {
	m := Train(toyDocs(), Options{Epochs: 60, Rate: 0.5, Decay: 0.1, L2: 1e-4, MinGroups: 2})
	got := m.Explain(0, "wallet empty, please recharge the wallet", Billing, 2)
	if len(got) != 2 {
		t.Fatalf("got %d contributions, want 2: %+v", len(got), got)
	}
	if got[0].Weight < got[1].Weight {
		t.Errorf("not strongest first: %+v", got)
	}
	for _, c := range got {
		if c.Word == "please" || c.Word == "the" {
			t.Errorf("a filler word pushed towards billing: %+v", got)
		}
	}
}

func BenchmarkGuess4KiB(b *testing.B) {
	text := strings.Repeat("the upstream relay could not hand your call to any backend ", 80)[:4096]
	m := Default()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for range b.N {
		_ = m.Guess(0, text)
	}
}

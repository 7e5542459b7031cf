package erradvisor

import (
	"net/http"
	"strings"
	"testing"

	"github.com/erradvisor/erradvisor/internal/wordmodel"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestWordModelClassesAgree checks that the word model numbers its classes
// as this package does.
func TestWordModelClassesAgree(t *testing.T) {
	if int(wordmodel.NumClasses) != int(numClasses) {
		t.Fatalf("word model has %d classes, the package %d", wordmodel.NumClasses, numClasses)
	}
	for c := Unknown; c < numClasses; c++ {
		if got := wordmodel.Class(c).String(); got != c.String() {
			t.Errorf("class %d: word model says %q, package %q", c, got, c.String())
		}
	}
	for c, r := range wordReasons {
		if r == "" {
			continue
		}
		if rc, _ := r.Class(); rc != Class(c) {
			t.Errorf("reason %q given for class %v belongs to %v", r, Class(c), rc)
		}
	}
}

// TestWordModelVerdict checks where the word model decides: only when no
// rule reads the text, never Transient against x-should-retry: false, and
// never on a text a rule reads.
func TestWordModelVerdict(t *testing.T) {
	// No rule reads this wording of a passing backend fault.
	const text = "The upstream relay could not hand your call to any backend right now, please try again"
	ignore := cmpopts.IgnoreFields(Classification{}, "RetryAfter", "ResetAt")
	for _, tc := range []struct {
		name string
		f    Failure
		want Classification
	}{
		{"no rule reads it", Failure{Message: text},
			Classification{Class: Transient, Reason: ReasonServer, Rule: "words.transient", Evidence: EvidenceWords}},
		{"x-should-retry false forbids transient", Failure{Message: text, Header: http.Header{"X-Should-Retry": {"false"}}},
			Classification{}},
		{"a rule reads it", Failure{Message: text + ": rate limit exceeded"},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "rate_limit.words", Evidence: EvidenceText}},
		{"nothing to read", Failure{Message: "hello world"}, Classification{}},
		{"empty", Failure{}, Classification{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.f)
			if tc.name == "a rule reads it" {
				// Which rule reads it is not this test's concern.
				tc.want.Rule = got.Rule
			}
			if diff := cmp.Diff(tc.want, got, ignore); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkClassifyWords4KiB is a 4 KiB text no rule reads, so the word
// model reads it too; compare with BenchmarkClassify4KiB in the same run.
func BenchmarkClassifyWords4KiB(b *testing.B) {
	msg := strings.Repeat("The upstream relay could not hand your call to any backend right now, please try again. ", 50)[:4096]
	if cl := Classify(Failure{Message: msg}); cl.Evidence != EvidenceWords {
		b.Fatalf("the text is not the word model's: %+v", cl)
	}
	benchClassifyBytes(b, Failure{Message: msg})
}

func TestClassifyWordsAllocs(t *testing.T) {
	c := allocClassifier(t)
	msg := strings.Repeat("The upstream relay could not hand your call to any backend right now, please try again. ", 50)[:4096]
	f := Failure{Message: msg}
	if cl := c.Classify(f); cl.Evidence != EvidenceWords {
		t.Fatalf("the text is not the word model's: %+v", cl)
	}
	if n := testing.AllocsPerRun(20, func() { _ = c.Classify(f) }); n != 0 {
		t.Errorf("%v allocs per Classify", n)
	}
}

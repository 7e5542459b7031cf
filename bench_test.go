package erradvisor

import (
	"errors"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor/internal/match"
)

// baselinePatterns is an ordered table of case-insensitive regular
// expressions, the way regex-table classifiers are commonly written: each
// pattern is tried in turn against the whole message and the first match
// decides. BenchmarkClassifyRegexpBaseline runs the same fixtures through it
// so that BenchmarkClassify has a yardstick measured in the same run.
var baselinePatterns = []struct {
	re    string
	class Class
}{
	{`request was aborted|operation was aborted|user aborted`, Canceled},
	{`context canceled`, Canceled},
	{`request too large`, Overflow},
	{`tokens in the prompt cannot exceed`, Overflow},
	{`string[ _]above[ _]max[ _]length|string too long`, Permanent},
	{`max[ _]tokens must be less than or equal`, Permanent},
	{`per[ _-]?day|\btpd\b|daily (quota|limit)`, Quota},
	{`usage[ _]limit`, Quota},
	{`hit your (session |weekly )?limit`, Quota},
	{`5[ -]hour limit|weekly limit|session limit`, Quota},
	{`exhausted your capacity`, Quota},
	{`limits? will reset`, Quota},
	{`budget has been exceeded|exceeded budget|crossed budget|out of budget`, Quota},
	{`billing hard limit|spending limit|maximum billing`, Quota},
	{`is suspended|has been suspended`, Quota},
	{`insufficient[ _]quota`, Quota},
	{`exceeded (your )?current quota`, Quota},
	{`free (allocated )?quota`, Quota},
	{`premium request`, Quota},
	{`insufficient (balance|credits)`, Billing},
	{`credit balance is too low`, Billing},
	{`requires more credits|not enough credits|out of credits`, Billing},
	{`payment required|arrearage`, Billing},
	{`overloaded`, Transient},
	{`high (demand|traffic)`, Transient},
	{`capacity exceeded`, Transient},
	{`server busy|llm busy|no slots available`, Transient},
	{`service ?unavailable`, Transient},
	{`not ready to serve`, Transient},
	{`temporarily unavailable`, Transient},
	{`rate[ _-]?limit`, Transient},
	{`too many requests`, Transient},
	{`too many tokens`, Transient},
	{`throttl`, Transient},
	{`tokens per min`, Transient},
	{`per[ _-]?minute`, Transient},
	{`resource[ _]exhausted|resource has been exhausted`, Transient},
	{`quota exceeded for`, Transient},
	{`no deployments available`, Transient},
	{`prompt is too long`, Overflow},
	{`context[ _]length[ _]exceeded`, Overflow},
	{`maximum context length`, Overflow},
	{`context window`, Overflow},
	{`exceeds? (the )?context`, Overflow},
	{`available context size`, Overflow},
	{`input is too long`, Overflow},
	{`input token count`, Overflow},
	{`prompt token count`, Overflow},
	{`exceeds the maximum number of tokens`, Overflow},
	{`model token limit`, Overflow},
	{`range of input length`, Overflow},
	{`maximum model length`, Overflow},
	{`greater than the context length`, Overflow},
	{`n_keep`, Overflow},
	{`reduce the length of the messages`, Overflow},
	{`max_tokens must be at least 1, got -\d`, Overflow},
	{`invalid[ _-]?(x-)?api[ _-]?key|incorrect api key|api key not valid`, Permanent},
	{`authentication[ _]error|authentication fail`, Permanent},
	{`unauthorized|no auth credentials|invalid subscription key`, Permanent},
	{`permission[ _]denied|permission[ _]error|does not have permission`, Permanent},
	{`access ?denied|forbidden`, Permanent},
	{`model[ _]not[ _]found|does not exist|no such model|unknown model`, Permanent},
	{`no endpoints found|deploymentnotfound`, Permanent},
	{`content[ _]filter|content (management )?policy|safety system`, Permanent},
	{`does not support tools|extra inputs are not permitted`, Permanent},
	{`stream disconnected|stream closed before|stream ended`, Transient},
	{`without sending any chunks|incomplete chunked read`, Transient},
	{`error decoding response body`, Transient},
	{`stream error`, Transient},
	{`timed out|timeout|deadline exceeded|etimedout`, Transient},
	{`gateway time-?out`, Transient},
	{`connection reset|econnreset|connection refused|econnrefused`, Transient},
	{`broken pipe|epipe|socket hang up|fetch failed`, Transient},
	{`connection error|connection aborted|remote end closed`, Transient},
	{`no such host|enotfound|getaddrinfo`, Transient},
	{`tls|ssl|goaway|unexpected eof`, Transient},
	{`internal server error|server error|bad gateway`, Transient},
	{`upstream connect error`, Transient},
	{`\b(429|500|502|503|504|529)\b`, Transient},
	{`\b(401|403)\b`, Permanent},
}

func compileBaseline(tb testing.TB) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(baselinePatterns))
	for i, p := range baselinePatterns {
		out[i] = regexp.MustCompile("(?i)" + p.re)
	}
	return out
}

func baselineClassify(res []*regexp.Regexp, msg string) Class {
	for i, re := range res {
		if re.MatchString(msg) {
			return baselinePatterns[i].class
		}
	}
	return Unknown
}

func fixtureFailures(b *testing.B) []Failure {
	fx := loadFixtures(b)
	out := make([]Failure, len(fx))
	for i, f := range fx {
		out[i] = f.failure()
	}
	return out
}

// BenchmarkClassify classifies every fixture once per iteration.
func BenchmarkClassify(b *testing.B) {
	fs := fixtureFailures(b)
	if _, err := defaultClassifier(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for i := range fs {
			_ = Classify(fs[i])
		}
	}
}

// BenchmarkClassifyRegexpBaseline runs the same fixtures through the ordered
// regexp table.
func BenchmarkClassifyRegexpBaseline(b *testing.B) {
	fs := fixtureFailures(b)
	res := compileBaseline(b)
	if len(res) < 80 {
		b.Fatalf("baseline has %d patterns, want about 80", len(res))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for i := range fs {
			_ = baselineClassify(res, fs[i].Message)
		}
	}
}

// BenchmarkClassify4KiB is one message of 4 KiB: the allocation bound holds
// for ordinary bodies.
func BenchmarkClassify4KiB(b *testing.B) {
	msg := strings.Repeat(`{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM). Please try again in 20s."}} `, 40)[:4096]
	benchClassifyBytes(b, Failure{Provider: "openai", Status: 429, Message: msg})
}

// benchClassifyBytes classifies f in a loop, reporting throughput over its
// message.
func benchClassifyBytes(b *testing.B, f Failure) {
	b.SetBytes(int64(len(f.Message)))
	b.ReportAllocs()
	for range b.N {
		_ = Classify(f)
	}
}

// BenchmarkClassify1MiBHTML is a gateway's 1 MiB HTML error page: the scan is
// linear in the body, reported as MB/s.
func BenchmarkClassify1MiBHTML(b *testing.B) {
	benchClassifyBytes(b, Failure{Status: 502, Message: htmlPage(1 << 20)})
}

// BenchmarkClassify64KiBHTML is the same page at 1/16 the size, for the
// linearity ratio.
func BenchmarkClassify64KiBHTML(b *testing.B) {
	benchClassifyBytes(b, Failure{Status: 502, Message: htmlPage(64 << 10)})
}

func htmlPage(n int) string {
	var sb strings.Builder
	sb.WriteString("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>")
	row := `<div class="cf-error-details"><p>The web server reported a bad gateway error. Please try again in a few minutes.</p></div>` + "\n"
	for sb.Len()+len(row)+len("</body></html>") < n {
		sb.WriteString(row)
	}
	sb.WriteString("</body></html>")
	return sb.String()
}

// namedZone matches an IANA zone name in parentheses, as in "resets 3pm
// (Europe/Berlin)".
var namedZone = regexp.MustCompile(`\([A-Za-z]+/[A-Za-z0-9_+/-]+\)`)

// allocClassifier returns the default classifier for an allocation test,
// or skips the test where allocations are not measured.
func allocClassifier(t *testing.T) *Classifier {
	t.Helper()
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are measured without -race")
	}
	c, err := defaultClassifier()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClassifyAllocs(t *testing.T) {
	c := allocClassifier(t)
	for _, fx := range loadFixtures(t) {
		if len(fx.Message) > 4096 {
			continue
		}
		f := fx.failure()
		if namedZone.MatchString(f.Message) {
			// Loading a named time zone allocates; it happens only when
			// the text names one and At is set.
			f.At = time.Time{}
		}
		if n := testing.AllocsPerRun(20, func() { _ = c.Classify(f) }); n != 0 {
			t.Errorf("%s: %v allocs per Classify", fx.Name, n)
		}
	}
}

// TestClassifyAllocsTwoStreams checks texts of 2 to 4 KiB with line breaks,
// which the scan reads as two streams: fixtures joined line by line.
func TestClassifyAllocsTwoStreams(t *testing.T) {
	c := allocClassifier(t)
	var texts []string
	var sb strings.Builder
	for _, fx := range loadFixtures(t) {
		if namedZone.MatchString(fx.Message) || len(fx.Message) > 1024 {
			continue
		}
		sb.WriteString(fx.Message)
		sb.WriteByte('\n')
		if sb.Len() >= 3072 {
			texts = append(texts, sb.String())
			sb.Reset()
		}
	}
	if len(texts) < 50 {
		t.Fatalf("only %d joined texts", len(texts))
	}
	for i, s := range texts {
		f := Failure{Status: 500, Message: s}
		if n := testing.AllocsPerRun(5, func() { _ = c.Classify(f) }); n != 0 {
			t.Errorf("joined text %d (%d bytes): %v allocs per Classify", i, len(s), n)
		}
	}
}

// TestClassifyErrorAllocs checks the Go error chain path allocates nothing
// beyond what the caller's error already holds.
func TestClassifyErrorAllocs(t *testing.T) {
	c := allocClassifier(t)
	for _, e := range []error{
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
		&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("weird")},
	} {
		f := Failure{Status: 0, Message: "x", Err: e}
		if n := testing.AllocsPerRun(20, func() { _ = c.Classify(f) }); n != 0 {
			t.Errorf("%v: %v allocs per Classify", e, n)
		}
	}
}

// ceilingDFA is the least an automaton scan can do: a 256-entry byte-class
// table and a small transition table, one look-up of each per byte. It
// finds one fixed word (lower-case ASCII, case folded by the class table),
// compiled the way a KMP automaton is. Benchmarks run it over the same
// inputs as Classify, as the practical ceiling of any automaton scan.
type ceilingDFA struct {
	class  [256]uint8
	nclass int
	delta  []uint8
	accept uint8
}

func newCeilingDFA(word string) *ceilingDFA {
	d := &ceilingDFA{}
	for i := 0; i < len(word); i++ {
		if d.class[word[i]] == 0 {
			d.nclass++
			d.class[word[i]] = uint8(d.nclass)
		}
	}
	d.nclass++
	for b := 'A'; b <= 'Z'; b++ {
		d.class[b] = d.class[b+'a'-'A']
	}
	n := len(word) + 1
	d.delta = make([]uint8, n*d.nclass)
	// KMP: state s has matched word[:s]; x is the state of the longest
	// proper border.
	x := 0
	for s := 0; s < n; s++ {
		for c := 0; c < d.nclass; c++ {
			if s < len(word) && int(d.class[word[s]]) == c {
				d.delta[s*d.nclass+c] = uint8(s + 1)
			} else if s > 0 {
				d.delta[s*d.nclass+c] = d.delta[x*d.nclass+c]
			}
		}
		if s > 0 && s < len(word) {
			x = int(d.delta[x*d.nclass+int(d.class[word[s]])])
		}
	}
	d.accept = uint8(len(word))
	return d
}

// count scans text once and returns how often the word ends in it.
func (d *ceilingDFA) count(text string) int {
	s, n, nc := 0, 0, d.nclass
	for i := 0; i < len(text); i++ {
		s = int(d.delta[s*nc+int(d.class[text[i]])])
		if uint8(s) == d.accept {
			n++
		}
	}
	return n
}

func TestCeilingDFA(t *testing.T) {
	d := newCeilingDFA("abab")
	for _, tt := range []struct {
		text string
		want int
	}{{"", 0}, {"abab", 1}, {"ababab", 2}, {"xxABABx", 1}, {"abaabab", 1}} {
		if got := d.count(tt.text); got != tt.want {
			t.Errorf("count(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// BenchmarkDFACeiling runs the ceiling DFA over the fixtures' messages.
func BenchmarkDFACeiling(b *testing.B) {
	fs := fixtureFailures(b)
	d := newCeilingDFA("bad gateway")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range fs {
			_ = d.count(fs[j].Message)
		}
	}
}

// BenchmarkDFACeiling1MiBHTML runs the ceiling DFA over the 1 MiB page of
// BenchmarkClassify1MiBHTML.
func BenchmarkDFACeiling1MiBHTML(b *testing.B) {
	page := htmlPage(1 << 20)
	d := newCeilingDFA("bad gateway")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = d.count(page)
	}
}

// BenchmarkClassifyVsCeiling1MiB times Classify and the ceiling DFA on the
// same 1 MiB page, alternating, and reports ceiling time over Classify time
// ("x-of-ceiling": 1.0 means as fast as the ceiling).
func BenchmarkClassifyVsCeiling1MiB(b *testing.B) {
	page := htmlPage(1 << 20)
	f := Failure{Status: 502, Message: page}
	d := newCeilingDFA("bad gateway")
	if _, err := defaultClassifier(); err != nil {
		b.Fatal(err)
	}
	var tc, td time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		_ = Classify(f)
		t1 := time.Now()
		_ = d.count(page)
		td += time.Since(t1)
		tc += t1.Sub(t0)
	}
	if tc > 0 {
		b.ReportMetric(float64(td)/float64(tc), "x-of-ceiling")
	}
}

// TestTwoStreamBounds checks that the default rules and the anchors fit the
// bounds under which the scan reads a long text as two streams, so that
// BenchmarkClassify1MiBHTML measures that path.
func TestTwoStreamBounds(t *testing.T) {
	c, err := defaultClassifier()
	if err != nil {
		t.Fatal(err)
	}
	if n := c.m.NumPhrases(); n > match.TwoStreamPhrases {
		t.Errorf("%d phrases, more than the %d of the two-stream scan", n, match.TwoStreamPhrases)
	}
	if numAnchors > match.TwoStreamAnchors {
		t.Errorf("%d anchors, more than the %d of the two-stream scan", numAnchors, match.TwoStreamAnchors)
	}
}

// TestDefaultPhrasesFitOnStack checks that the default rules' phrase hits fit
// the stack array Classify keeps for them, with room to grow: past it,
// every Classify allocates.
func TestDefaultPhrasesFitOnStack(t *testing.T) {
	c, err := defaultClassifier()
	if err != nil {
		t.Fatal(err)
	}
	n := c.m.NumPhrases()
	if limit := hitsOnStack * 64; n > limit*9/10 {
		t.Errorf("the default rules have %d phrases, over 90%% of the %d that fit on the stack: raise hitsOnStack", n, limit)
	}
	t.Logf("%d phrases, %d fit on the stack", n, hitsOnStack*64)
}

package match

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzNormalizePhrase checks the normaliser: idempotent, trimmed, single
// spaces, lower-case ASCII, and never longer than its input.
func FuzzNormalizePhrase(f *testing.F) {
	for _, s := range []string{"", " ", "Rate_Limit-Error", "  a \t\n b  ", "超出\u3000上下文", "\xff\xfe", "A-_-B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		n := Normalize(p)
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", p, n, again)
		}
		if len(n) > len(p) {
			t.Fatalf("grew: %q -> %q", p, n)
		}
		if strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("spaces left: %q", n)
		}
		if strings.ContainsAny(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-\t\n\r\f\v") {
			t.Fatalf("not normalised: %q", n)
		}
	})
}

// oracleText is the text as the matcher reads it, built the plain way:
// identifiers replaced by a space, stack-frame lines after a line break
// dropped, bytes normalised, runs of spaces joined and leading spaces
// dropped.
func oracleText(text string) string {
	var b strings.Builder
	last := byte(' ')
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			if last != ' ' {
				b.WriteByte(' ')
				last = ' '
			}
			i = frameEnd(text, i+1) - 1
			continue
		}
		if end := identifierEnd(text, i); end > i {
			if last != ' ' {
				b.WriteByte(' ')
				last = ' '
			}
			i = end - 1
			continue
		}
		c := normByte[text[i]]
		if c == ' ' && last == ' ' {
			continue
		}
		b.WriteByte(c)
		last = c
	}
	return b.String()
}

// FuzzMatcherOracle checks the automaton against strings.Contains on the
// normalised text: a phrase is found exactly when the normalised text
// contains it. Phrases come NUL-separated.
func FuzzMatcherOracle(f *testing.F) {
	f.Add("rate limit\x00limit\x00quota exceeded\x00a", "Rate_Limit exceeded; QUOTA-exceeded")
	f.Add("context window\x00window", "see https://x.io/context-window then context\n window")
	f.Add("abab\x00bab\x00b", "ababab /path/abab b")
	f.Add("额度\x00超出", "额度已超出。")
	f.Add("tpm\x00rate limit\x00at", "x\n   at System.Net.Http.HttpMethod(x)\n  File \"a.py\", line 3, in _rate_limit\nat least tpm")
	f.Fuzz(func(t *testing.T, blob, text string) {
		var phrases []string
		for _, p := range strings.Split(blob, "\x00") {
			if n := Normalize(p); n != "" && !slices.Contains(phrases, n) && len(phrases) < 32 {
				phrases = append(phrases, n)
			}
		}
		m, err := New(phrases, nil, nil)
		if err != nil {
			return
		}
		h := Hits{Set: make([]uint64, (len(phrases)+63)/64)}
		m.Scan(text, &h, nil, nil)
		norm := oracleText(text)
		for id, p := range phrases {
			if got, want := h.Has(int32(id)), strings.Contains(norm, p); got != want {
				t.Fatalf("phrase %q in %q (read as %q): automaton %v, oracle %v", p, text, norm, got, want)
			}
		}
	})
}

// oracleClauses splits text into clauses the plain way, skipping
// identifiers first (a URL may hold a ';'), and reads each with oracleText.
func oracleClauses(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if end := identifierEnd(text, i); end > i {
			i = end - 1
			continue
		}
		if clauseEnds(text, i) {
			out = append(out, oracleText(text[start:i]))
			start = i + 1
			if text[i] == '\n' {
				start = frameEnd(text, i+1)
				i = start - 1
			}
		}
	}
	return append(out, oracleText(text[start:]))
}

// FuzzClauses checks concept combinations against a plain oracle: the
// combination holds exactly when one clause of the text, read alone,
// contains a word of each concept.
func FuzzClauses(f *testing.F) {
	f.Add("quota exceeded. all fine")
	f.Add("exceeded; quota")
	f.Add("quota\nexceeded")
	f.Add("配额已超出。")
	f.Add("x://a;quota exceed")
	f.Fuzz(func(t *testing.T, text string) {
		words := [][]string{{"quota", "配额"}, {"exceed", "超出"}}
		var phrases []string
		var concepts []Mask
		for ci, ws := range words {
			for _, w := range ws {
				phrases = append(phrases, w)
				var c Mask
				c.Add(ci)
				concepts = append(concepts, c)
			}
		}
		m, err := New(phrases, concepts, []Mask{{3, 0}})
		if err != nil {
			t.Fatal(err)
		}
		h := Hits{Set: make([]uint64, 1)}
		m.Scan(text, &h, nil, nil)
		want := false
		for _, clause := range oracleClauses(text) {
			if (strings.Contains(clause, "quota") || strings.Contains(clause, "配额")) &&
				(strings.Contains(clause, "exceed") || strings.Contains(clause, "超出")) {
				want = true
			}
		}
		if got := h.HasCombo(0); got != want {
			t.Fatalf("%q: automaton %v, oracle %v", text, got, want)
		}
	})
}

// oneStream is Scan without the two-stream path.
func oneStream(m *Matcher, text string, h *Hits, anchors []int32, firstEnd []int) {
	var cur cursor
	m.scan(&cur, text, 0, len(text), h, anchors, firstEnd)
}

// twoStreamCase compiles phrases (with concepts, a combination, anchors
// and the id markers) and scans text both ways; it returns what differs.
func twoStreamCase(phrases []string, text string) string {
	all := append(slices.Clone(phrases), IDMarkers()...)
	concepts := make([]Mask, len(all))
	for i := range phrases {
		concepts[i].Add(i % 3)
	}
	for i := len(phrases); i < len(all); i++ {
		concepts[i].Add(IDMarker)
	}
	m, err := New(all, concepts, []Mask{{3, 0}, {6, 0}})
	if err != nil {
		return ""
	}
	anchors := []int32{0, 1, int32(len(all) - 1)}
	words := (len(all) + 63) / 64
	h1, h2 := Hits{Set: make([]uint64, words)}, Hits{Set: make([]uint64, words)}
	e1, e2 := []int{-1, -1, -1}, []int{-1, -1, -1}
	// A Hits reused for a second text: what the first found stays found,
	// and an anchor found there keeps its end.
	for _, s := range []string{text, text[len(text)/4:] + "\n" + text[:len(text)/4]} {
		m.Scan(s, &h1, anchors, e1)
		oneStream(m, s, &h2, anchors, e2)
	}
	if diff := cmp.Diff(h2, h1, cmp.AllowUnexported(Hits{})); diff != "" {
		return "hits (-one stream +Scan):\n" + diff
	}
	if diff := cmp.Diff(e2, e1); diff != "" {
		return "first ends (-one stream +Scan):\n" + diff
	}
	return ""
}

// FuzzTwoStreams checks that a long text, read as two streams, gives
// exactly what one stream gives: the same phrases, combinations and first
// ends, whether the streams meet cleanly at the line break or not.
func FuzzTwoStreams(f *testing.F) {
	f.Add("rate limit\x00limit\x00quota\x00exceed", "Rate_Limit exceeded; QUOTA", "-exceeded x://a;b")
	f.Add("bad gateway\x00gateway", "<p>bad", "gateway</p> request id: abc123 quota")
	f.Add("a b\x00b", "a", " b")
	f.Add("quota\x00exceed", "quota ", "exceed.")
	f.Fuzz(func(t *testing.T, blob, a, b string) {
		var phrases []string
		for _, p := range strings.Split(blob, "\x00") {
			if n := Normalize(p); n != "" && !slices.Contains(phrases, n) && len(phrases) < 32 {
				phrases = append(phrases, n)
			}
		}
		if len(phrases) < 2 || len(a)+len(b) == 0 {
			return
		}
		var sb strings.Builder
		sb.WriteString(a)
		for sb.Len() < twoStreamMin+len(a) {
			sb.WriteString("\n")
			sb.WriteString(b)
			sb.WriteString(a)
		}
		text := sb.String()
		if d := twoStreamCase(phrases, text); d != "" {
			t.Fatalf("%q in %q: %s", phrases, text, d)
		}
	})
}

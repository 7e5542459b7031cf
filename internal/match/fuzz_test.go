package match

import (
	"slices"
	"strings"
	"testing"
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
// identifiers replaced by a space, bytes normalised, runs of spaces joined
// and leading spaces dropped.
func oracleText(text string) string {
	var b strings.Builder
	last := byte(' ')
	for i := 0; i < len(text); i++ {
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

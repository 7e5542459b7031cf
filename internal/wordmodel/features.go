// Package wordmodel is the classifier's last resort: a linear model over the
// words of a failure's text, consulted only when no rule decides.
//
// The model is multinomial logistic regression over hashed features: word
// stems, pairs of adjacent stems, Chinese, Japanese and Korean characters and
// their pairs, and the HTTP status. Its weights are trained from the
// repository's labelled fixtures by internal/tools/wordmodel and generated
// into weights.go; training is deterministic, so the generated file is a
// function of the fixtures and a test checks that it is current.
//
// Reading is bounded and allocation-free: at most [MaxText] bytes of a text
// are read, URLs and paths are skipped, and a word holding a digit (an id, a
// version, a size) is no feature unless it is a three-digit HTTP error
// status.
package wordmodel

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/erradvisor/erradvisor/internal/match"
)

// MaxText is how many bytes of a text the model reads. An error's meaning is
// stated early; the rest of a long body (an HTML page, a stack trace) only
// adds noise and time.
const MaxText = 2 << 10

// maxWord is the longest word read; a longer run of letters is an
// identifier or an encoding, not prose.
const maxWord = 30

// Feature kinds, mixed into a feature's hash so that a word, a pair and a
// status never share a feature.
const (
	kindWord   = 'w'
	kindPair   = 'p'
	kindStatus = 's'
	kindClass  = 'k' // a status class such as "5xx"
)

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func fnvByte(h uint32, b byte) uint32 { return (h ^ uint32(b)) * fnvPrime }

// fnvRune hashes r's UTF-8 bytes.
func fnvRune(h uint32, r rune) uint32 {
	var b [utf8.UTFMax]byte
	return fnvBytes(h, b[:utf8.EncodeRune(b[:], r)])
}

func fnvBytes(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = fnvByte(h, c)
	}
	return h
}

// statusFeature is the feature of a three-digit HTTP status, whether the
// failure carries it or the text writes it ("HTTP 429").
func statusFeature(digits []byte) uint32 { return fnvBytes(fnvByte(fnvOffset, kindStatus), digits) }

// pairHash is the feature of two adjacent words.
func pairHash(a, b uint32) uint32 {
	h := fnvByte(fnvOffset, kindPair)
	for _, w := range [2]uint32{a, b} {
		h = fnvByte(h, byte(w))
		h = fnvByte(h, byte(w>>8))
		h = fnvByte(h, byte(w>>16))
		h = fnvByte(h, byte(w>>24))
	}
	return h
}

// statusHashes returns the features of an HTTP status: the status itself
// and its class ("4xx"). A status outside 100 to 599 has none.
func statusHashes(status int) (exact, class uint32, ok bool) {
	if status < 100 || status > 599 {
		return 0, 0, false
	}
	d := [3]byte{byte('0' + status/100), byte('0' + status/10%10), byte('0' + status%10)}
	exact = statusFeature(d[:])
	class = fnvByte(fnvByte(fnvOffset, kindClass), d[0])
	return exact, class, true
}

// A scanner yields the features of one text in order, each with the span
// of text it was read from. Use newScanner.
type scanner struct {
	text string
	i    int
	// prev is the hash of the previous word in this clause (0 at a clause
	// start), prevAt where that word starts.
	prev   uint32
	prevAt int
	// pending is a pair feature to yield before reading on, over
	// text[pendAt:pendEnd].
	pending        uint32
	pendAt, pendTo int
	// from and to are the span of the feature last yielded (both 0 for a
	// status feature).
	from, to int
	word     [maxWord + 1]byte
	// Status features not yet yielded.
	st  [2]uint32
	nst int
	// cjkAt is where the previous CJK character starts, or -1; cjkPrev is
	// that character in simplified form.
	cjkAt   int
	cjkPrev rune
}

func newScanner(status int, text string) scanner {
	if len(text) > MaxText {
		text = text[:MaxText]
	}
	s := scanner{text: text, cjkAt: -1}
	if e, c, ok := statusHashes(status); ok {
		s.st = [2]uint32{c, e}
		s.nst = 2
	}
	return s
}

// next returns the next feature, or false at the end of the text.
func (s *scanner) next() (uint32, bool) {
	if s.nst > 0 {
		s.nst--
		s.from, s.to = 0, 0
		return s.st[s.nst], true
	}
	if s.pending != 0 {
		p := s.pending
		s.pending = 0
		s.from, s.to = s.pendAt, s.pendTo
		return p, true
	}
	for s.i < len(s.text) {
		c := s.text[s.i]
		switch {
		case isAlnum(c):
			s.cjkAt = -1
			at := s.i
			h, ok := s.readWord()
			if strings.HasPrefix(s.text[s.i:], "://") {
				// A URL's scheme: the URL is an identifier.
				s.skipToken()
				s.prev = 0
				continue
			}
			if ok {
				if s.prev != 0 {
					s.pending, s.pendAt, s.pendTo = pairHash(s.prev, h), s.prevAt, s.i
				}
				s.prev, s.prevAt = h, at
				s.from, s.to = at, s.i
				return h, true
			}
		case c < utf8.RuneSelf:
			s.i++
			s.cjkAt = -1
			switch {
			case c == ':' && strings.HasPrefix(s.text[s.i:], "//"),
				c == '/' && s.i < len(s.text) && isAlnum(s.text[s.i]) && (s.i < 2 || !isAlnum(s.text[s.i-2])):
				// A URL, or a path that starts a word.
				s.skipToken()
				s.prev = 0
			case c == '.' || c == '!' || c == '?' || c == ';' || c == '\n' || c == '|':
				s.prev = 0
			}
		default:
			at := s.i
			r, n := utf8.DecodeRuneInString(s.text[s.i:])
			s.i += n
			s.prev = 0
			if !isCJK(r) {
				s.cjkAt = -1
				continue
			}
			// A traditional character counts as its simplified form, so
			// "餘額" weighs what "余额" does.
			r = match.Simplified(r)
			h := fnvRune(fnvByte(fnvOffset, kindWord), r)
			if s.cjkAt >= 0 {
				s.pending = fnvRune(fnvRune(fnvByte(fnvOffset, kindPair), s.cjkPrev), r)
				s.pendAt, s.pendTo = s.cjkAt, s.i
			}
			s.cjkAt, s.cjkPrev = at, r
			s.from, s.to = at, s.i
			return h, true
		}
	}
	return 0, false
}

// skipToken skips to the next white space, quote or bracket: the rest of a
// URL or a path.
func (s *scanner) skipToken() {
	for s.i < len(s.text) {
		switch s.text[s.i] {
		case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', '(', ')', '[', ']', '{', '}':
			return
		}
		s.i++
	}
}

// readWord reads the run of letters and digits at s.i, split where a
// lower-case letter meets an upper-case one ("RateLimit" is two words). It
// returns the word's hash, or false when the run is no feature (it holds a
// digit and is not an HTTP error status, or it is too long).
func (s *scanner) readWord() (uint32, bool) {
	start := s.i
	digits := 0
	n := 0
	for s.i < len(s.text) {
		c := s.text[s.i]
		if !isAlnum(c) {
			break
		}
		if n > 0 && c >= 'A' && c <= 'Z' && s.text[s.i-1] >= 'a' && s.text[s.i-1] <= 'z' {
			break
		}
		if c >= '0' && c <= '9' {
			digits++
		}
		if n < len(s.word) {
			s.word[n] = match.Fold(c)
		}
		n++
		s.i++
	}
	if digits > 0 {
		// A digit glued to letters ("gpt4", "req01ab") makes an identifier
		// of the whole run; so does a letter glued on after the split.
		for s.i < len(s.text) && isAlnum(s.text[s.i]) {
			s.i++
			n = maxWord + 1
		}
		if n == 3 && digits == 3 && (s.word[0] == '4' || s.word[0] == '5') && !adjacentDigitSep(s.text, start, s.i) {
			return statusFeature(s.word[:3]), true
		}
		s.prev = 0
		return 0, false
	}
	if n > maxWord || n < 2 {
		if n > maxWord {
			s.prev = 0
		}
		return 0, false
	}
	return fnvBytes(fnvByte(fnvOffset, kindWord), stem(s.word[:n])), true
}

// adjacentDigitSep reports whether the run text[start:end] is part of a
// longer number ("1.503", "503.2", "2,503"): then it is no status.
func adjacentDigitSep(text string, start, end int) bool {
	if start >= 2 && (text[start-1] == '.' || text[start-1] == ',') && isDigit(text[start-2]) {
		return true
	}
	return end+1 < len(text) && (text[end] == '.' || text[end] == ',') && isDigit(text[end+1])
}

// stem strips a common English inflection so that "exceed", "exceeds",
// "exceeded" and "exceeding" are one feature, as are "require" and
// "required". It is deliberately crude: the model only needs the forms of
// one word to meet.
func stem(w []byte) []byte {
	for _, suf := range [...]string{"ing", "ed", "es", "s"} {
		if len(w) < len(suf)+4 || string(w[len(w)-len(suf):]) != suf {
			continue
		}
		if suf == "s" && w[len(w)-2] == 's' || suf == "ed" && w[len(w)-3] == 'e' {
			break
		}
		w = w[:len(w)-len(suf)]
		break
	}
	if len(w) >= 5 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isCJK reports whether r is a Chinese, Japanese or Korean character (not
// punctuation): each is a feature, as is each pair of adjacent ones.
func isCJK(r rune) bool {
	switch {
	case r >= 0x3040 && r <= 0x30FF: // kana
		return true
	case r >= 0x3400 && r <= 0x9FFF: // CJK ideographs
		return true
	case r >= 0xAC00 && r <= 0xD7AF: // Hangul syllables
		return true
	case r >= 0xF900 && r <= 0xFAFF:
		return true
	}
	return false
}

// AppendFeatures appends to dst the features of a failure with the given
// HTTP status (0 if none) and text, in the order they occur, repeats
// included.
func AppendFeatures(dst []uint32, status int, text string) []uint32 {
	s := newScanner(status, text)
	for {
		h, ok := s.next()
		if !ok {
			return dst
		}
		dst = append(dst, h)
	}
}

// A Word is one feature of a text with the text it was read from.
type Word struct {
	Text    string // the text read, lower-cased ("status 503" for a status)
	Feature uint32 // the feature's hash, as the model's Keys hold it
}

// Words returns the features of a failure paired with the text each was
// read from, in order: what the model read, for explanations. It allocates
// and is not meant for the hot path.
func Words(status int, text string) []Word {
	var out []Word
	s := newScanner(status, text)
	for {
		h, ok := s.next()
		if !ok {
			return out
		}
		w := Word{Feature: h, Text: strings.ToLower(s.text[s.from:s.to])}
		if s.from == s.to {
			if exact, _, _ := statusHashes(status); h == exact {
				w.Text = "status " + strconv.Itoa(status)
			} else {
				w.Text = "status " + strconv.Itoa(status/100) + "xx"
			}
		}
		out = append(out, w)
	}
}

package redact

import (
	"unicode"
	"unicode/utf8"
)

// A view is the text the detectors read: s with its URL escapes (%3D),
// JSON and string escapes (\u0070, \x3d, \/, \", \\, \n) decoded and its
// invisible characters (controls other than tab and line breaks, format
// characters, variation selectors, fillers) left out, so a secret written
// in any of these forms reads as the plain secret. Every byte of the view
// remembers where in s its source begins and ends, so a span found in the
// view maps back to the bytes of s that wrote it.
type view struct {
	text string
	// from[i] and to[i] bound the bytes of s that produced text[i]; nil
	// when text is s itself.
	from, to []int32
}

// origin maps the view span [i, j) to the span of s that produced it.
func (v *view) origin(i, j int) (int, int) {
	if v.from == nil {
		return i, j
	}
	if i >= j {
		if i >= len(v.from) {
			return v.end(), v.end()
		}
		return int(v.from[i]), int(v.from[i])
	}
	return int(v.from[i]), int(v.to[j-1])
}

// end is the length of s when the view was decoded.
func (v *view) end() int {
	if len(v.to) == 0 {
		return len(v.text)
	}
	return int(v.to[len(v.to)-1])
}

// plain reports whether s reads as itself: printable ASCII, tabs and line
// breaks only, with no escape introducer.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '%' || c == '\\' || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return false
		}
	}
	return true
}

// Ignorable reports whether r is invisible: a control character other than
// tab, line feed and carriage return; a format character (category Cf:
// zero-width characters, bidirectional controls, tags, the soft hyphen); a
// variation selector; another default-ignorable code point (Hangul fillers,
// the combining grapheme joiner, Khmer inherent vowels); or the blank
// braille pattern U+2800, which renders as a space without being one.
func Ignorable(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	}
	switch {
	case r == 0x2800, r == utf8.RuneError:
		return true
	case r < 0xa0:
		return true // C1 controls
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		(0xfff0 <= r && r <= 0xfff8) || (0xe0000 <= r && r <= 0xe0fff)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hexAt decodes the n hexadecimal digits at s[i:], or reports false.
func hexAt(s string, i, n int) (rune, bool) {
	if len(s)-i < n {
		return 0, false
	}
	var r rune
	for k := 0; k < n; k++ {
		d, ok := unhex(s[i+k])
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// unit decodes the unit of s at i: an escape, a character, or a byte of
// invalid UTF-8. It returns the bytes it reads as (nil for an invisible
// character), the rune when it is one character, and its width in s.
func unit(s string, i int, buf *[utf8.UTFMax]byte) (out []byte, w int) {
	c := s[i]
	switch c {
	case '%':
		if r, ok := hexAt(s, i+1, 2); ok {
			buf[0] = byte(r)
			return buf[:1], 3
		}
	case '\\':
		if i+1 < len(s) {
			switch s[i+1] {
			case 'u':
				if r, ok := hexAt(s, i+2, 4); ok {
					return decoded(r, buf), 6
				}
			case 'x':
				if r, ok := hexAt(s, i+2, 2); ok {
					return decoded(r, buf), 4
				}
			case '/', '"', '\'', '\\':
				buf[0] = s[i+1]
				return buf[:1], 2
			case 'n':
				buf[0] = '\n'
				return buf[:1], 2
			case 'r':
				buf[0] = '\r'
				return buf[:1], 2
			case 't':
				buf[0] = '\t'
				return buf[:1], 2
			case 'b', 'f':
				return nil, 2
			}
		}
	}
	if c < utf8.RuneSelf {
		if Ignorable(rune(c)) {
			return nil, 1
		}
		buf[0] = c
		return buf[:1], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if Ignorable(r) {
		return nil, w
	}
	return []byte(s[i : i+w]), w
}

// decoded returns the bytes an escaped code point reads as.
func decoded(r rune, buf *[utf8.UTFMax]byte) []byte {
	if Ignorable(r) && r != utf8.RuneError {
		return nil
	}
	if r < utf8.RuneSelf {
		buf[0] = byte(r)
		return buf[:1]
	}
	n := utf8.EncodeRune(buf[:], r)
	return buf[:n]
}

// newView decodes s.
func newView(s string) view {
	if plain(s) {
		return view{text: s}
	}
	text := make([]byte, 0, len(s))
	from := make([]int32, 0, len(s))
	to := make([]int32, 0, len(s))
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		out, w := unit(s, i, &buf)
		for _, b := range out {
			text = append(text, b)
			from = append(from, int32(i))
			to = append(to, int32(i+w))
		}
		if len(out) == 0 && len(to) > 0 {
			// An invisible unit joins the span of the byte before it,
			// so a secret it splits is removed with it.
			to[len(to)-1] = int32(i + w)
		}
		i += w
	}
	return view{text: string(text), from: from, to: to}
}

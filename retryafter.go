package erradvisor

import (
	"math"
	"net/http"
	"time"
)

// maxHint bounds every stated wait. Longer, negative or malformed values are
// ignored: they are more likely a parse of the wrong number than a real
// instruction, and a host must never sleep on them.
const maxHint = 400 * 24 * time.Hour

// RetryAfter returns the wait the response headers ask for: retry-after-ms,
// then retry-after (whole or fractional seconds, or an HTTP date measured
// from at), then the reset time of an exhausted OpenAI-style
// (x-ratelimit-reset-requests / -tokens) or Anthropic-style
// (anthropic-ratelimit-*-reset) limit. It returns 0 when no usable value is
// present; an HTTP date or a reset timestamp needs a non-zero at.
func RetryAfter(h http.Header, at time.Time) time.Duration {
	if len(h) == 0 {
		return 0
	}
	if v := header(h, "Retry-After-Ms", "retry-after-ms"); v != "" {
		if f, ok := parseNumber(v); ok {
			if d, ok := seconds(f / 1000); ok {
				return d
			}
		}
	}
	if v := header(h, "Retry-After", "retry-after"); v != "" {
		if f, ok := parseNumber(v); ok {
			if d, ok := seconds(f); ok {
				return d
			}
		} else if !at.IsZero() {
			if t, err := http.ParseTime(v); err == nil {
				if d := t.Sub(at); d > 0 && d <= maxHint {
					return d
				}
			}
		}
	}
	// OpenAI, Groq and others: durations such as "6m0s" for the limit that
	// is exhausted.
	for _, k := range [...][4]string{
		{"X-Ratelimit-Remaining-Requests", "x-ratelimit-remaining-requests", "X-Ratelimit-Reset-Requests", "x-ratelimit-reset-requests"},
		{"X-Ratelimit-Remaining-Tokens", "x-ratelimit-remaining-tokens", "X-Ratelimit-Reset-Tokens", "x-ratelimit-reset-tokens"},
	} {
		if header(h, k[0], k[1]) == "0" {
			if d, _, ok := parseDuration(header(h, k[2], k[3]), 0, false); ok {
				return d
			}
		}
	}
	// Anthropic: RFC 3339 reset times.
	if !at.IsZero() {
		for _, k := range [...][4]string{
			{"Anthropic-Ratelimit-Requests-Remaining", "anthropic-ratelimit-requests-remaining", "Anthropic-Ratelimit-Requests-Reset", "anthropic-ratelimit-requests-reset"},
			{"Anthropic-Ratelimit-Tokens-Remaining", "anthropic-ratelimit-tokens-remaining", "Anthropic-Ratelimit-Tokens-Reset", "anthropic-ratelimit-tokens-reset"},
			{"Anthropic-Ratelimit-Input-Tokens-Remaining", "anthropic-ratelimit-input-tokens-remaining", "Anthropic-Ratelimit-Input-Tokens-Reset", "anthropic-ratelimit-input-tokens-reset"},
			{"Anthropic-Ratelimit-Output-Tokens-Remaining", "anthropic-ratelimit-output-tokens-remaining", "Anthropic-Ratelimit-Output-Tokens-Reset", "anthropic-ratelimit-output-tokens-reset"},
		} {
			if header(h, k[0], k[1]) == "0" {
				if t, err := time.Parse(time.RFC3339, header(h, k[2], k[3])); err == nil {
					if d := t.Sub(at); d > 0 && d <= maxHint {
						return d
					}
				}
			}
		}
	}
	return 0
}

// header returns the first value of a header under its canonical key or,
// for hosts that built the map by hand, its lower-case key.
func header(h http.Header, canonical, lower string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	if v := h[lower]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// seconds converts a count of seconds to a Duration within (0, maxHint].
func seconds(f float64) (time.Duration, bool) {
	if !(f > 0) || f > maxHint.Seconds() {
		return 0, false
	}
	return time.Duration(math.Round(f * float64(time.Second))), true
}

// parseNumber parses a whole or fractional decimal number, surrounded by
// optional spaces, without allocating.
func parseNumber(s string) (float64, bool) {
	i := skipSpace(s, 0)
	f, n := readNumber(s[i:])
	if n == 0 {
		return 0, false
	}
	i = skipSpace(s, i+n)
	return f, i == len(s)
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// readNumber reads digits with an optional fraction at the start of s and
// returns the value and the bytes read (0 when s does not start with a
// digit). Very long digit runs saturate rather than overflow.
func readNumber(s string) (float64, int) {
	i, v := 0, 0.0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		v = v*10 + float64(s[i]-'0')
		i++
	}
	if i == 0 {
		return 0, 0
	}
	if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
		scale := 0.1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			v += float64(s[i]-'0') * scale
			scale /= 10
			i++
		}
	}
	if math.IsInf(v, 0) {
		v = math.MaxFloat64
	}
	return v, i
}

// unitSeconds returns the length in seconds of a lower-case unit word.
func unitSeconds(w string) float64 {
	switch w {
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		return 0.001
	case "s", "sec", "secs", "second", "seconds":
		return 1
	case "m", "min", "mins", "minute", "minutes":
		return 60
	case "h", "hr", "hrs", "hour", "hours":
		return 3600
	case "d", "day", "days":
		return 86400
	case "w", "week", "weeks":
		return 7 * 86400
	}
	return 0
}

// parseDuration reads a stated duration at the start of s: "20s", "2.5s",
// "8h44m7s", "~81 min", "16 days", "4 hours 26 minutes", "1,500ms" is not
// accepted. With bareSeconds, a number without a unit counts as seconds. It
// skips leading spaces, '~', quotes and colons. It returns the duration, the
// bytes consumed and whether a duration was read.
func parseDuration(s string, i int, bareSeconds bool) (time.Duration, int, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '~' || s[i] == '"' || s[i] == ':' || s[i] == '=' || s[i] == '\'') {
		i++
	}
	total, pairs := 0.0, 0
	for pairs < 6 {
		j := i
		if pairs > 0 { // separators between pairs: spaces, commas, "and"
			for j < len(s) && (s[j] == ' ' || s[j] == ',') {
				j++
			}
			if j+4 <= len(s) && lowerASCII(s[j:j+3]) == "and" && s[j+3] == ' ' {
				j += 4
			}
		}
		v, n := readNumber(s[j:])
		if n == 0 {
			break
		}
		j += n
		k := j
		for k < len(s) && s[k] == ' ' {
			k++
		}
		w := k
		var word [16]byte
		wl := 0
		for w < len(s) && (s[w]|0x20) >= 'a' && (s[w]|0x20) <= 'z' {
			if wl < len(word) {
				word[wl] = s[w] | 0x20
			}
			wl++
			w++
		}
		unit := 0.0
		if wl <= len(word) {
			unit = unitSeconds(string(word[:wl]))
		}
		if unit == 0 {
			if pairs == 0 && bareSeconds && wl == 0 && !partOfDateOrTime(s, j) {
				total, i, pairs = v, j, 1
			}
			break
		}
		total += v * unit
		i, pairs = w, pairs+1
	}
	if pairs == 0 {
		return 0, i, false
	}
	d, ok := seconds(total)
	return d, i, ok
}

// partOfDateOrTime reports whether the number that ends just before s[j]
// continues as a date, a clock time or a decimal ("2026-01-01", "12:30",
// "1/2", "1,500"): such a number is not a count of seconds.
func partOfDateOrTime(s string, j int) bool {
	if j >= len(s) {
		return false
	}
	switch s[j] {
	case '-', ':', '/':
		return j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9'
	case ',', '.':
		return j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9'
	}
	return false
}

// lowerASCII lower-cases a short ASCII string; used on 3-byte slices only,
// where the compiler keeps the result on the stack.
func lowerASCII(s string) string {
	var b [8]byte
	if len(s) > len(b) {
		return s
	}
	for i := 0; i < len(s); i++ {
		b[i] = asciiLower(s[i])
	}
	return string(b[:len(s)])
}

// parseEpoch reads a Unix time in seconds (10 digits) or milliseconds (13
// digits) at s[i:], after optional quotes, colons and spaces.
func parseEpoch(s string, i int) (time.Time, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == ':' || s[i] == '=') {
		i++
	}
	j, v := i, int64(0)
	for j < len(s) && s[j] >= '0' && s[j] <= '9' && j-i < 14 {
		v = v*10 + int64(s[j]-'0')
		j++
	}
	if j < len(s) && s[j] >= '0' && s[j] <= '9' {
		return time.Time{}, false
	}
	switch j - i {
	case 10:
		return time.Unix(v, 0).UTC(), true
	case 13:
		return time.UnixMilli(v).UTC(), true
	}
	return time.Time{}, false
}

// parseTimestamp reads an RFC 3339 time at s[i:], after optional quotes and
// spaces.
func parseTimestamp(s string, i int) (time.Time, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == ':') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '"' && s[j] != ',' && s[j] != ')' && j-i < 40 {
		j++
	}
	for j > i && (s[j-1] == '.') {
		j--
	}
	if j-i < 20 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s[i:j])
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

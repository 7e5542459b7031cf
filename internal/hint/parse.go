package hint

import (
	"math"
	"time"
)

// MaxWait bounds every stated wait. Longer, negative or malformed values are
// ignored: they are more likely a parse of the wrong number than a real
// instruction, and a host must never sleep on them.
const MaxWait = 400 * 24 * time.Hour

// Seconds converts a count of seconds to a Duration within (0, MaxWait].
func Seconds(f float64) (time.Duration, bool) {
	if !(f > 0) || f > MaxWait.Seconds() {
		return 0, false
	}
	return time.Duration(math.Round(f * float64(time.Second))), true
}

// ParseNumber parses a whole or fractional decimal number, surrounded by
// optional spaces, without allocating.
func ParseNumber(s string) (float64, bool) {
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

// ParseDuration reads a stated duration at the start of s: "20s", "2.5s",
// "8h44m7s", "~81 min", "16 days", "4 hours 26 minutes", "1,500ms" is not
// accepted. With bareSeconds, a number without a unit counts as seconds. It
// skips leading spaces, '~', quotes and colons. It returns the duration, the
// bytes consumed and whether a duration was read.
func ParseDuration(s string, i int, bareSeconds bool) (time.Duration, int, bool) {
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
	d, ok := Seconds(total)
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
	for j < len(s) && j-i < 40 && !timestampEnd(s[j]) {
		j++
	}
	for j > i && (s[j-1] == '.') {
		j--
	}
	// Only a text shaped like a date and a time is parsed: a failed
	// time.Parse allocates its error.
	if j-i < 20 || !isDigit(s[i]) || s[i+4] != '-' || s[i+7] != '-' || s[i+10] != 'T' && s[i+10] != 't' {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s[i:j])
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// resetSlack is how far before the observation time a stated reset may lie
// and still be believed: a limit that "resets at 09:00" read at 09:00:30
// names a moment that has just passed, not one a year away. Anything older
// is a stale or misread time.
const resetSlack = 24 * time.Hour

// parseResetAt reads a reset or retry moment written at s[i:], after optional
// quotes, colons, spaces and a leading "on" or "at":
//
//   - a Unix time or an RFC 3339 time ("2026-06-10T09:05:49Z");
//   - a date and time without a zone ("2026-06-10 09:05:49");
//   - a clock time ("4pm", "11:30am", "09:20:40 AM", "21:05");
//   - a month and day with a clock time ("Jan 30, 11:30am", "January 30 at
//     11:30 AM", "Jul 5th, 2026 8:19 PM").
//
// A clock or date may be followed by a zone: an IANA name in parentheses
// ("(Asia/Kuala_Lumpur)", "(UTC)") or a bare "UTC" or "GMT". Without a zone
// the time is read in at's location. A clock time without a date is the next
// such moment at or after at, and a month and day without a year the next
// such date. Every form but the first needs at: when at is zero only a Unix
// or RFC 3339 time is returned. When at is set, a moment more than a day
// before at or more than MaxWait after it is refused. An unknown zone name
// gives no time rather than a wrong one. When at is set the moment comes
// back in at's location, so that the same text read at the same time gives
// an identical value.
//
// Zones are loaded with time.LoadLocation, which reads the zone database and
// allocates; it runs only when a zone is named and at is set.
func parseResetAt(s string, i int, at time.Time) (time.Time, bool) {
	i = skipSeps(s, i)
	for _, w := range [...]string{"on ", "at "} {
		if hasWordAt(s, i, w) {
			i = skipSpace(s, i+len(w))
		}
	}
	t, ok := parseEpoch(s, i)
	if !ok {
		t, ok = parseTimestamp(s, i)
	}
	if ok {
		if at.IsZero() {
			return t, true
		}
		if !nearAt(t, at) {
			return time.Time{}, false
		}
		return t.In(at.Location()), true
	}
	if at.IsZero() || i >= len(s) {
		return time.Time{}, false
	}
	var (
		year, day int
		month     time.Month
		c         clock
		n         int
	)
	switch {
	case isDigit(s[i]):
		if year, month, day, n = isoDate(s, i); n > 0 {
			j := i + n
			if j < len(s) && (s[j] == ' ' || s[j] == 'T') {
				c, n = readClock(s, j+1)
			} else {
				n = 0
			}
			if n == 0 {
				return time.Time{}, false
			}
			i = j + 1 + n
		} else if c, n = readClock(s, i); n > 0 {
			i += n
		} else {
			return time.Time{}, false
		}
	default:
		if month, day, year, n = monthDay(s, i); n == 0 {
			return time.Time{}, false
		}
		i += n
		if c, n = readClock(s, i); n == 0 {
			return time.Time{}, false
		}
		i += n
	}
	loc, ok := readZone(s, i, at.Location())
	if !ok {
		return time.Time{}, false
	}
	return resolveReset(at, loc, year, month, day, c)
}

// clock is a time of day.
type clock struct{ h, m, s int }

// resolveReset turns the parts read into a moment: a full date as given, a
// month and day in the next year where it is at or after at, a clock time on
// the next day where it is at or after at.
func resolveReset(at time.Time, loc *time.Location, year int, month time.Month, day int, c clock) (time.Time, bool) {
	local := at.In(loc)
	var t time.Time
	switch {
	case year != 0:
		t = time.Date(year, month, day, c.h, c.m, c.s, 0, loc)
		if t.Day() != day || t.Month() != month {
			return time.Time{}, false // "Feb 30"
		}
	case month != 0:
		valid := false
		for y := local.Year(); y <= local.Year()+1 && !valid; y++ {
			t = time.Date(y, month, day, c.h, c.m, c.s, 0, loc)
			valid = t.Day() == day && t.Month() == month && !t.Before(at)
		}
		if !valid {
			return time.Time{}, false
		}
	default:
		t = time.Date(local.Year(), local.Month(), local.Day(), c.h, c.m, c.s, 0, loc)
		if t.Before(at) {
			t = time.Date(local.Year(), local.Month(), local.Day()+1, c.h, c.m, c.s, 0, loc)
		}
	}
	if !nearAt(t, at) {
		return time.Time{}, false
	}
	return t.In(at.Location()), true
}

// nearAt reports whether t lies within [at-resetSlack, at+MaxWait].
func nearAt(t, at time.Time) bool {
	d := t.Sub(at)
	return d >= -resetSlack && d <= MaxWait
}

// skipSeps skips spaces, quotes, colons and equals signs.
func skipSeps(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == '\'' || s[i] == ':' || s[i] == '=') {
		i++
	}
	return i
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// timestampEnd reports whether b ends an RFC 3339 time written in a text:
// a space, a quote, a bracket or a separator.
func timestampEnd(b byte) bool {
	switch b {
	case ' ', '"', '\'', ',', ')', ']', '}', ';', '\n', '\r', '\t':
		return true
	}
	return false
}
func isLetter(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }

// hasWordAt reports whether s[i:] starts with w (lower-case, ending in a
// space), compared case-insensitively.
func hasWordAt(s string, i int, w string) bool {
	if i+len(w) > len(s) {
		return false
	}
	for k := 0; k < len(w); k++ {
		if asciiLower(s[i+k]) != w[k] {
			return false
		}
	}
	return true
}

// digits reads at most limit digits at s[i:] and returns their value and
// count.
func digits(s string, i, limit int) (int, int) {
	v, n := 0, 0
	for i+n < len(s) && n < limit && isDigit(s[i+n]) {
		v = v*10 + int(s[i+n]-'0')
		n++
	}
	return v, n
}

// isoDate reads "YYYY-MM-DD" at s[i:] and returns its parts and length, or
// n == 0.
func isoDate(s string, i int) (year int, month time.Month, day, n int) {
	y, ny := digits(s, i, 4)
	if ny != 4 || i+10 > len(s) || s[i+4] != '-' || s[i+7] != '-' {
		return 0, 0, 0, 0
	}
	m, nm := digits(s, i+5, 2)
	d, nd := digits(s, i+8, 2)
	if nm != 2 || nd != 2 || m < 1 || m > 12 || d < 1 || d > 31 || y < 1970 {
		return 0, 0, 0, 0
	}
	if i+10 < len(s) && isDigit(s[i+10]) {
		return 0, 0, 0, 0
	}
	return y, time.Month(m), d, 10
}

// readClock reads a time of day at s[i:]: "4pm", "11:30am", "11:30 AM",
// "09:20:40 AM", "21:05", "21:05:07". Without am or pm, minutes are
// required. It returns the clock and the bytes read, or n == 0.
func readClock(s string, i int) (clock, int) {
	start := i
	h, nh := digits(s, i, 2)
	if nh == 0 {
		return clock{}, 0
	}
	i += nh
	c := clock{h: h}
	hasMin := false
	if i+2 < len(s) && s[i] == ':' && isDigit(s[i+1]) {
		m, nm := digits(s, i+1, 2)
		if nm != 2 || m > 59 {
			return clock{}, 0
		}
		c.m, hasMin, i = m, true, i+3
		if i+2 < len(s) && s[i] == ':' && isDigit(s[i+1]) {
			sec, ns := digits(s, i+1, 2)
			if ns != 2 || sec > 59 {
				return clock{}, 0
			}
			c.s, i = sec, i+3
			// A fraction of a second is read and dropped.
			if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
				i++
				for i < len(s) && isDigit(s[i]) {
					i++
				}
			}
		}
	}
	if i < len(s) && isDigit(s[i]) {
		return clock{}, 0
	}
	// am / pm, right after the digits or after one space.
	j := i
	if j < len(s) && s[j] == ' ' {
		j++
	}
	if j+1 < len(s) && (s[j]|0x20 == 'a' || s[j]|0x20 == 'p') && s[j+1]|0x20 == 'm' && (j+2 == len(s) || !isLetter(s[j+2])) {
		if c.h < 1 || c.h > 12 {
			return clock{}, 0
		}
		if c.h == 12 {
			c.h = 0
		}
		if s[j]|0x20 == 'p' {
			c.h += 12
		}
		return c, j + 2 - start
	}
	zulu := i < len(s) && s[i] == 'Z' && (i+1 == len(s) || !isLetter(s[i+1]))
	if !hasMin || c.h > 23 || i < len(s) && isLetter(s[i]) && !zulu {
		return clock{}, 0
	}
	return c, i - start
}

// monthNames are the English month names; a month is written as its first
// three letters or more of its name.
var monthNames = [...]string{"january", "february", "march", "april", "may", "june", "july",
	"august", "september", "october", "november", "december"}

// monthDay reads a month and day at s[i:] ("Jan 30", "January 30", "Jul
// 5th", "Sept 3"), an optional year ("Jul 5th, 2026") and the separator
// before a clock time (", ", " at ", ", at "). It returns the parts and the
// bytes read, or n == 0.
func monthDay(s string, i int) (month time.Month, day, year, n int) {
	start := i
	w := i
	for w < len(s) && isLetter(s[w]) {
		w++
	}
	if w-i < 3 || w-i > 9 {
		return 0, 0, 0, 0
	}
	for k, name := range monthNames {
		if w-i <= len(name) && hasWordAt(s, i, name[:w-i]) {
			month = time.Month(k + 1)
			break
		}
	}
	if month == 0 {
		return 0, 0, 0, 0
	}
	i = w
	if i < len(s) && s[i] == '.' { // "Jan."
		i++
	}
	if i >= len(s) || s[i] != ' ' {
		return 0, 0, 0, 0
	}
	i++
	d, nd := digits(s, i, 2)
	if nd == 0 || d < 1 || d > 31 {
		return 0, 0, 0, 0
	}
	i += nd
	for _, suf := range [...]string{"st", "nd", "rd", "th"} {
		if i+2 <= len(s) && hasWordAt(s, i, suf) && (i+2 == len(s) || !isLetter(s[i+2])) {
			i += 2
			break
		}
	}
	if i < len(s) && (isDigit(s[i]) || isLetter(s[i])) {
		return 0, 0, 0, 0
	}
	sep := func(i int) int {
		if i < len(s) && s[i] == ',' {
			i++
		}
		i = skipSpace(s, i)
		if hasWordAt(s, i, "at ") {
			i = skipSpace(s, i+3)
		}
		return i
	}
	i = sep(i)
	if y, ny := digits(s, i, 4); ny == 4 && (i+4 == len(s) || !isDigit(s[i+4]) && s[i+4] != ':') {
		year = y
		i = sep(i + 4)
	}
	return month, d, year, i - start
}

// readZone reads an optional zone after a clock time at s[i:]: an IANA name
// in parentheses, or a bare "UTC", "GMT" or "Z". It returns def when none is
// written, and false for a name that does not load or an offset it does not
// read ("UTC+8").
func readZone(s string, i int, def *time.Location) (*time.Location, bool) {
	if i < len(s) && s[i] == 'Z' && (i+1 == len(s) || !isLetter(s[i+1]) && !isDigit(s[i+1])) {
		return time.UTC, true
	}
	i = skipSpace(s, i)
	if i >= len(s) {
		return def, true
	}
	if s[i] == '(' {
		j := i + 1
		for j < len(s) && j-i <= 64 && (isLetter(s[j]) || isDigit(s[j]) || s[j] == '/' || s[j] == '_' || s[j] == '+' || s[j] == '-') {
			j++
		}
		if j >= len(s) || s[j] != ')' || j == i+1 || !isLetter(s[i+1]) {
			return def, true // a note in parentheses, not a zone
		}
		return loadZone(s[i+1 : j])
	}
	if hasWordAt(s, i, "utc") || hasWordAt(s, i, "gmt") {
		j := i + 3
		if j < len(s) && (s[j] == '+' || s[j] == '-') && j+1 < len(s) && isDigit(s[j+1]) {
			return nil, false
		}
		if j < len(s) && isLetter(s[j]) {
			return def, true
		}
		return time.UTC, true
	}
	return def, true
}

// loadZone loads an IANA zone by name; "UTC" and "GMT" need no lookup, and
// "Local" (the machine's zone, not the writer's) is refused.
func loadZone(name string) (*time.Location, bool) {
	switch name {
	case "UTC", "GMT", "Etc/UTC", "Etc/GMT", "Z":
		return time.UTC, true
	case "Local":
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	return loc, true
}

// parseTildeWait reads an approximate wait written with a tilde at s[i:],
// where s[i-1] is '~': "~88s", "~2m", "~30 seconds", "~1.5s". The number
// must follow the tilde at once and its unit must be written in lower case,
// so "~1.5M tokens" is not read as minutes.
func parseTildeWait(s string, i int) (time.Duration, bool) {
	if i >= len(s) || !isDigit(s[i]) {
		return 0, false
	}
	_, n := readNumber(s[i:])
	j := i + n
	if j < len(s) && s[j] == ' ' {
		j++
	}
	if j >= len(s) || s[j] < 'a' || s[j] > 'z' {
		return 0, false
	}
	d, _, ok := ParseDuration(s, i, false)
	return d, ok
}

// asciiLower lower-cases an ASCII letter and leaves any other byte alone.
func asciiLower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

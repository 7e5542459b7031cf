// Package hint reads the numbers an error text states: a wait ("try again
// in 20s", "retryDelay": "2.5s"), a reset time ("resets 4pm
// (Asia/Kuala_Lumpur)") and an HTTP status written into the text ("HTTP
// 429", "Error code: 503"). Its functions are pure: they take the text and
// the positions where the phrase scan found the anchor phrases, and do not
// allocate except to load a named time zone.
package hint

import (
	"strings"
	"time"

	"github.com/erradvisor/erradvisor/internal/match"
)

// Anchor phrases mark where a number worth reading follows: a stated wait, a
// reset time, or an HTTP status written into the text. The matcher records
// where each first occurs, so the numbers are read without a second pass and
// never out of context: a bare "429" or "500" inside a token count is never
// a status.
const (
	// Structured fields come first: they state the wait exactly.
	anchorRetryDelay = iota
	anchorResetsInSeconds
	anchorResetSeconds
	anchorResetSecondsSingle
	anchorEstimatedTime
	anchorEstimatedTimeSingle
	anchorTryAgainIn
	anchorTryAgainAfter
	anchorComeBackIn
	anchorRetryIn
	anchorRetryAfter
	anchorResetAfter
	anchorResetsIn
	anchorResetIn
	anchorWait
	anchorZhSeconds
	anchorZhMinutes
	anchorZhHours
	anchorTilde
	anchorResetsAt
	anchorResetAt
	anchorResumeAt
	anchorLimitReachedPipe
	anchorTryAgainAt
	anchorResets

	anchorStatusCode
	anchorStatusCodeCamel
	anchorErrorCode
	anchorAPIError
	anchorHTTP
	anchorStatus
	anchorCode

	// NumAnchors is the number of anchor phrases.
	NumAnchors
)

// AnchorPhrase returns the phrase of anchor a, for 0 <= a < NumAnchors. The
// caller compiles these phrases into its scan and records, for each, the
// index of the last byte of its first occurrence (or -1): that array is the
// ends argument of [Body] and [Status].
func AnchorPhrase(a int) string { return anchorPhrases[a] }

var anchorPhrases = [NumAnchors]string{
	anchorTryAgainIn:          "try again in",
	anchorTryAgainAfter:       "try again after",
	anchorComeBackIn:          "come back in",
	anchorRetryIn:             "please retry in",
	anchorRetryAfter:          "retry after",
	anchorRetryDelay:          "retrydelay",
	anchorResetAfter:          "reset after",
	anchorResetsIn:            "resets in",
	anchorResetIn:             "reset in",
	anchorResetsInSeconds:     "resets in seconds",
	anchorResetSeconds:        "\"reset seconds\"",
	anchorResetSecondsSingle:  "'reset seconds'",
	anchorEstimatedTime:       "\"estimated time\"",
	anchorEstimatedTimeSingle: "'estimated time'",
	anchorWait:                "wait",
	anchorResetsAt:            "resets at",
	anchorResetAt:             "reset at",
	anchorResumeAt:            "resume using this model at",
	anchorLimitReachedPipe:    "limit reached|",
	anchorZhSeconds:           "秒后",
	anchorZhMinutes:           "分钟后",
	anchorZhHours:             "小时后",
	anchorTilde:               "~",
	anchorTryAgainAt:          "try again at",
	anchorResets:              "resets",

	anchorStatusCode:      "status code",
	anchorStatusCodeCamel: "statuscode",
	anchorErrorCode:       "error code",
	anchorAPIError:        "api error",
	anchorHTTP:            "http",
	anchorStatus:          "status",
	anchorCode:            "code",
}

// Anchors are recorded at their first occurrence. When the number after it
// does not parse ("http" inside "https://…", "code" inside "decode"), a few
// later occurrences are tried, within a window, so that a hint further on is
// still found and the cost stays bounded on large bodies.
const (
	anchorRetries = 4
	anchorWindow  = 4096
)

// nextAnchor returns the index of the last byte of the next occurrence of
// anchor a in msg after index end, comparing normalised bytes, or -1.
func nextAnchor(msg string, end, a int) int {
	p := match.Normalize(anchorPhrases[a])
	limit := min(len(msg), end+1+anchorWindow)
	for start := end + 1; start < limit; start++ {
		if match.Fold(msg[start]) != p[0] {
			continue
		}
		i, k := start, 0
		for i < len(msg) && k < len(p) {
			b := match.Fold(msg[i])
			if b != p[k] {
				break
			}
			i++
			if b == ' ' {
				for i < len(msg) && match.Fold(msg[i]) == ' ' {
					i++
				}
			}
			k++
		}
		if k == len(p) {
			return i - 1
		}
	}
	return -1
}

// Body reads the wait and the reset time a message states, from the
// anchors the scan found. The wait is the first one that parses, in anchor
// order (structured fields such as "retryDelay" before prose); the reset
// time is a time the text gives, absolute ("reset at 2026-06-10T09:05:49Z")
// or, when at is set, as people write it ("resets 4pm (Asia/Kuala_Lumpur)",
// "resets Jan 30, 11:30am", "try again at 21:05"), read by parseResetAt.
// A wait is within (0, MaxWait].
// "retry in" counts only after "please": a client announcing its own
// backoff ("completion_with_retry in 1.0 seconds") states no server wait,
// but an approximate wait written with a tilde ("retry in ~1.5s", "reset
// ~2m", "~88s") is read wherever it stands.
//
// The anchors are found by the one scan of the text, so a message without
// any of them costs nothing more here. Nothing here allocates, except
// loading a time zone that a reset time names when at is set.
func Body(msg string, ends *[NumAnchors]int, at time.Time) (wait time.Duration, reset, retryAt time.Time) {
	// Structured fields first; then, among the prose phrases, the wait
	// stated earliest in the text (a later "resets in 30 days" speaks of
	// something else than "please wait 2 minutes").
	pos := -1
	for a := anchorRetryDelay; a <= anchorTilde; a++ {
		if a == anchorTryAgainIn && pos >= 0 {
			break // a structured field gave the wait
		}
		for e, n := ends[a], 0; e >= 0 && n <= anchorRetries; e, n = nextAnchor(msg, e, a), n+1 {
			if pos >= 0 && e > pos {
				break
			}
			d, at, ok := waitAt(msg, e, a)
			if !at.IsZero() && retryAt.IsZero() {
				retryAt = at
			}
			if ok {
				wait, pos = d, e
				break
			}
		}
	}
	for _, a := range [...]int{anchorResetsAt, anchorResetAt, anchorResumeAt, anchorLimitReachedPipe, anchorTryAgainAt, anchorResets} {
		for e, n := ends[a], 0; e >= 0 && n <= anchorRetries; e, n = nextAnchor(msg, e, a), n+1 {
			if t, ok := parseResetAt(msg, e+1, at); ok {
				return wait, t, retryAt
			}
		}
	}
	return wait, time.Time{}, retryAt
}

// waitAt reads the wait after the anchor a that ends at msg[e]. For "retry
// after", a date or Unix time names a moment rather than a count of seconds;
// it comes back as at.
func waitAt(msg string, e, a int) (d time.Duration, at time.Time, ok bool) {
	switch a {
	case anchorResetsInSeconds, anchorResetSeconds, anchorResetSecondsSingle, anchorEstimatedTime, anchorEstimatedTimeSingle:
		// Seconds as a bare number: "resets_in_seconds": 300, a gateway's
		// "reset_seconds": 10 beside its cooldown (or a Python client's
		// 'reset_seconds': 10), and Hugging
		// Face's loading estimate, "estimated_time": 20.0 (or a Python
		// client's 'estimated_time': 20.0).
		if f, ok := readNumberAfter(msg, e+1); ok {
			d, ok = Seconds(f)
			return d, at, ok
		}
		return 0, at, false
	case anchorWait:
		// Only "wait 20 seconds" or "wait for 1 minute": a number right
		// after one space, or after " for ".
		if strings.HasPrefix(msg[e+1:], " for ") || strings.HasPrefix(msg[e+1:], " For ") {
			e += len(" for")
		}
		if e+2 < len(msg) && msg[e+1] == ' ' && msg[e+2] >= '0' && msg[e+2] <= '9' {
			d, _, ok = ParseDuration(msg, e+1, false)
		}
		return d, at, ok
	case anchorTilde:
		d, ok = parseTildeWait(msg, e+1)
		return d, at, ok
	case anchorZhSeconds, anchorZhMinutes, anchorZhHours:
		// Chinese puts the count before its unit: "请 117 秒后重试",
		// "请1分钟后再试" (retry after N seconds, minutes, hours).
		unit := 1.0
		switch a {
		case anchorZhMinutes:
			unit = 60
		case anchorZhHours:
			unit = 3600
		}
		// Only a wait that asks for the retry ("…秒后重试", "…分钟后再试"); a
		// host's log of its own backoff ("第2次重试失败 - 2秒后") is none.
		if !asksRetry(msg, e+1) {
			return 0, at, false
		}
		// "等待15秒后重试" (waiting 15 seconds, then retrying) is a host
		// announcing its own backoff, not the server asking for a wait.
		if waitsItself(msg, e+1-len(anchorPhrases[a])) {
			return 0, at, false
		}
		if f, ok := readNumberBefore(msg, e+1-len(anchorPhrases[a])); ok {
			d, ok = Seconds(f * unit)
			return d, at, ok
		}
		return 0, at, false
	case anchorRetryAfter:
		if t, ok := parseTimestamp(msg, e+1); ok {
			return 0, t, false
		}
		if t, ok := parseEpoch(msg, e+1); ok {
			return 0, t, false
		}
		d, _, ok = ParseDuration(msg, e+1, true)
		return d, at, ok
	}
	if a == anchorRetryDelay {
		// "retryDelay" as a word of its own: aws-sdk-js's "totalRetryDelay"
		// is the client's own delay already spent, in milliseconds.
		if s := e + 1 - len("retrydelay"); s > 0 && wordByte(msg, s-1) {
			return 0, at, false
		}
	}
	d, _, ok = ParseDuration(msg, e+1, a == anchorRetryDelay)
	return d, at, ok
}

// asksRetry reports whether s[i:] starts, after spaces, with a Chinese word
// that asks for another try (重试, 再试, 重新, 再次).
func asksRetry(s string, i int) bool {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	rest := s[i:]
	for _, w := range [...]string{"重试", "再试", "重新", "再次"} {
		if strings.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

// waitsItself reports whether the number that ends just before s[i] follows
// a host's word for its own wait: "等待" (waiting) or "将在" (will, in):
// "等待 15 秒后重试", "将在 5 秒后重试".
func waitsItself(s string, i int) bool {
	j, _ := numberBefore(s, i)
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	return strings.HasSuffix(s[:j], "等待") || strings.HasSuffix(s[:j], "将在")
}

// numberBefore returns the run of at most 12 digits and dots that ends just
// before s[i], after optional spaces, as s[j:end].
func numberBefore(s string, i int) (j, end int) {
	for i > 0 && s[i-1] == ' ' {
		i--
	}
	j = i
	for j > 0 && i-j < 12 && (isDigit(s[j-1]) || s[j-1] == '.') {
		j--
	}
	return j, i
}

// readNumberBefore reads the number that ends just before s[i], after
// optional spaces: "117 " in "请 117 秒后". A number joined to a word or
// longer than 12 characters is no count.
func readNumberBefore(s string, i int) (float64, bool) {
	j, i := numberBefore(s, i)
	if j == i || s[j] == '.' || j > 0 && (wordByte(s, j-1) || isDigit(s[j-1])) {
		return 0, false
	}
	f, n := readNumber(s[j:i])
	return f, n == i-j
}

// readNumberAfter reads a number after optional quotes, colons and spaces.
func readNumberAfter(s string, i int) (float64, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == ':' || s[i] == '=') {
		i++
	}
	if i >= len(s) {
		return 0, false
	}
	f, n := readNumber(s[i:])
	return f, n > 0
}

// Status finds an HTTP status written into a message in a clear
// shape: "429 Too Many Requests" or "Error: 503 ..." at the start, "HTTP
// 429", "HTTP/1.1 503", "status code 429", "429 status code", "Error code:
// 429", "API error (429)", "status: 429", "statusCode: 429", "code": 429. It returns 0 when no
// shape is present.
func Status(msg string, ends *[NumAnchors]int) int {
	return StatusWhere(msg, ends, anyStatus)
}

// anyStatus accepts every status.
func anyStatus(int) bool { return true }

// StatusWhere is [Status] restricted to the statuses ok accepts: it returns
// the first status written into msg in one of Status's shapes for which ok
// reports true, or 0. A wrapper's status can so be passed over for the one
// it quotes ("500: Gateway API error: 404 Not Found").
func StatusWhere(msg string, ends *[NumAnchors]int, ok func(int) bool) int {
	if s := leadingStatus(msg); s != 0 && ok(s) {
		return s
	}
	for _, a := range [...]int{anchorStatusCode, anchorStatusCodeCamel, anchorErrorCode, anchorAPIError, anchorHTTP, anchorStatus, anchorCode} {
		for e, n := ends[a], 0; e >= 0 && n <= anchorRetries; e, n = nextAnchor(msg, e, a), n+1 {
			if s := statusAt(msg, e+1); s != 0 && ok(s) {
				return s
			}
			if a == anchorStatusCode { // "400 status code (no body)"
				if s := statusBefore(msg, e, len(anchorPhrases[a])); s != 0 && ok(s) {
					return s
				}
			}
		}
	}
	return 0
}

// leadingStatus reads a status at the start of msg, after an optional
// "Error:" or "Error", in the shape SDKs and servers print: the number alone, or
// followed by a status text or a body ("429 Too Many Requests", "529 {...}",
// "404 page not found"). A number followed by a word that counts something
// ("500 tokens exceeded", "429 requests") is a count, not a status.
func leadingStatus(msg string) int {
	i := skipSpace(msg, 0)
	if len(msg)-i >= 6 && lowerASCII(msg[i:i+5]) == "error" && (msg[i+5] == ':' || msg[i+5] == ' ') {
		i = skipSpace(msg, i+6)
	}
	return statusWord(msg, i)
}

// statusWord reads a status at msg[i:] that stands alone: the number ends
// the text or is followed by ':' or by a word that does not count something.
func statusWord(msg string, i int) int {
	s, n := threeDigits(msg, i)
	if n == 0 || n == len(msg) {
		return s
	}
	switch msg[n] {
	case ':':
		return s
	case ' ':
		j := skipSpace(msg, n)
		if j == len(msg) {
			return s
		}
		if !countNoun(msg[j:]) {
			return s
		}
	}
	return 0
}

// countNoun reports whether s starts with a word that counts something.
func countNoun(s string) bool {
	var w [12]byte
	n := 0
	for n < len(s) && n < len(w) && (s[n]|0x20) >= 'a' && (s[n]|0x20) <= 'z' {
		w[n] = s[n] | 0x20
		n++
	}
	switch string(w[:n]) {
	case "tokens", "requests", "characters", "chars", "words", "messages", "bytes", "kb", "mb", "calls",
		"items", "lines", "seconds", "ms", "minutes", "hours", "days":
		return true
	}
	return false
}

// statusAt reads a status after a few separators at msg[i:].
func statusAt(msg string, i int) int {
	for k := 0; k < 8 && i < len(msg); k++ {
		switch msg[i] {
		case ' ', ':', '=', '(', '[', '"', '\'', '#':
			i++
			continue
		case '/': // "HTTP/1.1 503", "HTTP/2 429"; not "http://host:503"
			if i+1 >= len(msg) || msg[i+1] < '0' || msg[i+1] > '9' {
				return 0
			}
			i++
			for i < len(msg) && (msg[i] >= '0' && msg[i] <= '9' || msg[i] == '.') {
				i++
			}
			continue
		}
		break
	}
	s, n := threeDigits(msg, i)
	if n == 0 {
		return 0
	}
	return s
}

// statusBefore reads a status that ends just before the anchor whose last
// byte is at end and whose normalised phrase has n bytes.
func statusBefore(msg string, end, n int) int {
	i := end
	for ; n > 0 && i >= 0; i-- {
		if match.Fold(msg[i]) == ' ' {
			for i > 0 && match.Fold(msg[i-1]) == ' ' {
				i--
			}
		}
		n--
	}
	// i is now just before the anchor's first byte.
	for i >= 0 && msg[i] == ' ' {
		i--
	}
	if i < 2 {
		return 0
	}
	if i >= 3 && msg[i-3] >= '0' && msg[i-3] <= '9' {
		return 0
	}
	s, _ := threeDigits(msg, i-2)
	return s
}

// threeDigits reads exactly three digits forming a status (100 to 599) at
// msg[i:], not followed by another digit or a decimal point. It returns the
// status and the index after it, or 0, 0.
func threeDigits(msg string, i int) (int, int) {
	if i < 0 || i+3 > len(msg) {
		return 0, 0
	}
	v := 0
	for k := i; k < i+3; k++ {
		c := msg[k]
		if c < '0' || c > '9' {
			return 0, 0
		}
		v = v*10 + int(c-'0')
	}
	if j := i + 3; j < len(msg) && (msg[j] >= '0' && msg[j] <= '9' || (msg[j] == '.' || msg[j] == ',') && j+1 < len(msg) && msg[j+1] >= '0' && msg[j+1] <= '9') {
		return 0, 0
	}
	if v < 100 || v > 599 {
		return 0, 0
	}
	return v, i + 3
}

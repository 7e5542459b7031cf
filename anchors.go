package erradvisor

import "time"

// Anchor phrases mark where a number worth reading follows: a stated wait, a
// reset time, or an HTTP status written into the text. The matcher records
// where each first occurs, so the numbers are read without a second pass and
// never out of context: a bare "429" or "500" inside a token count is never
// a status.
const (
	// Structured fields come first: they state the wait exactly.
	anchorRetryDelay = iota
	anchorResetsInSeconds
	anchorTryAgainIn
	anchorTryAgainAfter
	anchorRetryIn
	anchorRetryAfter
	anchorResetAfter
	anchorResetsIn
	anchorResetIn
	anchorWait
	anchorResetsAt
	anchorResetAt
	anchorResumeAt
	anchorLimitReachedPipe

	anchorStatusCode
	anchorStatusCodeCamel
	anchorErrorCode
	anchorAPIError
	anchorHTTP
	anchorStatus
	anchorCode

	numAnchors
)

var anchorPhrases = [numAnchors]string{
	anchorTryAgainIn:       "try again in",
	anchorTryAgainAfter:    "try again after",
	anchorRetryIn:          "please retry in",
	anchorRetryAfter:       "retry after",
	anchorRetryDelay:       "retrydelay",
	anchorResetAfter:       "reset after",
	anchorResetsIn:         "resets in",
	anchorResetIn:          "reset in",
	anchorResetsInSeconds:  "resets in seconds",
	anchorWait:             "wait",
	anchorResetsAt:         "resets at",
	anchorResetAt:          "reset at",
	anchorResumeAt:         "resume using this model at",
	anchorLimitReachedPipe: "limit reached|",

	anchorStatusCode:      "status code",
	anchorStatusCodeCamel: "statuscode",
	anchorErrorCode:       "error code",
	anchorAPIError:        "api error",
	anchorHTTP:            "http",
	anchorStatus:          "status",
	anchorCode:            "code",
}

// bodyHints reads the wait and the reset time a message states, from the
// anchors the scan found. The wait is the first one that parses, in anchor
// order (structured fields such as "retryDelay" before prose); the reset
// time is an absolute time the text gives. "retry in" counts only after
// "please": a client announcing its own backoff ("completion_with_retry in
// 1.0 seconds") states no server wait.
func bodyHints(msg string, ends *[numAnchors]int) (wait time.Duration, reset time.Time) {
	for a := anchorRetryDelay; a <= anchorWait; a++ {
		e := ends[a]
		if e < 0 {
			continue
		}
		var d time.Duration
		var ok bool
		switch a {
		case anchorResetsInSeconds:
			var f float64
			f, ok = readNumberAfter(msg, e+1)
			if ok {
				d, ok = seconds(f)
			}
		case anchorWait:
			// Only "wait 20 seconds": a number right after one space.
			if e+2 < len(msg) && msg[e+1] == ' ' && msg[e+2] >= '0' && msg[e+2] <= '9' {
				d, _, ok = parseDuration(msg, e+1, false)
			}
		default:
			bare := a == anchorRetryAfter || a == anchorRetryDelay
			d, _, ok = parseDuration(msg, e+1, bare)
		}
		if ok {
			wait = d
			break
		}
	}
	for _, a := range [...]int{anchorResetsAt, anchorResetAt, anchorResumeAt, anchorLimitReachedPipe} {
		e := ends[a]
		if e < 0 {
			continue
		}
		if t, ok := parseEpoch(msg, e+1); ok {
			return wait, t
		}
		if t, ok := parseTimestamp(msg, e+1); ok {
			return wait, t
		}
	}
	return wait, time.Time{}
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

// statusFromText finds an HTTP status written into a message in a clear
// shape: "429 Too Many Requests" or "Error: 503 ..." at the start, "HTTP
// 429", "HTTP/1.1 503", "status code 429", "429 status code", "Error code:
// 429", "API error (429)", "status: 429", "statusCode: 429", "code": 429. It returns 0 when no
// shape is present.
func statusFromText(msg string, ends *[numAnchors]int) int {
	if s := leadingStatus(msg); s != 0 {
		return s
	}
	for _, a := range [...]int{anchorStatusCode, anchorStatusCodeCamel, anchorErrorCode, anchorAPIError, anchorHTTP, anchorStatus, anchorCode} {
		e := ends[a]
		if e < 0 {
			continue
		}
		if s := statusAt(msg, e+1); s != 0 {
			return s
		}
		if a == anchorStatusCode { // "400 status code (no body)"
			if s := statusBefore(msg, e, len(anchorPhrases[a])); s != 0 {
				return s
			}
		}
	}
	return 0
}

// leadingStatus reads "NNN " at the start of msg, after an optional "Error:".
func leadingStatus(msg string) int {
	i := skipSpace(msg, 0)
	if len(msg)-i >= 6 && lowerASCII(msg[i:i+5]) == "error" && msg[i+5] == ':' {
		i = skipSpace(msg, i+6)
	}
	s, n := threeDigits(msg, i)
	if n == 0 || (n < len(msg) && msg[n] != ' ' && msg[n] != ':') {
		return 0
	}
	return s
}

// statusAt reads a status after a few separators at msg[i:].
func statusAt(msg string, i int) int {
	for k := 0; k < 8 && i < len(msg); k++ {
		switch msg[i] {
		case ' ', ':', '=', '(', '[', '"', '\'', '#':
			i++
			continue
		case '/': // "HTTP/1.1 503", "HTTP/2 429"
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
		if normByte[msg[i]] == ' ' {
			for i > 0 && normByte[msg[i-1]] == ' ' {
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

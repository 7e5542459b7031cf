package erradvisor

import (
	"time"

	"github.com/erradvisor/erradvisor/internal/hint"
)

// Anchor phrases mark where a number worth reading follows: a stated wait, a
// reset time, or an HTTP status written into the text. The one scan of a
// message records where each first occurs (Classifier.anchors holds their
// phrase ids), and package hint reads the numbers from there, never out of
// context: a bare "429" or "500" inside a token count is never a status.
const numAnchors = hint.NumAnchors

// bodyHints reads the wait, the reset time and a stated retry moment from
// the anchors the scan found; see hint.Body.
func bodyHints(msg string, ends *[numAnchors]int, at time.Time) (wait time.Duration, reset, retryAt time.Time) {
	return hint.Body(msg, ends, at)
}

// statusFromText reads an HTTP status written into msg in a clear shape, or
// returns 0; see hint.Status.
func statusFromText(msg string, ends *[numAnchors]int) int {
	return hint.Status(msg, ends)
}

// refusalFromText reads the first status written into msg in a clear shape
// that refuses the request (see refusal), or returns 0; see hint.StatusWhere.
func refusalFromText(msg string, ends *[numAnchors]int) int {
	return hint.StatusWhere(msg, ends, refusal)
}

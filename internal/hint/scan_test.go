package hint

import (
	"testing"

	"github.com/erradvisor/erradvisor/internal/match"
)

// scanEnds scans text for the anchor phrases, as a classifier does, and
// returns where each first ends (-1 when absent).
func scanEnds(t testing.TB, text string) [NumAnchors]int {
	t.Helper()
	var phrases []string
	var ids [NumAnchors]int32
	for a := range ids {
		p := match.Normalize(AnchorPhrase(a))
		ids[a] = int32(len(phrases))
		phrases = append(phrases, p)
	}
	m, err := match.New(phrases, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := match.Hits{Set: make([]uint64, (m.NumPhrases()+63)/64)}
	var ends [NumAnchors]int
	for i := range ends {
		ends[i] = -1
	}
	m.Scan(text, &h, ids[:], ends[:])
	return ends
}

// Package match finds the phrases of a rule set in a text in one pass: an
// Aho–Corasick automaton compiled to a dense table, over text normalised
// the same way as the phrases, with identifier skipping and per-clause
// concept combinations.
package match

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// A Matcher finds every phrase of a rule set in one pass over the text, in
// time linear in the text whatever the number of phrases (an Aho–Corasick
// automaton compiled to a dense table). Text and phrases are compared after
// the same normalisation: ASCII letters lower-cased, '_' and '-' read as a
// space, and runs of white space read as one space. So "rate_limit_error",
// "Rate-Limit error" and "rate limit\n error" all contain "rate limit error".
//
// The same pass does three more things, so that no second pass is needed:
//
//   - Identifiers are not prose. A URL ("scheme://..." up to the next space,
//     quote or bracket) and a path that starts a word ("/v1/chat/completions")
//     are skipped: no phrase matches inside them, so a documentation link
//     whose anchor reads "context-window" is no evidence of an overflow.
//   - The token after a word that announces an identifier ("request id:",
//     `"id":`, "trace id") is skipped the same way, so a request id such as
//     "req_context_length_exceeded_01" is no evidence either.
//   - A line that is a stack frame ("at System.Net.Http.HttpClient.Send(...)",
//     "    at handleQuota (/app/x.js:12:5)", `  File "x.py", line 9, in
//     _handle_rate_limit`) is skipped whole: the names of the functions a
//     failure passed through say nothing of what failed ("tpm" inside
//     "HttpMethod", "rate limit" inside "_handle_rate_limit").
//   - Clauses are tracked. A sentence end ('.', '!' or '?' before a space or
//     the end), ';', '|', a line break and the Chinese full stop end a
//     clause. Concepts (see the root package's rules.go) are recorded per clause, and a
//     combination of concepts holds when a word of each occurred within one
//     clause.
//   - Concept words are stems: a word matches wherever it occurs, so
//     "exceed" also finds "exceeds", "exceeded" and "exceeding".

// Fold returns an input byte in its normalised form: ASCII letters
// lower-cased, '_', '-' and white space read as a space.
func Fold(b byte) byte { return normByte[b] }

// NumPhrases returns the number of phrases m was compiled from; a [Hits]
// for m needs (NumPhrases()+63)/64 words.
func (m *Matcher) NumPhrases() int { return m.nphrase }

// normByte maps an input byte to its normalised form.
var normByte = func() (t [256]byte) {
	for i := range t {
		b := byte(i)
		switch {
		case b >= 'A' && b <= 'Z':
			b += 'a' - 'A'
		case b == '_' || b == '-' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v':
			b = ' '
		}
		t[i] = b
	}
	return t
}()

// Normalize returns p as the Matcher sees it, without leading or
// trailing space.
func Normalize(p string) string {
	out := make([]byte, 0, len(p))
	prev := byte(' ')
	for i := 0; i < len(p); i++ {
		b := normByte[p[i]]
		if b == ' ' && prev == ' ' {
			continue
		}
		out = append(out, b)
		prev = b
	}
	for len(out) > 0 && out[len(out)-1] == ' ' {
		out = out[:len(out)-1]
	}
	return string(out)
}

// MaxStates bounds the automaton so that states fit in a uint16 beside
// hitBit.
const MaxStates = 1<<15 - 1

// hitBit marks, in a transition of the table, that the state it leads to
// ends a phrase (on its failure chain): the scan reads nothing more for
// the bytes where no phrase ends.
const hitBit = 1 << 15

// special marks the bytes that may end a clause or start an identifier:
// the scan looks closer at them. Every other byte is one transition.
var special = func() (t [256]bool) {
	for _, b := range []byte{'.', '!', '?', ';', '|', '\n', ':', '/', 0xE3} {
		t[b] = true
	}
	return t
}()

// Matcher is an immutable compiled phrase automaton.
type Matcher struct {
	class   [256]uint8 // normalised byte -> byte class (0: a byte no phrase uses)
	raw     [256]uint8 // input byte -> class of its normalised form
	nclass  int
	delta   []uint16 // state*nclass + class -> next state, with hitBit when a phrase ends there
	own     []int32  // state -> the phrase that ends exactly there, or -1
	dict    []uint16 // state -> nearest state on its failure chain with a phrase, or 0
	first   []uint16 // state -> itself when it ends a phrase, else dict; 0: no phrase ends here
	concept []Mask   // state -> concepts of every phrase ending there (on its chain)
	cand    []Mask   // state -> the combinations that name one of its concepts
	// breakOK[b]: after input byte b and a space the scan is back at the
	// root, since no phrase holds b's normalised form before a space; a
	// line break after such a byte is where a second stream can start.
	breakOK [256]bool
	nphrase int

	// combos are the concept combinations rules ask for, each a mask of
	// concepts; combination k holds when its mask is a subset of the
	// concepts seen in one clause.
	combos []Mask
	// byConcept[b] is the set of the combinations that name concept b.
	byConcept [128]Mask
}

// Mask is a set of up to 128 concepts, or of up to 128 concept
// combinations: bit i of the set is bit i&63 of word i>>6.
type Mask [2]uint64

// Add adds i (0 <= i < 128) to m.
func (m *Mask) Add(i int) { m[i>>6&1] |= 1 << (uint(i) & 63) }

// Has reports whether i is in m.
func (m Mask) Has(i int) bool { return m[i>>6&1]&(1<<(uint(i)&63)) != 0 }

// subset reports whether every element of m is in o.
func (m Mask) subset(o Mask) bool { return m[0]&^o[0] == 0 && m[1]&^o[1] == 0 }

// TooLargeError is returned for a rule set whose phrases do not fit: Phrase
// is the id of the phrase that did not.
type TooLargeError struct{ Phrase int32 }

// Error describes the limit that was passed.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("phrase set too large to compile: more than %d automaton states or 255 distinct bytes", MaxStates)
}

// ErrTooManyCombos is returned for rules that name too many distinct concept
// combinations.
var ErrTooManyCombos = errors.New("more than 128 distinct concept combinations")

// IDMarkers returns the phrases that announce that the next token is an
// identifier. A caller adds them to the phrases it compiles, with
// [IDMarker] in their concept sets.
func IDMarkers() []string {
	return []string{"request id", "requestid", `"id"`, "'id'", "trace id", "traceid", "correlation id",
		"req id", "event id", "response id", "message id"}
}

// IDMarker is the element of a phrase's concept set that marks it as an id
// marker; concepts proper are 0 to MaxConcepts-1.
const IDMarker = 127

// MaxConcepts bounds the concepts of one Matcher (an element of [Mask]
// each, less the one IDMarker takes).
const MaxConcepts = 127

// MaxCombos bounds the concept combinations of one Matcher (an element of
// [Mask] each).
const MaxCombos = 128

// New compiles phrases (already normalised, non-empty). Phrase i
// reports id i. concepts, when not nil, gives for each phrase the set of
// the concepts it is a word of; combos are the concept combinations to
// track per clause (at most MaxCombos).
func New(phrases []string, concepts []Mask, combos []Mask) (*Matcher, error) {
	if len(combos) > MaxCombos {
		return nil, ErrTooManyCombos
	}
	m := &Matcher{nphrase: len(phrases), combos: combos}
	for k, cb := range combos {
		for w := range cb {
			for b := cb[w]; b != 0; b &= b - 1 {
				m.byConcept[w<<6|bits.TrailingZeros64(b)].Add(k)
			}
		}
	}
	// Byte classes: one per distinct byte used by a phrase, 0 for the rest.
	for id, p := range phrases {
		for i := 0; i < len(p); i++ {
			if m.class[p[i]] == 0 {
				m.nclass++
				if m.nclass > 255 {
					return nil, &TooLargeError{Phrase: int32(id)}
				}
				m.class[p[i]] = uint8(m.nclass)
			}
		}
	}
	m.nclass++
	for b := range 256 {
		m.raw[b] = m.class[normByte[b]]
	}
	var beforeSpace [256]bool // normalised bytes some phrase holds before a space
	for _, p := range phrases {
		for i := 0; i+1 < len(p); i++ {
			if p[i+1] == ' ' {
				beforeSpace[p[i]] = true
			}
		}
	}
	for b := range 256 {
		m.breakOK[b] = normByte[b] != ' ' && !beforeSpace[normByte[b]]
	}

	// Trie, built straight into the dense table: while a row has not been
	// processed below, a non-zero entry in it is a trie edge. Phrases are
	// distinct, so at most one ends at each node.
	nc := m.nclass
	m.delta = make([]uint16, nc, 64*nc)
	m.own = []int32{-1}
	// afterSpace[s]: the string of state s ends with a space.
	afterSpace := []bool{false}
	for id, p := range phrases {
		s := 0
		for i := 0; i < len(p); i++ {
			c := int(m.class[p[i]])
			n := int(m.delta[s*nc+c])
			if n == 0 {
				n = len(m.own)
				if n >= MaxStates {
					return nil, &TooLargeError{Phrase: int32(id)}
				}
				m.delta = append(m.delta, make([]uint16, nc)...)
				m.own = append(m.own, -1)
				afterSpace = append(afterSpace, p[i] == ' ')
				m.delta[s*nc+c] = uint16(n)
			}
			s = n
		}
		m.own[s] = int32(id)
	}

	// Breadth-first: failure links folded into the table, and for each
	// state the nearest state on its failure chain that ends a phrase (its
	// dictionary link).
	states := len(m.own)
	m.dict = make([]uint16, states)
	fail := make([]int, states)
	queue := make([]int, 0, states)
	for c := 0; c < nc; c++ {
		if n := int(m.delta[c]); n != 0 {
			queue = append(queue, n)
		}
	}
	m.first = make([]uint16, states)
	m.concept = make([]Mask, states)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; m.own[f] >= 0 {
			m.dict[s] = uint16(f)
		} else {
			m.dict[s] = m.dict[f]
		}
		// The failure state is shallower, so its concepts are final.
		m.concept[s] = m.concept[fail[s]]
		if id := m.own[s]; id >= 0 && int(id) < len(concepts) {
			m.concept[s][0] |= concepts[id][0]
			m.concept[s][1] |= concepts[id][1]
		}
		if m.own[s] >= 0 {
			m.first[s] = uint16(s)
		} else {
			m.first[s] = m.dict[s]
		}
		row, frow := s*nc, fail[s]*nc
		for c := 0; c < nc; c++ {
			if n := int(m.delta[row+c]); n != 0 {
				fail[n] = int(m.delta[frow+c])
				queue = append(queue, n)
			} else {
				m.delta[row+c] = m.delta[frow+c]
			}
		}
	}
	// Runs of spaces read as one: a state whose string ends with a space
	// stays where it is on another space. (No phrase ends with a space, so
	// no phrase ends there.) The scan then needs no branch for a run.
	if sp := int(m.class[' ']); sp != 0 {
		for s, after := range afterSpace {
			if after {
				m.delta[s*nc+sp] = uint16(s)
			}
		}
	}
	// The combinations each state's concepts can complete, so that a hit
	// needs no loop over its concepts.
	m.cand = make([]Mask, states)
	for s, cm := range m.concept {
		for w := range cm {
			for b := cm[w]; b != 0; b &= b - 1 {
				c := &m.byConcept[w<<6|bits.TrailingZeros64(b)]
				m.cand[s][0] |= c[0]
				m.cand[s][1] |= c[1]
			}
		}
	}
	// Fold "a phrase ends there" into the transitions, so that the scan
	// reads one table per byte.
	for i, n := range m.delta {
		if m.first[n] != 0 {
			m.delta[i] = n | hitBit
		}
	}
	return m, nil
}

// Hits is the set of phrases found in a text, and the concept combinations
// that held within one clause. Set is a bit set over phrase ids that the
// caller provides, with room for [Matcher.NumPhrases] bits; a Hits may
// be reused for several texts so that their phrases add up.
type Hits struct {
	Set    []uint64
	combos Mask
}

// Has reports whether phrase id was found.
func (h *Hits) Has(id int32) bool { return h.Set[id>>6]&(1<<(uint(id)&63)) != 0 }

// HasCombo reports whether concept combination k held within a clause.
func (h *Hits) HasCombo(k int32) bool { return h.combos.Has(int(k)) }

// Scan adds to h every phrase found in text, and every concept combination
// found within one clause. For the phrase ids in anchors (a small list),
// firstEnd records the index in text of the last byte of the first
// occurrence, or leaves -1.
//
// The work is linear in the text plus the number of phrases: at each state
// the phrases ending there are those on its dictionary chain, and once a
// phrase on the chain is already in h, so is every phrase after it (they
// were all found together, at its first occurrence). The concepts of a
// state are precomputed over its whole chain.
//
// A text of 2 KiB or more that has a line break within 4 KiB after its
// middle is read as two streams that advance together, with the same
// result as one stream, when h.Set has at most TwoStreamPhrases bits and
// anchors at most TwoStreamAnchors entries.
func (m *Matcher) Scan(text string, h *Hits, anchors []int32, firstEnd []int) {
	if len(text) >= twoStreamMin && len(h.Set) <= maxSetWords && len(anchors) <= maxAnchors && len(firstEnd) >= len(anchors) {
		if s := m.splitPoint(text); s > 0 {
			m.scanTwo(text, s, h, anchors, firstEnd)
			return
		}
	}
	var cur cursor
	m.scan(&cur, text, 0, len(text), h, anchors, firstEnd)
}

// A cursor is where one scan stands between two bytes.
type cursor struct {
	state     int
	clause    Mask // concepts seen in the current clause
	pendingID bool // an id marker was read; its token is still to come
}

// fresh reports whether c is where a scan stands at the start of a text.
func (c *cursor) fresh() bool { return c.state == 0 && c.clause == Mask{} && !c.pendingID }

// scan moves cur over text[i:to] and returns where it stopped: to, or
// past it when an identifier that starts before to runs on.
func (m *Matcher) scan(cur *cursor, text string, i, to int, h *Hits, anchors []int32, firstEnd []int) int {
	// The state lives in a local between the calls, so that the chain of
	// look-ups does not go through memory.
	nc := m.nclass
	state := cur.state
	for i < to {
		c := text[i]
		if cur.pendingID || special[c] {
			cur.state = state
			i = m.step(cur, text, i, h, anchors, firstEnd)
			state = cur.state
			continue
		}
		next := m.delta[state*nc+int(m.raw[c])]
		state = int(next &^ hitBit)
		if next&hitBit != 0 {
			cur.state = state
			m.found(cur, i, h, anchors, firstEnd)
		}
		i++
	}
	cur.state = state
	return i
}

// step moves cur over the byte at i, or over the identifier that starts
// there, and returns the index of the next byte to read.
func (m *Matcher) step(cur *cursor, text string, i int, h *Hits, anchors []int32, firstEnd []int) int {
	nc := m.nclass
	space := int(m.raw[' '])
	c := text[i]
	if cur.pendingID {
		switch {
		case alnum(c):
			// The identifier reads as one space.
			cur.pendingID = false
			cur.state = int(m.delta[cur.state*nc+space] &^ hitBit)
			for i+1 < len(text) && !identEnd[text[i+1]] {
				i++
			}
			return i + 1
		case c == ':' || c == '=' || c == '"' || c == '\'' || c == ' ' || c == '#' || c == '\\':
		default:
			cur.pendingID = false
		}
	}
	if special[c] {
		if skip := identifierEnd(text, i); skip > i {
			// An identifier reads as one space.
			cur.state = int(m.delta[cur.state*nc+space] &^ hitBit)
			return skip
		}
		if clauseEnds(text, i) {
			cur.clause = Mask{}
		}
	}
	next := m.delta[cur.state*nc+int(m.raw[c])]
	cur.state = int(next &^ hitBit)
	if next&hitBit != 0 {
		m.found(cur, i, h, anchors, firstEnd)
	}
	if c == '\n' && i+1 < len(text) && frameStart[text[i+1]] {
		// A stack frame on the next line is read as nothing.
		return frameEnd(text, i+1)
	}
	return i + 1
}

// frameStart marks the bytes a stack-frame line can start with: a blank,
// or the first letter of "at" or "File".
var frameStart = func() (t [256]bool) {
	for _, b := range []byte(" \taF") {
		t[b] = true
	}
	return t
}()

// frameEnd returns the index of the line break that ends the line starting
// at i when that line is a stack frame, or i when it is not. A frame is,
// after blanks, "at " (and "async ") before a name that holds '(' or is
// followed by " (", or a location that ends in ":line"; or Python's
// `File "...", line N`. Prose such as "at least one" is no frame.
func frameEnd(text string, i int) int {
	j := i
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	rest := text[j:]
	at, file := strings.HasPrefix(rest, "at "), strings.HasPrefix(rest, `File "`)
	if !at && !file {
		return i
	}
	// A frame is one line: nothing past it is read.
	if n := strings.IndexByte(rest, '\n'); n >= 0 {
		rest = rest[:n]
	}
	if at {
		tok := strings.TrimPrefix(rest[len("at "):], "async ")
		k := 0
		for k < len(tok) && tok[k] != ' ' && tok[k] != '\t' {
			k++
		}
		if k == 0 || strings.IndexByte(tok[:k], '(') < 0 && !strings.HasPrefix(tok[k:], " (") && !endsInLine(tok[:k]) {
			return i
		}
	} else {
		q := strings.IndexByte(rest[len(`File "`):], '"')
		if q < 0 || !strings.HasPrefix(rest[len(`File "`)+q+1:], ", line ") {
			return i
		}
	}
	return j + len(rest)
}

// endsInLine reports whether a location token ends in ":N" or ":N:M",
// perhaps closed by ')': a file and line.
func endsInLine(tok string) bool {
	tok = strings.TrimSuffix(tok, ")")
	digits := 0
	for k := len(tok) - 1; k >= 0; k-- {
		switch b := tok[k]; {
		case b >= '0' && b <= '9':
			digits++
		case b == ':' && digits > 0:
			return true
		default:
			return false
		}
	}
	return false
}

// found records the phrases and concepts that end at cur.state, the byte
// at i being their last.
func (m *Matcher) found(cur *cursor, i int, h *Hits, anchors []int32, firstEnd []int) {
	t := int(m.first[cur.state])
	for t != 0 {
		id := m.own[t]
		w := &h.Set[id>>6]
		bit := uint64(1) << (uint(id) & 63)
		if *w&bit != 0 {
			break
		}
		*w |= bit
		for k, a := range anchors {
			if a == id {
				firstEnd[k] = i
			}
		}
		t = int(m.dict[t])
	}
	cm := &m.concept[cur.state]
	n0, n1 := cm[0]&^cur.clause[0], cm[1]&^cur.clause[1] // concepts new to the clause
	if n0|n1 == 0 {
		return
	}
	const idBit = uint64(1) << (IDMarker & 63)
	if n1&idBit != 0 {
		cur.pendingID = true
		n1 &^= idBit
	}
	cur.clause[0] |= n0
	cur.clause[1] |= n1
	// A combination not found yet that names one of the state's concepts
	// may complete now (one that names none of them was checked when its
	// last concept came).
	cand := &m.cand[cur.state]
	for w := range cand {
		for b := cand[w] &^ h.combos[w]; b != 0; b &= b - 1 {
			k := w<<6 | bits.TrailingZeros64(b)
			if m.combos[k].subset(cur.clause) {
				h.combos.Add(k)
			}
		}
	}
}

// Bounds of the two-stream scan. A text of twoStreamMin bytes or more is
// read as two streams, one from its start and one from a line break near
// its middle, advanced together byte by byte: the two chains of table
// look-ups do not wait on each other, so the processor runs them side by
// side. The second stream keeps its findings apart (on the stack, hence
// the bounds on phrases and anchors) until the first reaches the line
// break.
const (
	twoStreamMin = 2048
	maxSetWords  = TwoStreamPhrases / 64
	maxAnchors   = TwoStreamAnchors
	splitReach   = 4096 // how far past the middle a line break is looked for
)

// TwoStreamPhrases bounds the phrase bits of the [Hits] (its Set, which
// holds NumPhrases bits) and TwoStreamAnchors the anchor lists for which
// [Matcher.Scan] reads a long text as two streams; beyond them it reads one
// stream, with the same result, more slowly.
const (
	TwoStreamPhrases = 4096
	TwoStreamAnchors = 32
)

// splitPoint returns the index just after a line break near the middle of
// text, or 0 when there is none within reach. It prefers a break whose
// last byte before it (blanks aside) no phrase holds before a space: one
// stream is back at the root there whatever came before, unless an
// identifier ended on that byte. Failing such a break, the first break.
func (m *Matcher) splitPoint(text string) int {
	mid := len(text) / 2
	end := min(len(text)-1, mid+splitReach)
	first := 0
	for i := mid; i < end; i++ {
		if text[i] != '\n' {
			continue
		}
		if first == 0 {
			first = i + 1
		}
		j := i - 1
		for j > mid && i-j < 16 && (text[j] == '\r' || text[j] == ' ' || text[j] == '\t') {
			j--
		}
		if m.breakOK[text[j]] {
			return i + 1
		}
	}
	return first
}

// scanTwo is Scan as two streams split at s, just after a line break. The
// second stream starts as a scan starts, fresh. A line break ends every
// clause, identifier and pending id marker, so the first stream reaches s
// in that same place unless a phrase runs on over the break (its state is
// not the root); then the text from s on is read exactly as one stream
// would, and the findings are merged. Otherwise the first stream goes on
// alone to the end and the second's findings are dropped. The result is
// the one-stream result either way.
func (m *Matcher) scanTwo(text string, s int, h *Hits, anchors []int32, firstEnd []int) {
	var set2 [maxSetWords]uint64
	h2 := Hits{Set: set2[:len(h.Set)], combos: h.combos}
	copy(h2.Set, h.Set)
	var end2 [maxAnchors]int
	copy(end2[:], firstEnd)
	fe2 := end2[:len(anchors)]

	// As in scan, the two states live in locals between the calls.
	nc := m.nclass
	var a, b cursor
	sa, sb := 0, 0
	// The second stream starts where one stream goes on after the line
	// break: past the line when it is a stack frame.
	s2 := frameEnd(text, s)
	i, j := 0, s2
	for i < s && j < len(text) {
		ci, cj := text[i], text[j]
		if a.pendingID || b.pendingID || special[ci] || special[cj] {
			a.state, b.state = sa, sb
			i = m.step(&a, text, i, h, anchors, firstEnd)
			j = m.step(&b, text, j, &h2, anchors, fe2)
			sa, sb = a.state, b.state
			continue
		}
		ni := m.delta[sa*nc+int(m.raw[ci])]
		nj := m.delta[sb*nc+int(m.raw[cj])]
		sa, sb = int(ni&^hitBit), int(nj&^hitBit)
		if (ni|nj)&hitBit != 0 {
			a.state, b.state = sa, sb
			if ni&hitBit != 0 {
				m.found(&a, i, h, anchors, firstEnd)
			}
			if nj&hitBit != 0 {
				m.found(&b, j, &h2, anchors, fe2)
			}
		}
		i++
		j++
	}
	a.state, b.state = sa, sb
	i = m.scan(&a, text, i, s, h, anchors, firstEnd)
	// With '\n' among the identifier ends and the clause ends, only the
	// state can differ here; the whole check stays so that a change to
	// those sets cannot make two streams differ from one.
	if i != s2 || !a.fresh() {
		m.scan(&a, text, i, len(text), h, anchors, firstEnd)
		return
	}
	m.scan(&b, text, j, len(text), &h2, anchors, fe2)
	// An anchor the first stream found, or that h held before, keeps its
	// end; any other takes the second stream's.
	for k, a := range anchors {
		if !h.Has(a) {
			firstEnd[k] = fe2[k]
		}
	}
	for w := range h.Set {
		h.Set[w] |= h2.Set[w]
	}
	h.combos[0] |= h2.combos[0]
	h.combos[1] |= h2.combos[1]
}

// clauseEnds reports whether the byte at i ends a clause: a line break, ';',
// '|', a '.', '!' or '?' followed by a space, a quote or the end, or the
// Chinese full stop ("。").
func clauseEnds(text string, i int) bool {
	switch text[i] {
	case '\n', ';', '|':
		return true
	case '.', '!', '?':
		if i+1 >= len(text) {
			return true
		}
		switch text[i+1] {
		case ' ', '\n', '\r', '\t', '"', '\'', '\\':
			return true
		}
	case 0xE3: // "。" is E3 80 82
		return i+2 < len(text) && text[i+1] == 0x80 && text[i+2] == 0x82
	}
	return false
}

// identifierEnd returns the index just past the identifier that the byte at
// i shows, or i when there is none: a URL at "://" (the scheme before it was
// already read, which is harmless), or a path whose '/' starts a word and is
// followed by a letter, a digit or a dot. The identifier ends at the next
// space, quote, bracket or comma.
func identifierEnd(text string, i int) int {
	switch text[i] {
	case ':':
		if i+2 >= len(text) || text[i+1] != '/' || text[i+2] != '/' {
			return i
		}
	case '/':
		if i > 0 && alnum(text[i-1]) || i+1 >= len(text) || !pathByte(text[i+1]) {
			return i
		}
	default:
		return i
	}
	j := i + 1
	for j < len(text) && !identEnd[text[j]] {
		j++
	}
	return j
}

// alnum reports whether b is an ASCII letter or digit.
func alnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// pathByte reports whether b may follow the '/' that starts a path.
func pathByte(b byte) bool {
	return alnum(b) || b == '.' || b == '_' || b == '~'
}

// identEnd marks the bytes that end a URL or a path.
var identEnd = func() (t [256]bool) {
	for _, b := range []byte(" \t\r\n\"'`<>()[]{},\\") {
		t[b] = true
	}
	return t
}()

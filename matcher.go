package erradvisor

import "fmt"

// The matcher finds every phrase of a rule set in one pass over the text, in
// time linear in the text whatever the number of phrases (an Aho–Corasick
// automaton compiled to a dense table). Text and phrases are compared after
// the same normalisation: ASCII letters lower-cased, '_' and '-' read as a
// space, and runs of white space read as one space. So "rate_limit_error",
// "Rate-Limit error" and "rate limit\n error" all contain "rate limit error".

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

// normalizePhrase returns p as the matcher sees it, without leading or
// trailing space.
func normalizePhrase(p string) string {
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

// maxStates bounds the automaton so that states fit in a uint16.
const maxStates = 1<<16 - 1

// matcher is an immutable compiled phrase automaton.
type matcher struct {
	class   [256]uint8 // normalised byte -> byte class (0: a byte no phrase uses)
	raw     [256]uint8 // input byte -> class of its normalised form
	space   [256]bool  // input byte -> it normalises to a space
	nclass  int
	delta   []uint16 // state*nclass + class -> next state
	own     []int32  // state -> the phrase that ends exactly there, or -1
	dict    []uint16 // state -> nearest state on its failure chain with a phrase, or 0
	first   []uint16 // state -> itself when it ends a phrase, else dict; 0: no phrase ends here
	nphrase int
}

// tooLargeError is returned for a rule set whose phrases do not fit: phrase
// is the id of the phrase that did not.
type tooLargeError struct{ phrase int32 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("phrase set too large to compile: more than %d automaton states or 255 distinct bytes", maxStates)
}

// newMatcher compiles phrases (already normalised, non-empty). Phrase i
// reports id i.
func newMatcher(phrases []string) (*matcher, error) {
	m := &matcher{nphrase: len(phrases)}
	// Byte classes: one per distinct byte used by a phrase, 0 for the rest.
	for id, p := range phrases {
		for i := 0; i < len(p); i++ {
			if m.class[p[i]] == 0 {
				m.nclass++
				if m.nclass > 255 {
					return nil, &tooLargeError{phrase: int32(id)}
				}
				m.class[p[i]] = uint8(m.nclass)
			}
		}
	}
	m.nclass++
	for b := range 256 {
		m.raw[b] = m.class[normByte[b]]
		m.space[b] = normByte[b] == ' '
	}

	// Trie, built straight into the dense table: while a row has not been
	// processed below, a non-zero entry in it is a trie edge. Phrases are
	// distinct, so at most one ends at each node.
	nc := m.nclass
	m.delta = make([]uint16, nc, 64*nc)
	m.own = []int32{-1}
	for id, p := range phrases {
		s := 0
		for i := 0; i < len(p); i++ {
			c := int(m.class[p[i]])
			n := int(m.delta[s*nc+c])
			if n == 0 {
				n = len(m.own)
				if n >= maxStates {
					return nil, &tooLargeError{phrase: int32(id)}
				}
				m.delta = append(m.delta, make([]uint16, nc)...)
				m.own = append(m.own, -1)
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
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; m.own[f] >= 0 {
			m.dict[s] = uint16(f)
		} else {
			m.dict[s] = m.dict[f]
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
	return m, nil
}

// hits is the set of phrases found in a text, and where the first occurrence
// of each anchor phrase ended.
type hits struct {
	set []uint64
}

func (h *hits) has(id int32) bool { return h.set[id>>6]&(1<<(uint(id)&63)) != 0 }

// scan adds to h every phrase found in text. For the phrase ids in anchors
// (a small list), firstEnd records the index in text of the last byte of the
// first occurrence, or leaves -1.
//
// The work is linear in the text plus the number of phrases: at each state
// the phrases ending there are those on its dictionary chain, and once a
// phrase on the chain is already in h, so is every phrase after it (they
// were all found together, at its first occurrence).
func (m *matcher) scan(text string, h *hits, anchors []int32, firstEnd []int) {
	state := 0
	prevSpace := true
	nc := m.nclass
	for i := 0; i < len(text); i++ {
		c := text[i]
		sp := m.space[c]
		if sp && prevSpace {
			continue
		}
		prevSpace = sp
		state = int(m.delta[state*nc+int(m.raw[c])])
		for t := int(m.first[state]); t != 0; {
			id := m.own[t]
			w := &h.set[id>>6]
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
	}
}

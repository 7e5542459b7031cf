package erradvisor

import (
	"errors"
	"slices"
)

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
	nclass  int
	delta   []uint16 // state*nclass + class -> next state
	outAt   []uint32 // state -> start of its outputs in outs (outAt[s]..outAt[s+1])
	outs    []int32  // phrase ids
	nphrase int
}

// errTooManyStates is returned for a rule set whose phrases do not fit.
var errTooManyStates = errors.New("phrases too many or too long to compile")

// newMatcher compiles phrases (already normalised, non-empty). Phrase i
// reports id i.
func newMatcher(phrases []string) (*matcher, error) {
	m := &matcher{nphrase: len(phrases)}
	// Byte classes: one per distinct byte used by a phrase, 0 for the rest.
	for _, p := range phrases {
		for i := 0; i < len(p); i++ {
			if m.class[p[i]] == 0 {
				m.nclass++
				if m.nclass > 255 {
					return nil, errTooManyStates
				}
				m.class[p[i]] = uint8(m.nclass)
			}
		}
	}
	m.nclass++

	// Trie.
	type node struct {
		next map[uint8]int
		out  []int32
	}
	nodes := []node{{next: map[uint8]int{}}}
	for id, p := range phrases {
		s := 0
		for i := 0; i < len(p); i++ {
			c := m.class[p[i]]
			n, ok := nodes[s].next[c]
			if !ok {
				if len(nodes) >= maxStates {
					return nil, errTooManyStates
				}
				nodes = append(nodes, node{next: map[uint8]int{}})
				n = len(nodes) - 1
				nodes[s].next[c] = n
			}
			s = n
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}

	// Breadth-first: failure links folded into a dense transition table.
	nc := m.nclass
	m.delta = make([]uint16, len(nodes)*nc)
	fail := make([]int, len(nodes))
	queue := make([]int, 0, len(nodes))
	for c := 0; c < nc; c++ {
		if n, ok := nodes[0].next[uint8(c)]; ok {
			m.delta[c] = uint16(n)
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		nodes[s].out = append(nodes[s].out, nodes[fail[s]].out...)
		for c := 0; c < nc; c++ {
			if n, ok := nodes[s].next[uint8(c)]; ok {
				fail[n] = int(m.delta[fail[s]*nc+c])
				m.delta[s*nc+c] = uint16(n)
				queue = append(queue, n)
			} else {
				m.delta[s*nc+c] = m.delta[fail[s]*nc+c]
			}
		}
	}
	m.outAt = make([]uint32, len(nodes)+1)
	for s := range nodes {
		o := slices.Clone(nodes[s].out)
		slices.Sort(o)
		o = slices.Compact(o)
		m.outAt[s] = uint32(len(m.outs))
		m.outs = append(m.outs, o...)
	}
	m.outAt[len(nodes)] = uint32(len(m.outs))
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
func (m *matcher) scan(text string, h *hits, anchors []int32, firstEnd []int) {
	state := 0
	prev := byte(' ')
	nc := m.nclass
	for i := 0; i < len(text); i++ {
		b := normByte[text[i]]
		if b == ' ' && prev == ' ' {
			continue
		}
		prev = b
		state = int(m.delta[state*nc+int(m.class[b])])
		lo, hi := m.outAt[state], m.outAt[state+1]
		if lo == hi {
			continue
		}
		for _, id := range m.outs[lo:hi] {
			w := &h.set[id>>6]
			bit := uint64(1) << (uint(id) & 63)
			if *w&bit != 0 {
				continue
			}
			*w |= bit
			for k, a := range anchors {
				if a == id {
					firstEnd[k] = i
				}
			}
		}
	}
}

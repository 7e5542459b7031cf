package hint

// ExcessMin is the least count StatesExcess reads: smaller numbers are
// more often statuses, ports, indexes or ages than sizes.
const ExcessMin = 1000

// excessReach bounds the distance, in bytes, between a stated size and
// the smaller bound after it.
const excessReach = 200

// StatesExcess reports whether s states a count followed, within one
// sentence and excessReach bytes, by a smaller one, both at least
// ExcessMin, with a word of comparison between them (">", "exceeds",
// "max", "limit", "but", "超过", ...) and a unit ("tokens", "characters",
// "bytes") next to the first: the shape of a size set against its bound,
// as in "tokens: 12000 > 8192", "(143,211 tokens) exceeds the limit of
// 128,000" or "35000 tokens; model max is 32768". A "k" right after the
// digits counts thousands ("128k"). Numbers that belong to a word, a
// version, a date, a time, an address or a decimal ("gpt-4", "2026-01-02",
// "10:30", "10.0.0.1:4431", "1.5") are not counts. It does not allocate.
func StatesExcess(s string) bool {
	var prev [4]struct {
		v     float64
		end   int
		sized bool
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '.' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\n'):
			n = 0 // a sentence ends: its numbers are not compared with the next one's
			i++
			continue
		case c < '0' || c > '9':
			i++
			continue
		}
		start := i
		v, end, ok := readCount(s, i)
		i = end
		if !ok || attachedBefore(s, start) || v < ExcessMin {
			continue
		}
		sized := unitNear(s, start, end)
		for k := 0; k < n; k++ {
			if p := prev[k]; p.sized && p.v > v && start-p.end <= excessReach && comparing(s[p.end:start]) {
				return true
			}
		}
		if n < len(prev) {
			n++
		} else {
			copy(prev[:], prev[1:])
		}
		prev[n-1].v, prev[n-1].end, prev[n-1].sized = v, end, sized
	}
	return false
}

// readCount reads a count at s[i:]: digits with optional ',' thousands
// groups and an optional 'k'. It returns the value, the index after it and
// whether it is a count (not part of a decimal, version, date, time or
// word).
func readCount(s string, i int) (float64, int, bool) {
	v := 0.0
	digits, groups := 0, 0
	for i < len(s) {
		if s[i] >= '0' && s[i] <= '9' {
			if digits < 18 {
				v = v*10 + float64(s[i]-'0')
			}
			digits++
			i++
			continue
		}
		// A thousands separator: after one to three leading digits, or
		// after an earlier group, and before exactly three digits.
		if s[i] == ',' && (groups > 0 || digits <= 3) && groupOfThree(s, i+1) {
			groups++
			i++
			continue
		}
		break
	}
	if i < len(s) && (s[i] == 'k' || s[i] == 'K') && !wordByte(s, i+1) {
		return v * 1000, i + 1, true
	}
	if i < len(s) {
		switch c := s[i]; {
		case wordByte(s, i):
			return 0, skipWord(s, i), false // "20241022abc", "5s"
		case (c == '.' || c == '-' || c == ':' || c == '/') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			return 0, skipWord(s, i+1), false // decimal, date, time, address, fraction
		}
	}
	return v, i, true
}

// groupOfThree reports whether s[i:] starts with exactly three digits.
func groupOfThree(s string, i int) bool {
	if i+3 > len(s) {
		return false
	}
	for j := i; j < i+3; j++ {
		if s[j] < '0' || s[j] > '9' {
			return false
		}
	}
	return i+3 == len(s) || s[i+3] < '0' || s[i+3] > '9'
}

// attachedBefore reports whether the number starting at s[i] is part of
// something before it: a word ("gpt4", "v1"), a version or address
// ("1.2", "10.0.0.1"), a date or time, an id ("req_123", "id-456").
func attachedBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	switch c := s[i-1]; {
	case wordByte(s, i-1), c == '_', c == '#':
		return true
	case c == '.' || c == '-' || c == ':' || c == '/':
		return i >= 2 && (wordByte(s, i-2) || s[i-2] >= '0' && s[i-2] <= '9')
	}
	return false
}

// wordByte reports whether s[i] is an ASCII letter. Letters of other
// scripts do not attach: Chinese puts no space before a number ("超过8192").
func wordByte(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// skipWord returns the index after the run of letters, digits and joiners
// ('.', '-', ':', '/', '_') at s[i:].
func skipWord(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' ||
			c == ':' || c == '/' || c == '_') {
			break
		}
		i++
	}
	return i
}

// comparisonCues are the words that set a count against a bound. They are
// compared as ASCII-case-insensitive substrings.
var comparisonCues = [...]string{">", "exceed", "more than", "greater", "larger", "longer", "over", "above",
	"beyond", "limit", "max", "at most", "allowed", "but", "however", "only", "support", "context", "window",
	// a bound stated as what the count must stay under ("must be < 4096")
	"<", "less than", "lower than", "smaller than", "up to",
	"超过", "超出", "大于", "小于", "上限", "限制", "最大", "超え", "초과"}

// comparing reports whether the text between two counts holds a word of
// comparison.
func comparing(between string) bool {
	for _, cue := range comparisonCues {
		if containsFold(between, cue) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains sub, ASCII letters compared
// case-insensitively. sub is lower case.
func containsFold(s, sub string) bool { return indexFold(s, sub) >= 0 }

// unitReach bounds the distance between a count and its unit.
const unitReach = 24

// units name what a size counts.
var units = [...]string{"token", "char", "byte", "字符", "词元"}

// unitNear reports whether a unit is named within unitReach bytes before
// or after the count at s[start:end].
func unitNear(s string, start, end int) bool {
	before := s[max(0, start-unitReach):start]
	after := s[end:min(len(s), end+unitReach)]
	for _, u := range units {
		if containsFold(before, u) || containsFold(after, u) {
			return true
		}
	}
	return false
}

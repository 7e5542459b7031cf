package hint

// budgetReach bounds how far after an output-budget or window phrase its
// count may stand: "'max_tokens' or 'max_completion_tokens' is too large:
// 64000" puts the count 45 bytes after "max_tokens".
const budgetReach = 64

// budgetPhrases name the output budget a request asks for, in the forms
// APIs print it ('_' is not folded here, so both spellings are listed).
var budgetPhrases = [...]string{"max_tokens", "max tokens", "max_completion_tokens", "max_new_tokens",
	"max_output_tokens", "maxoutputtokens", "max output tokens"}

// completionPhrases follow the output budget's count where OpenAI accounts
// for a request ("you requested 4135 tokens (39 in the messages, 4096 in
// the completion)").
var completionPhrases = [...]string{" in the completion", " for the completion"}

// windowPhrases name the context window itself ("context length is" also
// ends "This model's maximum context length is").
var windowPhrases = [...]string{"context length is", "context window is", "context window of", "context length of",
	"max_model_len"}

// BudgetFillsWindow reports whether s states an output budget (a max_tokens
// phrase with its count after it, or a count "in the completion") at least as
// large as the context window it also states: "'max_tokens' is too large:
// 65536. This model's maximum context length is 65536 tokens". Then no
// compaction of the prompt makes the request fit; only a smaller budget
// does. Both counts are read the way StatesExcess reads them (a count after
// the phrase, within a few words, not part of a word, version or date). It
// does not allocate.
func BudgetFillsWindow(s string) bool {
	window, at, ok := countAfter(s, windowPhrases[:])
	if !ok {
		return false
	}
	budget, bat, ok := countAfter(s, budgetPhrases[:])
	if !ok {
		budget, bat, ok = countBefore(s, completionPhrases[:])
	}
	return ok && bat != at && budget >= window
}

// countBefore returns the count that ends just before the first occurrence
// of any of phrases that has one ("4096 in the completion"), and where it
// starts.
func countBefore(s string, phrases []string) (v float64, at int, ok bool) {
	ok = eachFold(s, phrases, func(start, _ int) bool {
		k := start
		for k > 0 && (s[k-1] >= '0' && s[k-1] <= '9' || s[k-1] == ',') {
			k--
		}
		for k < start && s[k] == ',' {
			k++
		}
		if k == start {
			return false
		}
		n, e, good := readCount(s, k)
		if !good || e != start || attachedBefore(s, k) || n < 1 {
			return false
		}
		v, at = n, k
		return true
	})
	return v, at, ok
}

// countAfter returns the first count that follows, within budgetReach
// bytes and in the same clause, the first occurrence of any of phrases that
// has one, and where the count starts.
func countAfter(s string, phrases []string) (v float64, at int, ok bool) {
	ok = eachFold(s, phrases, func(_, end int) bool {
		v, at, ok = firstCount(s, end, min(len(s), end+budgetReach))
		return ok
	})
	return v, at, ok
}

// eachFold calls f with the start and end of each occurrence in s of each
// of phrases (compared as indexFold does), phrase by phrase, until f
// reports true; it reports whether f did.
func eachFold(s string, phrases []string, f func(start, end int) bool) bool {
	for _, p := range phrases {
		for from := 0; from < len(s); {
			i := indexFold(s[from:], p)
			if i < 0 {
				break
			}
			start := from + i
			if f(start, start+len(p)) {
				return true
			}
			from = start + len(p)
		}
	}
	return false
}

// firstCount returns the first count in s[i:end], before the clause ends
// (a line break, ';', or '.' before a blank), that is no part of a word, a
// version or a date, and at least 1, and where it starts.
func firstCount(s string, i, end int) (float64, int, bool) {
	for i < end {
		c := s[i]
		if c == '\n' || c == ';' || c == '.' && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') {
			return 0, 0, false
		}
		if c < '0' || c > '9' {
			i++
			continue
		}
		start := i
		v, e, ok := readCount(s, i)
		i = e
		if ok && !attachedBefore(s, start) && v >= 1 {
			return v, start, true
		}
	}
	return 0, 0, false
}

// indexFold returns the index of the first occurrence of sub in s, ASCII
// letters compared case-insensitively, or -1. sub is lower case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return i
		}
	}
	return -1
}

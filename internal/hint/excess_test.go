package hint

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatesExcess(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"Error: tokens: 12000 > 8192", true},
		{"This request (143,211 tokens) exceeds the model's limit of 128,000 tokens.", true},
		{"prompt has 35000 tokens; model max is 32768", true},
		{"input_tokens (210000) + max_tokens (64000) > context_window (200000)", true},
		{"Requested 140000 tokens, but the model supports at most 128k.", true},
		{"请求的token数(140000)超过了模型上限(131072)", true},
		{"Prompt of 9,500 characters is larger than the maximum allowed 8,000", true},
		// A bound first and a larger count after it is another shape.
		{"maximum context length is 8192 tokens, however you requested 9000 tokens", false},
		{"Limit 30000, Requested 45000", false},
		// Numbers in different sentences are not compared.
		{"Used 12000 tokens. The limit is 8192.", false},
		{"Used 12000 tokens\nlimit 8192", false},
		// Not counts: small numbers, versions, dates, times, addresses,
		// decimals, ids and words.
		{"HTTP 500: max 404 tokens", false},
		{"dial tcp 10.0.0.2:44310->1.1.1.1:4431: i/o timeout", false},
		{"at 2026-11-30 12:00:00, retry 2025-01-01", false},
		{"claude-sonnet-20250514 then claude-3-20240229", false},
		{"took 12000.5 ms, then 8000.25 ms", false},
		{"req_88888 after req_77777", false},
		{"model v12000 and v8000", false},
		{"12000 tokens was fine", false},
		// Two counts with no word of comparison between them.
		{"'Content-Length': '7080', 'Date': '17 Apr 2024'", false},
		{"ids 9000 and 8000", false},
		{"", false},
		{"9999999999999999999999999 tokens > 1", false},
		{"9999999999999999999999999 tokens > 1000", true},
		{"5000 tokens and 4000", false},
		// The larger count names no unit: a header dump, not a size.
		{"'max_age':604800}', 'Expires': 'Thu, 01 Jan 1970 00:00:01 GMT'", false},
	} {
		if got := StatesExcess(tt.text); got != tt.want {
			t.Errorf("StatesExcess(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestReadCount(t *testing.T) {
	type result struct {
		V   float64
		End int
		OK  bool
	}
	for _, tt := range []struct {
		text string
		want result
	}{
		{"128,000 tokens", result{128000, 7, true}},
		{"1,234,567)", result{1234567, 9, true}},
		{"128k tokens", result{128000, 4, true}},
		{"128kb", result{0, 5, false}},
		{"300000,262144", result{300000, 6, true}},
		{"12,34", result{12, 2, true}},
		{"2026-01-02", result{0, 10, false}},
		{"1.5", result{0, 3, false}},
		{"5s", result{0, 2, false}},
	} {
		v, end, ok := readCount(tt.text, 0)
		if diff := cmp.Diff(tt.want, result{v, end, ok}); diff != "" {
			t.Errorf("readCount(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestStatesExcessAllocs(t *testing.T) {
	s := strings.Repeat("prompt (143,211 tokens) exceeds 128k; ", 50)
	if n := testing.AllocsPerRun(100, func() { StatesExcess(s) }); n != 0 {
		t.Errorf("StatesExcess allocates %v times", n)
	}
}

// FuzzStatesExcess checks StatesExcess against a plain oracle: the text
// states an excess exactly when some count is followed, in the same
// sentence and within reach, by a smaller one.
func FuzzStatesExcess(f *testing.F) {
	for _, s := range []string{"12000 tokens > 8192", "1,234,567 bytes over 1,000", "128k tokens > 100000",
		"2026-01-02 1999 chars max 1000", "a 5000 tokens. 4000", "x9000 > 8000", "9000 tokens\n> 8000",
		"12,34,567 > 2000", "9000 tokens and 8000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		type num struct {
			v          float64
			start, end int
			sentence   int
			sized      bool
		}
		var nums []num
		sentence := 0
		for i := 0; i < len(s); {
			c := s[i]
			if c == '\n' || c == '.' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\n') {
				sentence++
				i++
				continue
			}
			if c < '0' || c > '9' {
				i++
				continue
			}
			v, end, ok := readCount(s, i)
			if end <= i || end > len(s) {
				t.Fatalf("readCount(%q, %d) ends at %d", s, i, end)
			}
			if ok && !attachedBefore(s, i) && v >= ExcessMin {
				nums = append(nums, num{v, i, end, sentence, unitNear(s, i, end)})
			}
			i = end
		}
		want := false
		for b := range nums {
			// StatesExcess keeps the last four counts of a sentence.
			for a := max(0, b-4); a < b; a++ {
				if nums[a].sized && nums[a].sentence == nums[b].sentence && nums[a].v > nums[b].v && nums[b].start-nums[a].end <= excessReach &&
					comparing(s[nums[a].end:nums[b].start]) {
					want = true
				}
			}
		}
		if got := StatesExcess(s); got != want {
			t.Fatalf("StatesExcess(%q) = %v, oracle %v", s, got, want)
		}
	})
}

func TestReadNumberBefore(t *testing.T) {
	type result struct {
		V  float64
		OK bool
	}
	for _, tt := range []struct {
		text string
		want result
	}{
		{"请 117 ", result{117, true}},
		{"请1", result{1, true}},
		{"等待 2.5 ", result{2.5, true}},
		{"model-v2", result{0, false}},
		{"x12", result{0, false}},
		{"请 .5", result{0, false}},
		{"", result{0, false}},
		{"请 1234567890123", result{0, false}},
	} {
		v, ok := readNumberBefore(tt.text, len(tt.text))
		if diff := cmp.Diff(tt.want, result{v, ok}); diff != "" {
			t.Errorf("readNumberBefore(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestBudgetFillsWindow(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"'max_tokens' or 'max_completion_tokens' is too large: 65536. This model's maximum context length is 65536 tokens and your request has 10969 input tokens (65536 > 65536 - 10969).", true},
		{"API Error: 400 'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context length is 20000 tokens", true},
		{"max_tokens=8192 but the context length is 4096", true},
		{"MAX_NEW_TOKENS (4,096) exceeds max_model_len 2048", true},
		// OpenAI's accounting of a request whose completion alone fills the window.
		{"This model's maximum context length is 4096 tokens. However, you requested 4135 tokens (39 in the messages, 4096 in the completion).", true},
		{"This model's maximum context length is 2049 tokens, however you requested 4023 tokens (28 in your prompt; 3995 for the completion).", true},
		{"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).", false},
		// A budget that leaves room: the prompt is what does not fit.
		{"'max_tokens' or 'max_completion_tokens' is too large: 16384. This model's maximum context length is 32768 tokens and your request has 20000 input tokens.", false},
		// Only one of the two stated.
		{"max_tokens is too large: 65536", false},
		{"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.", false},
		// Not counts.
		{"max_tokens must be an integer; maximum context length is 8192 tokens", false},
		{"max_tokens: v2.1 ... context length is 4096", false},
		{"", false},
	} {
		if got := BudgetFillsWindow(tt.text); got != tt.want {
			t.Errorf("BudgetFillsWindow(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestBudgetFillsWindowAllocs(t *testing.T) {
	s := strings.Repeat("max_tokens is too large: 65536; maximum context length is 4096 tokens. ", 50)
	if n := testing.AllocsPerRun(100, func() { BudgetFillsWindow(s) }); n != 0 {
		t.Errorf("BudgetFillsWindow allocates %v times", n)
	}
}

// FuzzBudgetFillsWindow checks properties of BudgetFillsWindow on any text:
// it never panics, it reads letters case-insensitively, and it holds only
// where a budget phrase and a window phrase both occur.
func FuzzBudgetFillsWindow(f *testing.F) {
	for _, s := range []string{"max_tokens 9000, context length is 8192", "MAX_TOKENS: 1,024 max_model_len 1k",
		"context window of 8192 max tokens 8192", "max tokens 2026-01-02 context length is 1", "max_tokens"} {
		f.Add(s)
	}
	swap := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			switch {
			case c >= 'a' && c <= 'z':
				b[i] = c - 'a' + 'A'
			case c >= 'A' && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
		return string(b)
	}
	lower := func(s string) string { return strings.ToLower(swap(swap(s))) }
	f.Fuzz(func(t *testing.T, s string) {
		got := BudgetFillsWindow(s)
		if got != BudgetFillsWindow(swap(s)) {
			t.Fatalf("BudgetFillsWindow(%q) = %v, but %v with letters' case swapped", s, got, !got)
		}
		if !got {
			return
		}
		l := lower(s)
		has := func(phrases []string) bool {
			for _, p := range phrases {
				if strings.Contains(l, p) {
					return true
				}
			}
			return false
		}
		if !has(budgetPhrases[:]) && !has(completionPhrases[:]) || !has(windowPhrases[:]) {
			t.Fatalf("BudgetFillsWindow(%q) holds without both a budget and a window phrase", s)
		}
	})
}

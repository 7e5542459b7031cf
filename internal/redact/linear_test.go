package redact

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// pathological are texts that would make a backtracking or rescanning
// redactor quadratic.
var pathological = map[string]string{
	"key colons":      "key:",
	"key equals":      "key=",
	"api_key equals":  "api_key=a",
	"quoted names":    `"token":"`,
	"urls":            "://u:",
	"url wrapped":     "://u:p\n",
	"pem begins":      "-----BEGIN PRIVATE KEY",
	"jwt starts":      "eyJ.",
	"bearer":          "bearer ",
	"prefix":          "sk-",
	"wrapped prefix":  "sk-a1\n",
	"escapes":         `\u0070%3D\`,
	"authorization":   "Authorization: ",
	"cookie wrapped":  "Cookie: a1\n",
	"dots":            "ya29.",
	"invisible joins": "a\u200b",
	"flags":           "--token a1 -u b:c ",
}

// TestLinear checks that redacting 1 MiB of each pathological text takes
// time in proportion to 64 KiB of it, give or take a wide margin.
func TestLinear(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing")
	}
	for name, unit := range pathological {
		t.Run(name, func(t *testing.T) {
			small := strings.Repeat(unit, (64<<10)/len(unit))
			big := strings.Repeat(unit, (1<<20)/len(unit))
			ts, tb := timeString(small), timeString(big)
			// 16 times the text; allow 64 times the time (noise, caches).
			if tb > 64*ts+100*time.Millisecond {
				t.Errorf("64 KiB in %v, 1 MiB in %v: not linear", ts, tb)
			}
		})
	}
}

func timeString(s string) time.Duration {
	best := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		String(s)
		best = min(best, time.Since(start))
	}
	return best
}

// benchText is about n bytes of a provider error body followed by log
// lines, with one key in it.
func benchText(n int) string {
	var b strings.Builder
	b.WriteString(`429 {"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500.","code":"rate_limit_exceeded"}} key=sk-abcdefghijklmnopqrstuv `)
	for b.Len() < n {
		b.WriteString("upstream trace line with some words and a number 12345; ")
	}
	return b.String()[:n]
}

func BenchmarkString(b *testing.B) {
	for _, n := range []int{300, 8 << 10, 1 << 20} {
		s := benchText(n)
		b.Run(strings.TrimSpace(byteSize(n)), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = String(s)
			}
		})
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

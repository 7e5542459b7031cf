package redact

import (
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

package erradvisor

import (
	"net/http"
	"time"

	"github.com/erradvisor/erradvisor/internal/hint"
)

// maxHint bounds every stated wait, in headers and in text alike.
const maxHint = hint.MaxWait

// RetryAfter returns the wait the response headers ask for: retry-after-ms,
// then retry-after (whole or fractional seconds, or an HTTP date measured
// from at), then the reset time of an exhausted OpenAI-style
// (x-ratelimit-reset-requests / -tokens) or Anthropic-style
// (anthropic-ratelimit-*-reset) limit. It returns 0 when no usable value is
// present; an HTTP date or a reset timestamp needs a non-zero at.
func RetryAfter(h http.Header, at time.Time) time.Duration {
	if len(h) == 0 {
		return 0
	}
	if v := header(h, "Retry-After-Ms", "retry-after-ms"); v != "" {
		if f, ok := hint.ParseNumber(v); ok {
			if d, ok := hint.Seconds(f / 1000); ok {
				return d
			}
		}
	}
	if v := header(h, "Retry-After", "retry-after"); v != "" {
		if f, ok := hint.ParseNumber(v); ok {
			if d, ok := hint.Seconds(f); ok {
				return d
			}
		} else if !at.IsZero() {
			if t, err := http.ParseTime(v); err == nil {
				if d := t.Sub(at); d > 0 && d <= maxHint {
					return d
				}
			}
		}
	}
	// OpenAI, Groq and others: durations such as "6m0s" for the limit that
	// is exhausted.
	for _, k := range [...][4]string{
		{"X-Ratelimit-Remaining-Requests", "x-ratelimit-remaining-requests", "X-Ratelimit-Reset-Requests", "x-ratelimit-reset-requests"},
		{"X-Ratelimit-Remaining-Tokens", "x-ratelimit-remaining-tokens", "X-Ratelimit-Reset-Tokens", "x-ratelimit-reset-tokens"},
	} {
		if header(h, k[0], k[1]) == "0" {
			if d, _, ok := hint.ParseDuration(header(h, k[2], k[3]), 0, false); ok {
				return d
			}
		}
	}
	// Anthropic: RFC 3339 reset times.
	if !at.IsZero() {
		for _, k := range [...][4]string{
			{"Anthropic-Ratelimit-Requests-Remaining", "anthropic-ratelimit-requests-remaining", "Anthropic-Ratelimit-Requests-Reset", "anthropic-ratelimit-requests-reset"},
			{"Anthropic-Ratelimit-Tokens-Remaining", "anthropic-ratelimit-tokens-remaining", "Anthropic-Ratelimit-Tokens-Reset", "anthropic-ratelimit-tokens-reset"},
			{"Anthropic-Ratelimit-Input-Tokens-Remaining", "anthropic-ratelimit-input-tokens-remaining", "Anthropic-Ratelimit-Input-Tokens-Reset", "anthropic-ratelimit-input-tokens-reset"},
			{"Anthropic-Ratelimit-Output-Tokens-Remaining", "anthropic-ratelimit-output-tokens-remaining", "Anthropic-Ratelimit-Output-Tokens-Reset", "anthropic-ratelimit-output-tokens-reset"},
		} {
			if header(h, k[0], k[1]) == "0" {
				if t, err := time.Parse(time.RFC3339, header(h, k[2], k[3])); err == nil {
					if d := t.Sub(at); d > 0 && d <= maxHint {
						return d
					}
				}
			}
		}
	}
	return 0
}

// header returns the first value of a header under its canonical key or,
// for hosts that built the map by hand, its lower-case key.
func header(h http.Header, canonical, lower string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	if v := h[lower]; len(v) > 0 {
		return v[0]
	}
	return ""
}

package erradvisor

import (
	"net/http"
	"testing"
	"time"
)

func FuzzClassify(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.Provider, fx.Status, fx.Code, fx.Message, "")
	}
	f.Add("cerebras", 400, "", "400 status code (no body)", "")
	f.Add("", 0, "", "try again in 99999999999999999999999 days", "1e309")
	f.Add("", 0, "", `"resets_at": 99999999999999`, "-1")
	f.Add("", 0, "", "429 status code", "Mon, 02 Jan 2006 15:04:05 GMT")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, provider string, status int, code, msg, retryAfter string) {
		fl := Failure{Provider: provider, Status: status, Code: code, Message: msg, At: at,
			Header: http.Header{"Retry-After": {retryAfter}}}
		got := Classify(fl)
		if again := Classify(fl); again != got {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}
		if !got.Class.Valid() {
			t.Fatalf("invalid class %d", got.Class)
		}
		if rc, ok := got.Reason.Class(); !ok || rc != got.Class {
			t.Fatalf("reason %q does not belong to class %s", got.Reason, got.Class)
		}
		if (got.Rule == "") != (got.Class == Unknown) {
			t.Fatalf("rule %q with class %s", got.Rule, got.Class)
		}
		if got.RetryAfter < 0 || got.RetryAfter > maxHint {
			t.Fatalf("retry after %v out of range", got.RetryAfter)
		}
		if !got.ResetAt.IsZero() && got.Class != Quota && got.Class != Billing {
			t.Fatalf("reset time on class %s", got.Class)
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"20", "2.5", "-1", "NaN", "Inf", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "", " 7 ",
		"99999999999999999999999999", "6m0s", "0.000000001"} {
		f.Add(s, s, s, "Please try again in "+s)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, secs, reset, body string) {
		h := http.Header{
			"Retry-After-Ms":                       {ms},
			"Retry-After":                          {secs},
			"X-Ratelimit-Remaining-Tokens":         {"0"},
			"X-Ratelimit-Reset-Tokens":             {reset},
			"Anthropic-Ratelimit-Tokens-Remaining": {"0"},
			"Anthropic-Ratelimit-Tokens-Reset":     {reset},
		}
		for _, when := range []time.Time{at, {}} {
			d := RetryAfter(h, when)
			if d < 0 || d > maxHint {
				t.Fatalf("RetryAfter = %v", d)
			}
		}
		for i := 0; i <= len(body); i++ {
			d, n, ok := parseDuration(body, i, i%2 == 0)
			if d < 0 || d > maxHint || n < i || n > len(body) || !ok && d != 0 {
				t.Fatalf("parseDuration(%q, %d) = %v, %d, %v", body, i, d, n, ok)
			}
			_, _ = parseEpoch(body, i)
			_, _ = parseTimestamp(body, i)
			if s := statusAt(body, i); s != 0 && (s < 100 || s > 599) {
				t.Fatalf("statusAt = %d", s)
			}
		}
		cl := Classify(Failure{Message: body, At: at})
		if cl.RetryAfter < 0 || cl.RetryAfter > maxHint {
			t.Fatalf("body wait %v", cl.RetryAfter)
		}
	})
}

func FuzzRules(f *testing.F) {
	f.Add([]byte(defaultRulesYAML))
	f.Add([]byte("rules:\n  - id: x\n    class: quota\n    reason: quota\n    match: [a]\n    examples: [a]\n"))
	f.Add([]byte("rules: [{id: x, class: transient, reason: server, regex: '(a'}]"))
	f.Add([]byte("rules: !!binary AAAA"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseRules("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		c, err := NewClassifier(set)
		if err != nil {
			return
		}
		_ = c.Classify(Failure{Message: string(data), Status: 429, Provider: "openai"})
		_ = set.Rules()
	})
}

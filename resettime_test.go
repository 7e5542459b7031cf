package erradvisor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mustZone loads an IANA zone or fails the test.
func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestClassifyResetTimes runs whole messages through Classify: the reset time
// a quota states becomes ResetAt when Failure.At is set, and nothing when it
// is not.
func TestClassifyResetTimes(t *testing.T) {
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	kl := mustZone(t, "Asia/Kuala_Lumpur")
	ny := mustZone(t, "America/New_York")
	ist := mustZone(t, "Asia/Calcutta")
	usage := Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit"}
	with := func(c Classification, reset time.Time) Classification { c.ResetAt = reset; return c }
	tests := []struct {
		msg  string
		want Classification // with At set; without, the same with no ResetAt
	}{
		{"You've hit your limit · resets 4pm (Asia/Kuala_Lumpur)", with(usage, time.Date(2026, 6, 11, 16, 0, 0, 0, kl))},
		{"You've hit your limit · resets 3pm", with(usage, time.Date(2026, 6, 10, 15, 0, 0, 0, time.UTC))},
		{"You've hit your session limit · resets 11:30am (America/New_York)", with(usage, time.Date(2026, 6, 10, 11, 30, 0, 0, ny))},
		{"You've hit your limit · resets Jan 30, 11:30am (Asia/Calcutta)", with(usage, time.Date(2027, 1, 30, 11, 30, 0, 0, ist))},
		{"Your usage limit resets on January 30 at 11:30 AM", with(usage, time.Date(2027, 1, 30, 11, 30, 0, 0, time.UTC))},
		{"You've hit your usage limit. Upgrade to Plus to continue using Codex, or try again at 09:20:40 AM.",
			with(usage, time.Date(2026, 6, 10, 9, 20, 40, 0, time.UTC))},
		{"You've hit your usage limit, try again at 21:05", with(usage, time.Date(2026, 6, 10, 21, 5, 0, 0, time.UTC))},
		{"Usage limit reached for 5 hour. Your limit will reset at 2026-06-10 09:05:49",
			with(Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit"}, time.Date(2026, 6, 10, 9, 5, 49, 0, time.UTC))},
		{"usage limit exceeded, 5-hour usage limit reached, reset at 2026-06-10T09:05:49Z",
			with(usage, time.Date(2026, 6, 10, 9, 5, 49, 0, time.UTC))},
		{"You've hit your limit · resets 4pm (Mars/Olympus_Mons)", usage},
		{"You've hit your limit · resets in 16 days",
			Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit", RetryAfter: 16 * 24 * time.Hour, ResetAt: at.Add(16 * 24 * time.Hour)}},
	}
	for _, tt := range tests {
		got := Classify(Failure{Message: tt.msg, At: at})
		if diff := cmp.Diff(tt.want, got, ignoreEvidence); diff != "" {
			t.Errorf("%q with At (-want +got):\n%s", tt.msg, diff)
		}
		want := tt.want
		want.ResetAt = time.Time{}
		if tt.msg == "usage limit exceeded, 5-hour usage limit reached, reset at 2026-06-10T09:05:49Z" {
			want.ResetAt = tt.want.ResetAt // an absolute time needs no At
		}
		got = Classify(Failure{Message: tt.msg})
		if diff := cmp.Diff(want, got, ignoreEvidence); diff != "" {
			t.Errorf("%q without At (-want +got):\n%s", tt.msg, diff)
		}
	}
}

// TestTildeWaits reads approximate waits written with a tilde.
func TestTildeWaits(t *testing.T) {
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		msg  string
		want Classification
	}{
		{"429 Too Many Requests: rate limited, ~88s", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 88 * time.Second}},
		{"Rate limit exceeded, reset ~2m", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 2 * time.Minute}},
		{"Too many requests, please try again in ~30 seconds", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 30 * time.Second}},
		{"Server overloaded; retry in ~1.5s", Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "transient.overloaded", RetryAfter: 1500 * time.Millisecond}},
		{"You have hit your ChatGPT usage limit (team plan). Try again in ~406 min.",
			Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit", RetryAfter: 406 * time.Minute, ResetAt: at.Add(406 * time.Minute)}},
		// Not waits: sizes, paths and upper-case units.
		{"Rate limit exceeded: the prompt has ~1.5M tokens", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit"}},
		{"Rate limit exceeded (config in ~/.pi/agent)", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit"}},
		{"Rate limit exceeded: ~400k tokens per minute", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit"}},
		{"Rate limit exceeded ~ 5s", Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Classify(Failure{Message: tt.msg, At: at}), ignoreEvidence); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.msg, diff)
		}
	}
}

// TestFixtureResetTimes reads the reset times of real fixture texts, at the
// time every fixture is classified at (2026-01-01 00:00 UTC) and without an
// observation time, when only an absolute time is read.
func TestFixtureResetTimes(t *testing.T) {
	ist := mustZone(t, "Asia/Calcutta")
	berlin := mustZone(t, "Europe/Berlin")
	chicago := mustZone(t, "America/Chicago")
	minimax := time.Date(2026, 5, 15, 15, 0, 0, 0, time.UTC)
	tests := map[string]struct{ at, noAt time.Time }{
		"anthropic-claude-code-hit-limit-resets-date":        {at: time.Date(2026, 1, 30, 11, 30, 0, 0, ist)},
		"anthropic-claude-code-session-limit":                {at: time.Date(2026, 1, 1, 17, 40, 0, 0, berlin)},
		"anthropic-claude-code-weekly-limit":                 {at: time.Date(2026, 7, 31, 2, 0, 0, 0, time.UTC)},
		"anthropic-claude-code-5-hour-limit":                 {at: time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC)},
		"anthropic-claude-code-usage-limit-reached-reset-at": {at: time.Date(2026, 1, 1, 9, 0, 0, 0, chicago)},
		"anthropic-claude-ai-hit-limit-messages":             {at: time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC)},
		"openai-codex-usage-limit-try-again-at":              {at: time.Date(2026, 7, 5, 20, 19, 0, 0, time.UTC)},
		"gateways-zai-1308-usage-limit-5-hour":               {at: time.Date(2026, 9, 9, 5, 38, 28, 0, time.UTC)},
		"gateways-minimax-token-plan-5-hour-usage-limit":     {at: minimax, noAt: minimax},
		"gateways-minimax-opengateway-free-quota-402":        {at: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)},
		// 2025-06-14, long before the observation time; without one it is
		// read as it stands.
		"anthropic-claude-code-usage-limit-epoch": {noAt: time.Unix(1749924000, 0).UTC()},
		// "when the current 7-day window ends" names no time.
		"gateways-kimi-code-weekly-usage-limit-access-terminated": {},
	}
	seen := 0
	for _, fx := range loadFixtures(t) {
		tt, ok := tests[fx.Name]
		if !ok {
			continue
		}
		seen++
		f := fx.failure()
		if diff := cmp.Diff(tt.at, Classify(f).ResetAt); diff != "" {
			t.Errorf("%s: ResetAt (-want +got):\n%s\nmessage: %.200s", fx.Name, diff, fx.Message)
		}
		f.At = time.Time{}
		if diff := cmp.Diff(tt.noAt, Classify(f).ResetAt); diff != "" {
			t.Errorf("%s without At: ResetAt (-want +got):\n%s", fx.Name, diff)
		}
	}
	if seen != len(tests) {
		t.Errorf("found %d of the %d fixtures named here", seen, len(tests))
	}
}

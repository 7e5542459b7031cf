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

// TestParseResetAt reads reset times as people write them, with the
// observation time set and unset.
func TestParseResetAt(t *testing.T) {
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC) // a Wednesday, 09:00 UTC
	berlinAt := at.In(mustZone(t, "Europe/Berlin"))    // the same instant, 11:00 in Berlin
	kl := mustZone(t, "Asia/Kuala_Lumpur")
	ny := mustZone(t, "America/New_York")
	ist := mustZone(t, "Asia/Calcutta")
	tests := []struct {
		name string
		text string
		at   time.Time
		want time.Time // zero: no reset time
	}{
		{"clock with zone, passed today", "4pm (Asia/Kuala_Lumpur)", at, time.Date(2026, 6, 11, 16, 0, 0, 0, kl)},
		{"clock without zone", "3pm", at, time.Date(2026, 6, 10, 15, 0, 0, 0, time.UTC)},
		{"clock with minutes and zone", "11:30am (America/New_York)", at, time.Date(2026, 6, 10, 11, 30, 0, 0, ny)},
		{"clock exactly at", "9am", at, at},
		{"clock just passed", "8:59am", at, time.Date(2026, 6, 11, 8, 59, 0, 0, time.UTC)},
		{"clock in at's location", "3pm", berlinAt, time.Date(2026, 6, 10, 15, 0, 0, 0, berlinAt.Location())},
		{"month day clock zone, next year", "Jan 30, 11:30am (Asia/Calcutta)", at, time.Date(2027, 1, 30, 11, 30, 0, 0, ist)},
		{"month day later this year", "Jul 31, 2am (UTC)", at, time.Date(2026, 7, 31, 2, 0, 0, 0, time.UTC)},
		{"on month day at clock", "on January 30 at 11:30 AM", at, time.Date(2027, 1, 30, 11, 30, 0, 0, time.UTC)},
		{"ordinal day with year", "Jul 5th, 2026 8:19 PM.", at, time.Date(2026, 7, 5, 20, 19, 0, 0, time.UTC)},
		{"abbreviation with dot", "Sept. 3 at 10:00", at, time.Date(2026, 9, 3, 10, 0, 0, 0, time.UTC)},
		{"clock with seconds and AM", "09:20:40 AM", at, time.Date(2026, 6, 10, 9, 20, 40, 0, time.UTC)},
		{"24-hour clock", "21:05", at, time.Date(2026, 6, 10, 21, 5, 0, 0, time.UTC)},
		{"12am is midnight", "12am", at, time.Date(2026, 6, 11, 0, 0, 0, 0, time.UTC)},
		{"12pm is noon", "12:00 pm", at, time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)},
		{"date time without zone", "2026-06-10 09:05:49", at, time.Date(2026, 6, 10, 9, 5, 49, 0, time.UTC)},
		{"date time in at's location", "2026-06-10 09:05:49", berlinAt, time.Date(2026, 6, 10, 9, 5, 49, 0, berlinAt.Location())},
		{"date T time without zone", "2026-06-10T09:05:49.", at, time.Date(2026, 6, 10, 9, 5, 49, 0, time.UTC)},
		{"RFC 3339", "2026-06-10T09:05:49Z", at, time.Date(2026, 6, 10, 9, 5, 49, 0, time.UTC)},
		{"bare UTC", "10:00 UTC. Top up", at, time.Date(2026, 6, 10, 10, 0, 0, 0, time.UTC)},
		{"Z after clock", "2026-06-10 10:00:00Z", at, time.Date(2026, 6, 10, 10, 0, 0, 0, time.UTC)},
		{"a note in parentheses is not a zone", "10:00 (2056)", at, time.Date(2026, 6, 10, 10, 0, 0, 0, time.UTC)},
		{"Unix time", "1781082349", at, time.Unix(1781082349, 0)},

		// Nothing rather than a wrong time.
		{"unknown zone", "4pm (Mars/Olympus_Mons)", at, time.Time{}},
		{"abbreviation that is no zone name", "4pm (PST)", at, time.Time{}},
		{"the machine's zone", "4pm (Local)", at, time.Time{}},
		{"offset not read", "10:00 UTC+8", at, time.Time{}},
		{"no such date", "Feb 30, 9am", at, time.Time{}},
		{"Feb 29 without a leap year ahead", "Feb 29, 9am", at, time.Time{}},
		{"date long past", "2025-01-01 00:00:00", at, time.Time{}},
		{"date too far ahead", "2028-01-01 00:00:00", at, time.Time{}},
		{"RFC 3339 long past", "2024-06-10T09:05:49Z", at, time.Time{}},
		{"duration, not a clock", "in 16 days", at, time.Time{}},
		{"count, not a clock", "5 hours", at, time.Time{}},
		{"hour out of range", "25:00", at, time.Time{}},
		{"13pm", "13pm", at, time.Time{}},
		{"minutes out of range", "10:75", at, time.Time{}},
		{"month without a clock", "Jan 30", at, time.Time{}},
		{"word that starts like a month", "decided at 10:00", at, time.Time{}},
		{"am inside a word", "4 amazing things", at, time.Time{}},
		{"when the window ends", "when the current 7-day window ends", at, time.Time{}},

		// Without the observation time only an absolute time is read.
		{"clock without at", "4pm (Asia/Kuala_Lumpur)", time.Time{}, time.Time{}},
		{"month day without at", "Jan 30, 11:30am (Asia/Calcutta)", time.Time{}, time.Time{}},
		{"date time without at", "2026-06-10 09:05:49", time.Time{}, time.Time{}},
		{"RFC 3339 without at", "2026-06-10T09:05:49Z", time.Time{}, time.Date(2026, 6, 10, 9, 5, 49, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseResetAt(tt.text, 0, tt.at)
			if ok != !tt.want.IsZero() {
				t.Fatalf("parseResetAt(%q) = %v, %v; want %v", tt.text, got, ok, tt.want)
			}
			if diff := cmp.Diff(tt.want, got, ignoreEvidence); diff != "" {
				t.Errorf("parseResetAt(%q) (-want +got):\n%s", tt.text, diff)
			}
			if ok && !tt.at.IsZero() && got.Location() != tt.at.Location() {
				t.Errorf("location %v, want at's %v", got.Location(), tt.at.Location())
			}
		})
	}
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

// TestResetTimeAllocs: reading a reset time allocates nothing unless a zone
// must be loaded.
func TestResetTimeAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are measured without -race")
	}
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	for _, s := range []string{"3pm", "Jan 30, 11:30am", "2026-06-10 09:05:49", "10:00 UTC", "4pm (Asia/Kuala_Lumpur)", "in 16 days"} {
		for _, when := range []time.Time{at, {}} {
			n := testing.AllocsPerRun(10, func() { _, _ = parseResetAt(s, 0, when) })
			if n != 0 && (when.IsZero() || !namedZone.MatchString(s)) {
				t.Errorf("parseResetAt(%q, at=%v): %v allocs", s, when, n)
			}
		}
	}
}

func FuzzParseResetAt(f *testing.F) {
	for _, s := range []string{"4pm (Asia/Kuala_Lumpur)", "3pm", "11:30am (America/New_York)", "Jan 30, 11:30am (Asia/Calcutta)",
		"on January 30 at 11:30 AM", "09:20:40 AM", "21:05", "2026-06-10 09:05:49", "2026-06-10T09:05:49Z", "Jul 5th, 2026 8:19 PM",
		"Feb 29, 9am", "10:00 UTC+8", "1781082349", "12am (../../etc/passwd)", "9999-12-31 23:59:59"} {
		f.Add(s, int64(1781082000), "UTC")
		f.Add(s, int64(0), "Europe/Berlin")
	}
	f.Fuzz(func(t *testing.T, s string, unix int64, zone string) {
		var at time.Time
		if unix != 0 {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				loc = time.UTC
			}
			at = time.Unix(unix%(1<<40), 0).In(loc)
		}
		got, ok := parseResetAt(s, 0, at)
		if ok == got.IsZero() {
			t.Fatalf("parseResetAt(%q) = %v, %v", s, got, ok)
		}
		if !ok || at.IsZero() {
			return
		}
		if d := got.Sub(at); d < -24*time.Hour || d > 400*24*time.Hour {
			t.Fatalf("parseResetAt(%q, %v) = %v, %v from at", s, at, got, d)
		}
		if again, _ := parseResetAt(s, 0, at); again != got {
			t.Fatalf("not deterministic: %v then %v", got, again)
		}
	})
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

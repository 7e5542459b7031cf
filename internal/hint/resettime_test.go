package hint

import (
	"strings"
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
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseResetAt(%q) (-want +got):\n%s", tt.text, diff)
			}
			if ok && !tt.at.IsZero() && got.Location() != tt.at.Location() {
				t.Errorf("location %v, want at's %v", got.Location(), tt.at.Location())
			}
		})
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
			if n != 0 && (when.IsZero() || !strings.Contains(s, "(")) {
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

package hint

import "testing"

// FuzzParse reads every position of a text as a duration, a Unix time, an
// RFC 3339 time and a status: no panic, and every value in its range.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"20", "2.5", "-1", "NaN", "Inf", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "", " 7 ",
		"99999999999999999999999999", "6m0s", "0.000000001"} {
		f.Add("Please try again in " + s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for i := 0; i <= len(body); i++ {
			d, n, ok := ParseDuration(body, i, i%2 == 0)
			if d < 0 || d > MaxWait || n < i || n > len(body) || !ok && d != 0 {
				t.Fatalf("ParseDuration(%q, %d) = %v, %d, %v", body, i, d, n, ok)
			}
			if f, ok := readNumberBefore(body, i); ok && !(f >= 0) {
				t.Fatalf("readNumberBefore(%q, %d) = %v", body, i, f)
			}
			_, _ = parseEpoch(body, i)
			_, _ = parseTimestamp(body, i)
			if s := statusAt(body, i); s != 0 && (s < 100 || s > 599) {
				t.Fatalf("statusAt = %d", s)
			}
		}
	})
}

package erradvisor

import (
	"context"
	"math"
	"time"
)

// The backoff schedule and the host's wait live here.

// Backoff returns the delay before retry number attempt (counting from 1)
// under p, with rnd, a value in [0, 1) from the host's random source, used
// by the jitter modes. Zero fields of p mean their defaults, as everywhere.
// It is a pure function: never negative, never above p's delay cap,
// non-decreasing in attempt for a fixed rnd until it reaches the cap, and
// safe for any attempt. An attempt below 1 gives zero; rnd outside [0, 1)
// is clamped into it.
func Backoff(p Policy, attempt int, rnd float64) time.Duration {
	base := p.BaseDelay
	if base == 0 {
		base = DefaultBaseDelay
	}
	if attempt < 1 || base < 0 {
		return 0
	}
	limit := p.maxDelay()
	mult := p.Multiplier
	if !(mult >= 1) { // also catches NaN and zero
		mult = DefaultMultiplier
	}
	d := limit
	// With a factor of at least 2, 64 doublings of even 1ns exceed any
	// Duration: skip math.Pow, which is slow for large exponents.
	if mult < 2 || attempt <= 64 {
		if v := float64(base) * math.Pow(mult, float64(attempt-1)); v < float64(limit) {
			d = time.Duration(v)
		}
	}
	if d < base && base <= limit {
		d = base
	}
	switch {
	case !(rnd > 0): // also catches NaN
		rnd = 0
	case rnd >= 1:
		rnd = math.Nextafter(1, 0)
	}
	switch p.Jitter {
	case JitterProportional:
		frac := p.JitterFraction
		switch {
		case !(frac > 0):
			frac = DefaultJitterFraction
		case frac > 1:
			frac = 1
		}
		d -= scale(d, frac*rnd)
	case JitterFull:
		d = scale(d, rnd)
	}
	return max(d, 0)
}

// scale returns d*x for x in [0, 1] without overflowing.
func scale(d time.Duration, x float64) time.Duration {
	v := float64(d) * x
	if v >= float64(d) {
		return d
	}
	if v <= 0 {
		return 0
	}
	return time.Duration(v)
}

// Wait blocks for d or until ctx is done, whichever comes first. It returns
// nil after the full delay and ctx.Err() when ctx ends first; it stops its
// timer either way. A delay of zero or less returns ctx.Err() at once.
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

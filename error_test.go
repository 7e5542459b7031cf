package erradvisor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestErrorValue(t *testing.T) {
	reset := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	base := errors.New("529 overloaded")
	quota := &Error{Err: errors.New("usage limit reached"), Classification: Classification{Class: Quota, Reason: ReasonUsageLimit, ResetAt: reset}}
	tests := []struct {
		name                string
		err                 error
		retryable, overflow bool
		reset               time.Time
	}{
		{"nil", nil, false, false, time.Time{}},
		{"wrapped verdict", fmt.Errorf("send: %w", &Error{Err: base, Classification: Classification{Class: Transient, Reason: ReasonOverloaded}}), true, false, time.Time{}},
		{"overflow verdict", &Error{Classification: Classification{Class: Overflow, Reason: ReasonContextWindow}}, false, true, time.Time{}},
		{"quota with reset", fmt.Errorf("turn: %w", quota), false, false, reset},
		{"plain error read by the rules", errors.New("prompt is too long: 213462 tokens > 200000 maximum"), false, true, time.Time{}},
		{"deadline from the chain", fmt.Errorf("call: %w", context.DeadlineExceeded), true, false, time.Time{}},
		{"cancel is not retryable", context.Canceled, false, false, time.Time{}},
		{"nil *Error in the chain", fmt.Errorf("x: %w", (*Error)(nil)), false, false, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := QuotaReset(tt.err)
			got := []any{IsRetryable(tt.err), IsOverflow(tt.err), r, ok}
			want := []any{tt.retryable, tt.overflow, tt.reset, !tt.reset.IsZero()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Err: errors.New("529 overloaded"), Classification: Classification{Class: Transient, Reason: ReasonOverloaded}}
	got := []string{e.Error(), (&Error{Classification: Classification{Class: Quota}}).Error(), (*Error)(nil).Error()}
	want := []string{"529 overloaded (transient: overloaded)", "quota", "<nil>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !errors.Is(e, e.Err) || (*Error)(nil).Unwrap() != nil {
		t.Error("Unwrap does not reach the original error")
	}
	var found *Error
	if !errors.As(fmt.Errorf("w: %w", e), &found) || found != e {
		t.Error("errors.As does not find the *Error")
	}
}

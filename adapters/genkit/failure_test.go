package genkit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/genkit"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFailure(t *testing.T) {
	genkitErr := core.NewError(core.RESOURCE_EXHAUSTED, "quota exceeded")
	genkitErr.Details = map[string]any{"details": []any{
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"},
	}}
	tests := []struct {
		name string
		err  error
		want erradvisor.Failure
	}{{
		name: "genai.APIError with a RetryInfo",
		err:  apiError(t, bodyPerMinute),
		want: erradvisor.Failure{Provider: "gemini", Status: 429, Code: "RESOURCE_EXHAUSTED",
			Header: http.Header{"Retry-After-Ms": {"26000"}}},
	}, {
		name: "genai.APIError without details",
		err:  apiError(t, bodyOverloaded),
		want: erradvisor.Failure{Provider: "gemini", Status: 503, Code: "UNAVAILABLE"},
	}, {
		name: "core.GenkitError with a RetryInfo in its details",
		err:  fmt.Errorf("generate: %w", genkitErr),
		want: erradvisor.Failure{Status: 429, Code: "RESOURCE_EXHAUSTED", Message: "quota exceeded",
			Header: http.Header{"Retry-After-Ms": {"12000"}}},
	}, {
		name: "core.GenkitError with an HTTP code",
		err:  &core.GenkitError{Status: core.INVALID_ARGUMENT, HTTPCode: 413, Message: "request too large"},
		want: erradvisor.Failure{Status: 413, Code: "INVALID_ARGUMENT", Message: "request too large"},
	}, {
		name: "core.UserFacingError",
		err:  core.NewPublicError(core.UNAUTHENTICATED, "API key not valid", nil),
		want: erradvisor.Failure{Status: 401, Code: "UNAUTHENTICATED", Message: "API key not valid"},
	}, {
		name: "a plain error",
		err:  context.DeadlineExceeded,
		want: erradvisor.Failure{Message: "context deadline exceeded"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := adapter.Failure(tt.err)
			if got.Err != tt.err {
				t.Errorf("Err = %v, want the error itself", got.Err)
			}
			// The Gemini body is the SDK's error re-encoded; compare the
			// verdict on it instead of its bytes.
			ignore := []cmp.Option{cmpopts.IgnoreFields(erradvisor.Failure{}, "Err")}
			if got.Provider == "gemini" {
				ignore = append(ignore, cmpopts.IgnoreFields(erradvisor.Failure{}, "Message"))
			}
			if diff := cmp.Diff(tt.want, got, ignore...); diff != "" {
				t.Errorf("Failure (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(erradvisor.Failure{}, adapter.Failure(nil)); diff != "" {
		t.Errorf("Failure(nil) (-want +got):\n%s", diff)
	}
}

// The classifier reads the re-encoded Gemini bodies as it reads the API's.
func TestFailureClassified(t *testing.T) {
	tests := []struct {
		body string
		want erradvisor.Classification
	}{
		{bodyOverloaded, erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded}},
		{bodyTooManyTokens, erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow}},
		{bodyPerMinute, erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, RetryAfter: 26 * time.Second}},
		{bodyPerDay, erradvisor.Classification{Class: erradvisor.Quota, Reason: erradvisor.ReasonQuota, RetryAfter: 22 * time.Second}},
	}
	for _, tt := range tests {
		f := adapter.Failure(apiError(t, tt.body))
		f.At = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
		got := erradvisor.Classify(f)
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(erradvisor.Classification{}, "Rule", "ResetAt", "Evidence")); diff != "" {
			t.Errorf("%.60s (-want +got):\n%s", tt.body, diff)
		}
	}
}

// Every FinishReason Genkit declares (ai/gen.go).
func TestStopReason(t *testing.T) {
	want := map[ai.FinishReason]erradvisor.StopReason{
		ai.FinishReasonStop:        erradvisor.StopEndTurn,
		ai.FinishReasonLength:      erradvisor.StopLength,
		ai.FinishReasonBlocked:     erradvisor.StopRefused,
		ai.FinishReasonInterrupted: erradvisor.StopToolUse,
		ai.FinishReasonOther:       erradvisor.StopUnknown,
		ai.FinishReasonUnknown:     erradvisor.StopUnknown,
		"":                         erradvisor.StopUnknown,
		"STOP":                     erradvisor.StopUnknown,
	}
	got := map[ai.FinishReason]erradvisor.StopReason{}
	for r := range want {
		got[r] = adapter.StopReason(r)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StopReason (-want +got):\n%s", diff)
	}
}

func TestParseDuration(t *testing.T) {
	tests := map[string]time.Duration{
		"26s": 26 * time.Second, "0.5s": 500 * time.Millisecond, "0s": 0,
		"91226.179915352s": 91226179915352 * time.Nanosecond,
	}
	for in, want := range tests {
		got, ok := adapter.ParseDuration(in)
		if !ok || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "s", "26", "-1s", "+1s", "1e3s", "NaNs", "1.2.3s", "99999999999999999999s", "26 s"} {
		if got, ok := adapter.ParseDuration(in); ok {
			t.Errorf("ParseDuration(%q) = %v, true; want false", in, got)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"26s", "0.5s", "91226.179915352s", "-1s", "1e3s", "", "9223372036.854775807s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := adapter.ParseDuration(s); ok && d < 0 {
			t.Errorf("ParseDuration(%q) = %v, want a non-negative duration", s, d)
		}
	})
}

func FuzzFailure(f *testing.F) {
	f.Add("retryDelay", "26s", 429, "RESOURCE_EXHAUSTED")
	f.Add("@type", "type.googleapis.com/google.rpc.RetryInfo", 503, "UNAVAILABLE")
	f.Fuzz(func(t *testing.T, key, value string, code int, status string) {
		err := &core.GenkitError{Status: core.StatusName(status), HTTPCode: code, Message: value,
			Details: map[string]any{key: value, "details": []any{map[string]any{key: value}}}}
		got := adapter.Failure(err)
		if !errors.Is(got.Err, err) {
			t.Errorf("Failure lost the error")
		}
		_ = erradvisor.Classify(got)
	})
}

package erradvisor

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWordingConcepts checks the wordings that read one way and mean
// another, each with the observation time set and unset: the verdict must
// not depend on it.
func TestWordingConcepts(t *testing.T) {
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	c := func(class Class, reason Reason, rule string) Classification {
		if rule == "" {
			return Classification{Class: class, Reason: reason}
		}
		return Classification{Class: class, Reason: reason, Rule: rule, Evidence: EvidenceText}
	}
	retryLayer := c(Transient, ReasonServer, "transient.retries_exhausted")
	allLimited := c(Transient, ReasonRateLimit, "transient.all_rate_limited")
	plan := c(Permanent, ReasonPermission, "permission.plan_excludes")
	verify := c(Permanent, ReasonPermission, "permission.verification_required")
	ws := c(Transient, ReasonNetwork, "transient.websocket")
	tests := []struct {
		name string
		f    Failure
		want Classification
	}{
		// A retry layer that gave up: its budget is time or attempts.
		{"retry time budget", Failure{Message: "retry time budget exceeded"}, retryLayer},
		{"retry time budget as 429", Failure{Status: 429, Message: "retry time budget exceeded"}, retryLayer},
		// The cause the retry layer quotes decides the reason: an empty reply.
		{"retry budget exhausted", Failure{Message: "Retry budget exhausted after 10 retries: upstream returned an empty response"},
			c(Transient, ReasonStream, "transient.empty_reply")},
		{"all providers failed", Failure{Message: "All providers failed after retries"}, retryLayer},
		{"all providers failed as 502", Failure{Status: 502, Message: "all providers failed after retries"}, retryLayer},
		{"all models rate-limited", Failure{Message: "All models rate-limited"}, allLimited},
		{"all models rate-limited quoting a quota", Failure{Status: 503, Message: `{"error":"All models rate-limited after 3 attempts. Last: 429 You exceeded your current quota, please check your plan and billing details."}`}, allLimited},
		{"every key rate limited", Failure{Message: "every key in the pool is rate limited; try again shortly"}, allLimited},
		// but a spending budget stays one, and a quoted cause that needs a person wins.
		{"spending budget", Failure{Message: "Budget has been exceeded! Current cost: 26.075, Max budget: 0.25"}, c(Quota, ReasonBudget, "quota.budget")},
		{"budget pool exhausted", Failure{Message: "402 budget full Quetta has been exhausted please ask an administrator to increase the limit"}, c(Quota, ReasonBudget, "quota.budget_words")},
		{"all models failed on a bad key", Failure{Message: "All models failed after retries: invalid api key"}, c(Permanent, ReasonAuth, "auth.invalid_credentials")},
		{"all models rate limited until tomorrow", Failure{Message: "Groq API rate limit reached on all models — please try again tomorrow"}, c(Transient, ReasonRateLimit, "transient.rate_limit")},

		// A plan that excludes the model, whatever the status.
		{"plan excludes model", Failure{Message: "Your plan does not include access to this model"}, plan},
		{"plan excludes model as 429", Failure{Status: 429, Message: "Your plan does not include access to this model"}, plan},
		{"plan excludes model as 402", Failure{Status: 402, Message: "Model is not available on your current plan. Upgrade your plan to use it."}, plan},
		{"upgrade to use", Failure{Status: 403, Message: "Upgrade your plan to use this model"}, plan},
		{"usage window is a quota", Failure{Status: 429, Message: "You've reached your weekly usage limit. Upgrade your plan to keep going."}, c(Quota, ReasonUsageLimit, "quota.usage_limit")},

		// A bare 402 about something other than money.
		{"membership verification", Failure{Status: 402, Message: "membership verification required"}, verify},
		{"verify account", Failure{Status: 402, Message: "Please verify your account to continue"}, verify},
		{"verify and pay", Failure{Status: 402, Message: "Payment required: insufficient credits, verify your account"}, c(Billing, ReasonCredits, "billing.credits")},
		{"bare 402", Failure{Status: 402, Message: "402 Payment Required"}, c(Billing, ReasonCredits, "billing.credits")},

		// WebSocket faults, a cut stream, and account termination.
		{"websocket error", Failure{Message: "WebSocket error"}, ws},
		{"websocket closed", Failure{Message: "websocket closed"}, ws},
		{"websocket closed unexpectedly", Failure{Message: "WebSocket connection closed unexpectedly"}, ws},
		{"websocket unauthorized", Failure{Message: "WebSocket error: 401 Unauthorized"}, c(Permanent, ReasonAuth, "auth.invalid_credentials")},
		{"bare terminated", Failure{Message: "terminated"}, c(Transient, ReasonStream, "transient.stream_terminated")},
		{"bare terminated with spaces", Failure{Message: "  Terminated.\n"}, c(Transient, ReasonStream, "transient.stream_terminated")},
		{"other side closed", Failure{Message: "other side closed"}, c(Transient, ReasonStream, "transient.other_side_closed")},
		{"fetch failed, other side closed", Failure{Message: "TypeError: fetch failed\n  [cause]: SocketError: other side closed"}, c(Transient, ReasonNetwork, "transient.network")},
		{"account terminated", Failure{Message: "Your account has been terminated"}, c(Quota, ReasonSuspended, "quota.suspended")},
		{"request terminated is no stream cut", Failure{Message: "The request was terminated by policy"}, Classification{}},
	}
	for _, tt := range tests {
		for _, when := range []time.Time{at, {}} {
			f := tt.f
			f.At = when
			if diff := cmp.Diff(tt.want, Classify(f)); diff != "" {
				t.Errorf("%s (At %v) (-want +got):\n%s", tt.name, when, diff)
			}
		}
	}
}

// TestPlanNotClearedByWaiting: a stated wait does not turn a plan that
// excludes the model into something a retry fixes.
func TestPlanNotClearedByWaiting(t *testing.T) {
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	for _, f := range []Failure{
		{Status: 429, Message: "Your plan does not include access to this model", Header: http.Header{"Retry-After": {"30"}}, At: at},
		{Status: 429, Message: "Your plan does not include access to this model. Please try again in 20s.", At: at},
		{Status: 402, Message: "This model is not included in your plan; retry after 2 hours", At: at},
	} {
		got := Classify(f)
		if got.Class != Permanent || got.Reason != ReasonPermission || !got.ResetAt.IsZero() {
			t.Errorf("%q: %+v, want permanent/permission without a reset time", f.Message, got)
		}
	}
}

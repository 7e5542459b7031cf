package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/examples/resilience"
	"github.com/failsafe-go/failsafe-go"
)

// Real provider responses, each from the source beside it.
var (
	// https://github.com/anthropics/anthropic-sdk-typescript/issues/616
	overloaded = erradvisor.Failure{Provider: "anthropic", Status: 529,
		Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
	// https://github.com/BuilderIO/micro-agent/issues/86
	tpmLimit = erradvisor.Failure{Provider: "openai", Status: 429,
		Message: "429 Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms."}
	// https://github.com/OpenHands/OpenHands/issues/9259, with the
	// retry-after header the Anthropic API sends on a 429
	// (https://docs.anthropic.com/en/api/rate-limits).
	rateLimited = erradvisor.Failure{Provider: "anthropic", Status: 429,
		Header:  http.Header{"Retry-After": {"1"}},
		Message: `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (0dccdde6-f924-4f1b-bb3b-92ef846e0a5b) of 20,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."}}`}
	// https://github.com/Chanzhaoyu/chatgpt-web/issues/1858
	insufficientQuota = erradvisor.Failure{Provider: "openai", Status: 429,
		Message: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}
	// https://github.com/earendil-works/pi/issues/102
	promptTooLong = erradvisor.Failure{Provider: "anthropic", Status: 400,
		Message: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`}
	// https://github.com/earendil-works/pi/issues/4172 (the Codex
	// backend's body, without the client's "Error: Codex error:" prefix
	// and headers)
	usageLimit = erradvisor.Failure{Provider: "openai-codex", Status: 429,
		Message: `{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":1777936568,"eligible_promo":null,"resets_in_seconds":13872}}`}
)

// observedAt is when the fake calls fail: it anchors reset times stated as
// durations.
var observedAt = time.Date(2026, 5, 4, 19, 25, 0, 0, time.UTC)

// fakeCall returns a function that fails with each failure in turn, then
// answers "ok". Each error is classified as the host's adapter would.
func fakeCall(failures ...erradvisor.Failure) func() (string, error) {
	n := 0
	return func() (string, error) {
		n++
		if n > len(failures) {
			return "ok", nil
		}
		f := failures[n-1]
		f.At = observedAt
		return "", resilience.Classified(f)
	}
}

// A failsafe-go retry policy that retries the overloaded errors and
// returns the answer.
func ExampleRetryPolicy() {
	call := fakeCall(overloaded, overloaded)
	policy := resilience.RetryPolicyBuilder[string](3, 10*time.Millisecond, 100*time.Millisecond).
		OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[string]) {
			fmt.Printf("attempt %d failed: %v\n", e.Attempts(), e.LastError())
		}).
		Build()
	answer, err := failsafe.With(policy).Get(call)
	fmt.Println(answer, err)
	// Output:
	// attempt 1 failed: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}} (transient: overloaded)
	// attempt 2 failed: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}} (transient: overloaded)
	// ok <nil>
}

// The wait the server stated ("Please try again in 644ms") replaces the
// policy's backoff.
func ExampleServerDelay() {
	call := fakeCall(tpmLimit)
	policy := resilience.RetryPolicyBuilder[string](3, 10*time.Millisecond, 100*time.Millisecond).
		OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[string]) {
			fmt.Println("retrying in", e.Delay)
		}).
		Build()
	answer, err := failsafe.With(policy).Get(call)
	fmt.Println(answer, err)
	// Output:
	// retrying in 644ms
	// ok <nil>
}

// A quota error is not retried: failsafe-go returns it after one attempt,
// and the verdict says what it is.
func ExampleRetryPolicy_quota() {
	attempts := 0
	call := fakeCall(insufficientQuota)
	_, err := failsafe.With(resilience.RetryPolicy[string](3, 10*time.Millisecond, 100*time.Millisecond)).
		Get(func() (string, error) { attempts++; return call() })

	var e *erradvisor.Error
	if errors.As(err, &e) {
		fmt.Println("attempts:", attempts)
		fmt.Println("retryable:", erradvisor.IsRetryable(err))
		fmt.Println("class:", e.Classification.Class, e.Classification.Reason)
	}
	// Output:
	// attempts: 1
	// retryable: false
	// class: quota quota
}

// A context overflow is not retried either: the host compacts the
// conversation first, then makes one fresh attempt.
func ExampleRetryPolicy_overflow() {
	call := fakeCall(promptTooLong)
	_, err := failsafe.With(resilience.RetryPolicy[string](3, 10*time.Millisecond, 100*time.Millisecond)).Get(call)
	if erradvisor.IsOverflow(err) {
		fmt.Println("compact, then retry once:", err)
	}
	// Output:
	// compact, then retry once: {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"} (overflow: context_window)
}

// cenkalti/backoff retries the overloaded errors with its own backoff.
func ExampleForBackoff() {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 10 * time.Millisecond
	answer, err := backoff.Retry(context.Background(), resilience.ForBackoff(fakeCall(overloaded, overloaded)),
		backoff.WithBackOff(b), backoff.WithMaxTries(4),
		backoff.WithNotify(func(err error, _ time.Duration) {
			var e *erradvisor.Error
			if errors.As(err, &e) {
				fmt.Println("retrying:", e.Classification.Class, e.Classification.Reason)
			}
		}))
	fmt.Println(answer, err)
	// Output:
	// retrying: transient overloaded
	// retrying: transient overloaded
	// ok <nil>
}

// The retry-after header of a 429 becomes backoff.RetryAfter(1): Retry
// waits the second the server asked for, not its own backoff.
func ExampleForBackoff_retryAfter() {
	answer, err := backoff.Retry(context.Background(), resilience.ForBackoff(fakeCall(rateLimited)),
		backoff.WithMaxTries(3),
		backoff.WithNotify(func(_ error, wait time.Duration) { fmt.Println("waiting", wait) }))
	fmt.Println(answer, err)
	// Output:
	// waiting 1s
	// ok <nil>
}

// A plan's usage limit is returned at once, as a backoff.Permanent error;
// QuotaReset says when to try again.
func ExampleForBackoff_quotaReset() {
	attempts := 0
	call := fakeCall(usageLimit)
	_, err := backoff.Retry(context.Background(),
		resilience.ForBackoff(func() (string, error) { attempts++; return call() }),
		backoff.WithMaxTries(5))
	fmt.Println("attempts:", attempts)
	if at, ok := erradvisor.QuotaReset(err); ok {
		fmt.Println("usage limit; resets at", at.UTC().Format(time.RFC3339))
	}
	// Output:
	// attempts: 1
	// usage limit; resets at 2026-05-04T23:16:08Z
}

// Without Classified, the predicates read a bare error's text: enough for
// messages that say what they are.
func ExampleRetryAfter() {
	err := errors.New(tpmLimit.Message)
	fmt.Println(erradvisor.IsRetryable(err), resilience.RetryAfter(err))
	// Output: true 644ms
}

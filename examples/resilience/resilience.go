// Package resilience plugs erradvisor's verdict into two Go resilience
// libraries, github.com/failsafe-go/failsafe-go and
// github.com/cenkalti/backoff/v5, so that a retry loop built with either
// retries only what can succeed by waiting, waits as long as the server
// asked, and stops at once on an overflow, a quota, a billing limit or a
// permanent error.
//
// The verdict travels with the error: Classified wraps a failed call's
// error in an *erradvisor.Error, and erradvisor.IsRetryable,
// erradvisor.IsOverflow and erradvisor.QuotaReset read it from anywhere in
// the error chain (a bare error is classified from its text).
//
// Turn the provider SDK's own retries off (option.WithMaxRetries(0) for
// openai-go and anthropic-sdk-go) when a library retries on top: stacked
// retry layers hide quota errors and multiply the waits.
package resilience

import (
	"errors"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/erradvisor/erradvisor"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
)

// Classified returns f.Err wrapped in an *erradvisor.Error that carries
// erradvisor.Classify(f), so the predicates use the status, body and
// headers of the failed call rather than the error's text alone. A Failure
// without an Err gets one made of its Message. Fill f as an SDK adapter does
// (Provider, Status, Message, Header, At).
func Classified(f erradvisor.Failure) error {
	err := f.Err
	if err == nil {
		err = errors.New(f.Message)
	}
	return &erradvisor.Error{Err: err, Classification: erradvisor.Classify(f)}
}

// verdict returns the classification of err: the one an *erradvisor.Error
// in its chain carries, or else erradvisor.ClassifyError's reading.
func verdict(err error) erradvisor.Classification {
	var e *erradvisor.Error
	if errors.As(err, &e) && e != nil {
		return e.Classification
	}
	return erradvisor.ClassifyError(err)
}

// RetryAfter returns the wait the server stated for err (a Retry-After
// header, a "Please try again in 644ms", a Gemini retryDelay), or 0.
func RetryAfter(err error) time.Duration {
	if err == nil {
		return 0
	}
	if d := verdict(err).RetryAfter; d > 0 {
		return d
	}
	return 0
}

// RetryPolicy returns a failsafe-go retry policy that handles only
// transient failures (erradvisor.IsRetryable; any other error ends the
// execution at once and is returned as it is), waits the server's stated
// wait when there is one (ServerDelay) and otherwise backs off from base,
// doubling up to maxDelay, for at most maxRetries retries. When the retries
// run out, the last error is returned.
func RetryPolicy[R any](maxRetries int, base, maxDelay time.Duration) retrypolicy.RetryPolicy[R] {
	return RetryPolicyBuilder[R](maxRetries, base, maxDelay).Build()
}

// RetryPolicyBuilder returns the builder of RetryPolicy, for adding
// listeners or a budget before Build.
func RetryPolicyBuilder[R any](maxRetries int, base, maxDelay time.Duration) retrypolicy.Builder[R] {
	return retrypolicy.NewBuilder[R]().
		HandleIf(func(_ R, err error) bool { return erradvisor.IsRetryable(err) }).
		WithMaxRetries(maxRetries).
		WithBackoff(base, maxDelay).
		WithDelayFunc(ServerDelay[R]).
		ReturnLastFailure()
}

// ServerDelay is a failsafe.DelayFunc: the wait the server stated for the
// last attempt's error (RetryAfter), or -1, which makes failsafe-go use the
// policy's own backoff.
func ServerDelay[R any](exec failsafe.ExecutionAttempt[R]) time.Duration {
	if d := RetryAfter(exec.LastError()); d > 0 {
		return d
	}
	return -1
}

// ForBackoff adapts op for backoff.Retry. An error that is not transient
// comes back wrapped in backoff.Permanent, so Retry returns it at once (an
// overflow, a quota, a billing limit, an invalid key, a cancellation); a
// transient error with a stated wait is joined with a
// *backoff.RetryAfterError of that wait (built by backoff.RetryAfter for a
// whole number of seconds), which Retry honours instead of its backoff. The
// original error stays in the chain either way, so errors.As still finds
// the *erradvisor.Error after Retry returns.
func ForBackoff[T any](op backoff.Operation[T]) backoff.Operation[T] {
	return func() (T, error) {
		v, err := op()
		if err == nil {
			return v, nil
		}
		if !erradvisor.IsRetryable(err) {
			return v, backoff.Permanent(err)
		}
		if d := RetryAfter(err); d > 0 {
			wait := backoff.RetryAfter(int(d / time.Second))
			if d%time.Second != 0 {
				wait = &backoff.RetryAfterError{Duration: d}
			}
			return v, errors.Join(err, wait)
		}
		return v, err
	}
}

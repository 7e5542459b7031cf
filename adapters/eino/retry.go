package eino

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/erradvisor/erradvisor"
)

// IsRetryAble reports whether err is a transient failure, with
// erradvisor.IsRetryable. Its signature is that of
// adk.ModelRetryConfig.IsRetryAble, whose default retries every error:
// quota, billing, authentication and context-overflow failures included.
func IsRetryAble(_ context.Context, err error) bool {
	return erradvisor.IsRetryable(err)
}

// RetryConfig returns an adk.ModelRetryConfig (for
// adk.ChatModelAgentConfig.ModelRetryConfig) that follows p as far as
// that hook allows:
//
//   - MaxRetries is p's (DefaultMaxRetries for zero; Unlimited becomes
//     math.MaxInt32, and then only a non-retryable error ends the loop);
//   - IsRetryAble retries the classes of p.Retry (Transient for
//     Conservative; Billing and Unknown too for Persistent), never a
//     Permanent, Quota, Overflow or Canceled failure, nor one whose stated
//     wait exceeds what p honours (MaxRetryAfter, else MaxDelay), or whose
//     context is done;
//   - BackoffFunc is erradvisor.Backoff under p.
//
// The hook's backoff function does not see the error, so a server's
// Retry-After cannot lengthen the delay there, and p's MaxRetryTime is not
// enforced; Wrap, which does both, is the complete alternative. Do not use
// both.
func RetryConfig(p erradvisor.Policy) *adk.ModelRetryConfig {
	retries := p.MaxRetries
	switch {
	case retries == 0:
		retries = erradvisor.DefaultMaxRetries
	case retries < 0:
		retries = math.MaxInt32
	}
	return &adk.ModelRetryConfig{
		MaxRetries:  retries,
		IsRetryAble: Retryable(p),
		BackoffFunc: Backoff(p),
	}
}

// Retryable returns an adk.ModelRetryConfig.IsRetryAble function that
// follows p; see RetryConfig.
func Retryable(p erradvisor.Policy) func(context.Context, error) bool {
	ceiling := p.MaxRetryAfter
	if ceiling == 0 {
		ceiling = p.MaxDelay
	}
	if ceiling == 0 {
		ceiling = erradvisor.DefaultMaxDelay
	}
	return func(ctx context.Context, err error) bool {
		if err == nil || (ctx != nil && ctx.Err() != nil) {
			return false
		}
		c := verdict(err)
		switch c.Class {
		case erradvisor.Permanent, erradvisor.Quota, erradvisor.Overflow, erradvisor.Canceled:
			return false
		}
		if ceiling > 0 && c.RetryAfter > ceiling {
			return false
		}
		return p.Retry.Has(c.Class)
	}
}

// Backoff returns an adk.ModelRetryConfig.BackoffFunc that waits
// erradvisor.Backoff(p, attempt, r) with r drawn from math/rand/v2.
func Backoff(p erradvisor.Policy) func(context.Context, int) time.Duration {
	return func(_ context.Context, attempt int) time.Duration {
		return erradvisor.Backoff(p, attempt, rand.Float64())
	}
}

// verdict returns the classification an *erradvisor.Error in err's chain
// carries, or erradvisor.ClassifyError's.
func verdict(err error) erradvisor.Classification {
	var e *erradvisor.Error
	if errors.As(err, &e) && e != nil {
		return e.Classification
	}
	return erradvisor.ClassifyError(err)
}

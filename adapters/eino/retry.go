package eino

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
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
//   - BackoffFunc is erradvisor.Backoff under p, lengthened to the wait the
//     server stated (Retry-After, a "try again in" phrase, Gemini's
//     retryDelay) for the error IsRetryAble last accepted in the same
//     context, since the hook's backoff function does not see the error.
//
// p's MaxRetryTime is not enforced, and the hook cannot compact; Wrap, which
// does both, is the complete alternative. Do not use both.
func RetryConfig(p erradvisor.Policy) *adk.ModelRetryConfig {
	retries := p.MaxRetries
	switch {
	case retries == 0:
		retries = erradvisor.DefaultMaxRetries
	case retries < 0:
		retries = math.MaxInt32
	}
	w := &statedWait{}
	retryable, backoff := Retryable(p), Backoff(p)
	return &adk.ModelRetryConfig{
		MaxRetries: retries,
		IsRetryAble: func(ctx context.Context, err error) bool {
			ok := retryable(ctx, err)
			if ok {
				w.set(ctx, verdict(err).RetryAfter)
			}
			return ok
		},
		BackoffFunc: func(ctx context.Context, attempt int) time.Duration {
			return max(backoff(ctx, attempt), w.take(ctx))
		},
	}
}

// statedWait carries the wait a server stated from the ADK's IsRetryAble
// call to the BackoffFunc call that follows it in the same context. It
// holds one value: concurrent runs that share the config only lose the
// stated wait to each other, never get another run's.
type statedWait struct {
	mu   sync.Mutex
	ctx  context.Context
	wait time.Duration
}

func (w *statedWait) set(ctx context.Context, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.wait = nil, 0
	// Contexts are compared by identity; one whose type cannot be compared
	// is not kept.
	if d > 0 && ctx != nil && reflect.TypeOf(ctx).Comparable() {
		w.ctx, w.wait = ctx, d
	}
}

func (w *statedWait) take(ctx context.Context) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || ctx == nil || !reflect.TypeOf(ctx).Comparable() || w.ctx != ctx {
		return 0
	}
	d := w.wait
	w.ctx, w.wait = nil, 0
	return d
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

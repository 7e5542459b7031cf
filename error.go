package erradvisor

import (
	"errors"
	"time"
)

// The error value that carries a verdict, and the predicates resilience
// libraries plug in, live here.

// Error is a failed model request together with its verdict. It wraps the
// original error, so errors.Is and errors.As see through it, and errors.As
// finds it in any chain:
//
//	var e *erradvisor.Error
//	if errors.As(err, &e) && e.Classification.Class == erradvisor.Quota { ... }
//
// A host or an adapter builds one with a composite literal once it has
// classified the failure; the predicates below then use that verdict instead
// of reading the error again.
type Error struct {
	// Err is the original error; it may be nil.
	Err error
	// Classification is the verdict on it.
	Classification Classification
}

// Error returns the original error's text followed by the verdict, as in
// "529 overloaded (transient: overloaded)". A nil *Error gives "<nil>".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	v := classAndReason(e.Classification)
	if msg := safeErrorText(e.Err); msg != "" {
		return msg + " (" + v + ")"
	}
	return v
}

// Unwrap returns the original error.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// verdictOfError returns the Classification an *Error in err's chain
// carries, or else ClassifyError's reading of err.
func verdictOfError(err error) Classification {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Classification
	}
	return ClassifyError(err)
}

// IsRetryable reports whether err is a transient failure: the same request
// will likely succeed after a wait. It uses the verdict of an *Error in err's
// chain, or classifies err with the default rules. Plug it into a
// resilience library's "retry if" hook (failsafe-go's HandleIf,
// cenkalti/backoff's Permanent wrapping, adk-go's ShouldRetry). A nil err is
// not retryable.
func IsRetryable(err error) bool {
	return err != nil && verdictOfError(err).Class == Transient
}

// IsOverflow reports whether err says the request exceeded the model's
// context window: compact the conversation, then make one fresh attempt;
// retrying it unchanged cannot succeed.
func IsOverflow(err error) bool {
	return err != nil && verdictOfError(err).Class == Overflow
}

// QuotaReset reports when the quota or billing limit that err hit resets,
// and whether err is such a limit with a known reset time. Waiting until
// then (and not retrying before) is the only remedy short of a change of
// plan or a top-up.
func QuotaReset(err error) (time.Time, bool) {
	if err == nil {
		return time.Time{}, false
	}
	c := verdictOfError(err)
	if (c.Class == Quota || c.Class == Billing) && !c.ResetAt.IsZero() {
		return c.ResetAt, true
	}
	return time.Time{}, false
}

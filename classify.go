package erradvisor

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Class answers the one question a request loop has after a failure: what
// should the next request be? Every failure gets exactly one Class.
//
// The zero value is Unknown.
type Class uint8

// The classes, from "nothing matched" to "the caller aborted".
const (
	// Unknown means no rule and no status matched. Conservative hosts stop;
	// persistent hosts retry.
	Unknown Class = iota
	// Transient means the same request will likely succeed later: rate
	// limits, overload, 5xx, network faults, timeouts, cut streams.
	Transient
	// Overflow means the prompt exceeds the model's context window: compact
	// the conversation, then make one fresh attempt.
	Overflow
	// Quota means a plan, usage, session or budget limit was reached, or the
	// account is suspended. Retrying does not help before the reset.
	Quota
	// Billing means a pay-as-you-go balance is exhausted; it clears when the
	// account is topped up.
	Billing
	// Permanent means the request or configuration is wrong (credentials,
	// permissions, unknown model, invalid request, content policy).
	Permanent
	// Canceled means the caller aborted the request. It calls for silence.
	Canceled

	numClasses
)

var classNames = [numClasses]string{
	Unknown:   "unknown",
	Transient: "transient",
	Overflow:  "overflow",
	Quota:     "quota",
	Billing:   "billing",
	Permanent: "permanent",
	Canceled:  "canceled",
}

// String returns the lower-case name of the class ("transient", "overflow", ...).
// An out-of-range value prints as "class(N)".
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// Valid reports whether c is one of the declared classes.
func (c Class) Valid() bool { return c < numClasses }

// ParseClass returns the Class whose String is s.
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return Unknown, fmt.Errorf("erradvisor: unknown class %q", s)
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("erradvisor: invalid class %d", uint8(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	v, err := ParseClass(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// LogValue implements slog.LogValuer.
func (c Class) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Reason refines a Class. Each reason belongs to exactly one class; see
// Reason.Class. The empty Reason goes with Unknown.
type Reason string

// The reasons, grouped by the class they refine.
const (
	// Transient reasons.
	ReasonRateLimit  Reason = "rate_limit" // request or token rate exceeded for a short window
	ReasonOverloaded Reason = "overloaded" // the provider has no capacity right now
	ReasonServer     Reason = "server"     // 5xx or an internal server error
	ReasonNetwork    Reason = "network"    // connection reset, refused, DNS, TLS, GOAWAY
	ReasonTimeout    Reason = "timeout"    // deadline or idle timeout
	ReasonStream     Reason = "stream"     // a response stream ended early or broke

	// Overflow reason.
	ReasonContextWindow Reason = "context_window" // the prompt does not fit the context window

	// Quota reasons.
	ReasonUsageLimit Reason = "usage_limit" // subscription or session window used up
	ReasonQuota      Reason = "quota"       // plan quota or daily allotment exhausted
	ReasonBudget     Reason = "budget"      // proxy or spending budget exceeded
	ReasonSuspended  Reason = "suspended"   // the account is suspended

	// Billing reason.
	ReasonCredits Reason = "credits" // prepaid balance or credits exhausted

	// Permanent reasons.
	ReasonAuth           Reason = "auth"            // missing, invalid or revoked credentials
	ReasonPermission     Reason = "permission"      // credentials valid but not allowed
	ReasonModelNotFound  Reason = "model_not_found" // unknown, retired or unsupported model
	ReasonInvalidRequest Reason = "invalid_request" // the request itself is malformed
	ReasonContentPolicy  Reason = "content_policy"  // refused by a safety or content filter

	// Canceled reason.
	ReasonAborted Reason = "aborted" // the caller aborted
)

var reasonClass = map[Reason]Class{
	"":                   Unknown,
	ReasonRateLimit:      Transient,
	ReasonOverloaded:     Transient,
	ReasonServer:         Transient,
	ReasonNetwork:        Transient,
	ReasonTimeout:        Transient,
	ReasonStream:         Transient,
	ReasonContextWindow:  Overflow,
	ReasonUsageLimit:     Quota,
	ReasonQuota:          Quota,
	ReasonBudget:         Quota,
	ReasonSuspended:      Quota,
	ReasonCredits:        Billing,
	ReasonAuth:           Permanent,
	ReasonPermission:     Permanent,
	ReasonModelNotFound:  Permanent,
	ReasonInvalidRequest: Permanent,
	ReasonContentPolicy:  Permanent,
	ReasonAborted:        Canceled,
}

// Class returns the class a reason belongs to, and false for a reason that is
// not one of the declared values.
func (r Reason) Class() (Class, bool) {
	c, ok := reasonClass[r]
	return c, ok
}

// Failure is everything a host knows about one failed model request. Fill
// what you have; every field is optional.
type Failure struct {
	// Provider is the host's provider id ("anthropic", "openai", "bedrock",
	// ...). It enables the rules written for that provider; common aliases
	// are understood and case is ignored. An unknown or empty id simply
	// skips provider-specific rules.
	Provider string
	// Model is the model id the request used.
	Model string
	// Status is the HTTP status code, or 0 when there was none (a network
	// error, or an error event inside a 200 stream).
	Status int
	// Code is the provider's error type or code when the host's SDK exposes
	// it separately ("overloaded_error", "insufficient_quota").
	Code string
	// Message is the error text or raw response body as the host has it. It
	// may be wrapped by SDKs and gateways ("Error: 503 litellm...: <body>").
	Message string
	// Header holds the response headers, when available.
	Header http.Header
	// Err is the Go error chain, when there is one.
	Err error
	// At is when the failure was observed. It anchors HTTP-date Retry-After
	// values and reset times stated as durations. When zero, those values
	// that need it are ignored.
	At time.Time
}

// Classification is the verdict on one Failure.
type Classification struct {
	// Class is what the next request should be.
	Class Class
	// Reason refines Class.
	Reason Reason
	// Rule is the id of the rule that decided ("anthropic.overloaded",
	// "status.429", "go.context_canceled"); empty only for Unknown.
	Rule string
	// RetryAfter is the wait the server stated in headers or body, or 0.
	RetryAfter time.Duration
	// ResetAt is when a Quota or Billing limit resets, when the text states
	// a reset time or a duration (anchored at Failure.At); zero otherwise.
	ResetAt time.Time
}

// LogValue implements slog.LogValuer: a group of the non-empty fields.
func (c Classification) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("class", c.Class.String()))
	if c.Reason != "" {
		attrs = append(attrs, slog.String("reason", string(c.Reason)))
	}
	if c.Rule != "" {
		attrs = append(attrs, slog.String("rule", c.Rule))
	}
	if c.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", c.RetryAfter))
	}
	if !c.ResetAt.IsZero() {
		attrs = append(attrs, slog.Time("reset_at", c.ResetAt))
	}
	return slog.GroupValue(attrs...)
}

// Classifier classifies failures with a compiled rule set. Build one with
// NewClassifier; the package-level Classify uses the embedded defaults. A
// Classifier is immutable once built and safe for concurrent use.
type Classifier struct {
	rules *ruleSet
}

// Classify classifies f with c's rules.
func (c *Classifier) Classify(f Failure) Classification {
	return Classification{} // implemented with the rule engine
}

// Classify classifies f with the embedded default rules. It never panics and
// does not allocate for messages of ordinary size.
func Classify(f Failure) Classification {
	return Classification{} // implemented with the rule engine
}

// ClassifyError classifies a Go error alone: it walks the error chain for
// cancellation, timeouts and network faults, then reads the error's text.
func ClassifyError(err error) Classification {
	if err == nil {
		return Classification{}
	}
	return Classify(Failure{Err: err})
}

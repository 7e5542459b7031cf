// Package otel records erradvisor's verdicts and decisions as OpenTelemetry
// telemetry: span attributes and events that follow the GenAI semantic
// conventions, and counters of failures, retries, stops and compactions.
//
// The attributes are the conventions' own where one exists
// (gen_ai.provider.name, gen_ai.request.model, gen_ai.response.finish_reasons,
// error.type, http.response.status_code) and erradvisor.* otherwise. Their
// values come from erradvisor's closed vocabularies (classes, reasons, rule
// ids, actions, causes) and from the host's own provider and model ids, never
// from a response body or an error text, which can quote prompts and secrets.
// That is why nothing here calls span.RecordError: an error's text is
// provider text.
//
// Semantic conventions: https://opentelemetry.io/docs/specs/semconv/gen-ai/
// (spans and metrics of GenAI clients) and
// https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/
// (the gen_ai.* attributes and the values of gen_ai.provider.name).
package otel

import (
	"time"

	"github.com/erradvisor/erradvisor"
	"go.opentelemetry.io/otel/attribute"
)

// Attribute keys of the OpenTelemetry semantic conventions that this
// package sets.
const (
	// ProviderNameKey is gen_ai.provider.name: the GenAI provider, spelled
	// as the conventions spell it (see ProviderName).
	ProviderNameKey = attribute.Key("gen_ai.provider.name")
	// SystemKey is gen_ai.system, the name gen_ai.provider.name had before
	// semantic conventions v1.37. It is set only by LegacyAttributes.
	SystemKey = attribute.Key("gen_ai.system")
	// RequestModelKey is gen_ai.request.model: the model the request asked
	// for.
	RequestModelKey = attribute.Key("gen_ai.request.model")
	// ResponseFinishReasonsKey is gen_ai.response.finish_reasons: why the
	// model stopped generating, one value per choice.
	ResponseFinishReasonsKey = attribute.Key("gen_ai.response.finish_reasons")
	// ErrorTypeKey is error.type: a low-cardinality name of the error that
	// ended the operation; here the id of the rule that classified it (see
	// ErrorType).
	ErrorTypeKey = attribute.Key("error.type")
	// HTTPStatusKey is http.response.status_code.
	HTTPStatusKey = attribute.Key("http.response.status_code")
)

// Attribute keys of erradvisor's own namespace.
const (
	// ClassKey is the failure's Class ("transient", "overflow", ...).
	ClassKey = attribute.Key("erradvisor.class")
	// ReasonKey is the failure's Reason ("overloaded", "context_window",
	// ...), absent for Unknown.
	ReasonKey = attribute.Key("erradvisor.reason")
	// RuleKey is the id of the rule that classified the failure
	// ("anthropic.overloaded", "status.429").
	RuleKey = attribute.Key("erradvisor.rule")
	// RetryAfterKey is the wait the server asked for, in milliseconds.
	RetryAfterKey = attribute.Key("erradvisor.retry_after_ms")
	// ResetAtKey is when a quota or billing limit resets, as an RFC 3339
	// time in UTC. It is a span attribute only, never a metric attribute.
	ResetAtKey = attribute.Key("erradvisor.reset_at")
	// ActionKey is the Decision's Action ("retry", "compact", "stop", ...).
	ActionKey = attribute.Key("erradvisor.action")
	// CauseKey is the Decision's Cause ("retryable", "retries_exhausted",
	// "quota", ...).
	CauseKey = attribute.Key("erradvisor.cause")
	// RetryAttemptKey is the retry (or continuation) number, from 1.
	RetryAttemptKey = attribute.Key("erradvisor.retry.attempt")
	// RetryMaxKey is the policy's limit for the attempt number, when it has
	// one.
	RetryMaxKey = attribute.Key("erradvisor.retry.max")
	// RetryDelayKey is the delay before a Retry, in milliseconds.
	RetryDelayKey = attribute.Key("erradvisor.retry.delay_ms")
	// CeilingKey is the limit a Stop ran into (the longest honoured wait,
	// or the retry-time budget), in milliseconds.
	CeilingKey = attribute.Key("erradvisor.ceiling_ms")
	// CompactionKey is the compaction reason of a Compact ("overflow",
	// "threshold").
	CompactionKey = attribute.Key("erradvisor.compaction")
)

// OtherErrorType is the error.type value the conventions reserve for an
// error the instrumentation has no name for: here, a failure no rule
// matched.
const OtherErrorType = "_OTHER"

// otelProviders maps erradvisor's canonical provider ids to the values of
// gen_ai.provider.name
// (https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/).
var otelProviders = map[string]string{
	"anthropic":  "anthropic",
	"openai":     "openai",
	"gemini":     "gcp.gemini",
	"azure":      "azure.ai.openai",
	"bedrock":    "aws.bedrock",
	"xai":        "x_ai",
	"mistral":    "mistral_ai",
	"deepseek":   "deepseek",
	"groq":       "groq",
	"cohere":     "cohere",
	"perplexity": "perplexity",
	"watsonx":    "ibm.watsonx.ai",
}

// finer maps folded host ids whose canonical id is shared by several
// gen_ai.provider.name values to the more precise value: erradvisor reads
// Vertex AI and the Gemini API with the same rules, OpenTelemetry tells them
// apart.
var finer = map[string]string{
	"vertex": "gcp.vertex_ai", "vertexai": "gcp.vertex_ai", "googlevertex": "gcp.vertex_ai",
	"gcpvertexai": "gcp.vertex_ai", "googlevertexai": "gcp.vertex_ai",
	"gcpgenai":         "gcp.gen_ai",
	"azureaiinference": "azure.ai.inference", "azaiinference": "azure.ai.inference",
}

// ProviderName returns the gen_ai.provider.name value for the host's
// provider id p: "anthropic", "openai", "gcp.gemini" (for "gemini",
// "google"), "gcp.vertex_ai" (for "vertex"), "azure.ai.openai" (for
// "azure"), "aws.bedrock" (for "bedrock", "amazon-bedrock"), "x_ai",
// "mistral_ai", and so on. Values the conventions already use come back as
// they are. A provider the conventions do not name gets erradvisor's
// canonical id (lower-case letters and digits), which the conventions allow
// for providers they do not list; an id without letters or digits gives "".
func ProviderName(p string) string {
	var buf [64]byte
	if v, ok := finer[string(fold(p, buf[:]))]; ok {
		return v
	}
	c := erradvisor.CanonicalProvider(p)
	if v, ok := otelProviders[c]; ok {
		return v
	}
	return c
}

// fold writes p's ASCII letters (lower-cased) and digits into buf and
// returns them, as erradvisor folds provider ids.
func fold(p string, buf []byte) []byte {
	n := 0
	for i := 0; i < len(p) && n < len(buf); i++ {
		switch c := p[i]; {
		case c >= 'A' && c <= 'Z':
			buf[n] = c + 'a' - 'A'
			n++
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			buf[n] = c
			n++
		}
	}
	return buf[:n]
}

// ErrorType returns the error.type value for c: the id of the rule that
// classified the failure, which is low-cardinality (one per rule) and says
// the most; else the Reason; else OtherErrorType.
func ErrorType(c erradvisor.Classification) string {
	switch {
	case c.Rule != "":
		return c.Rule
	case c.Reason != "":
		return string(c.Reason)
	}
	return OtherErrorType
}

// ClassificationAttributes returns the attributes of a verdict: error.type,
// erradvisor.class, and, when set, erradvisor.reason, erradvisor.rule,
// erradvisor.retry_after_ms and erradvisor.reset_at.
func ClassificationAttributes(c erradvisor.Classification) []attribute.KeyValue {
	return appendClassification(make([]attribute.KeyValue, 0, 6), c)
}

func appendClassification(kv []attribute.KeyValue, c erradvisor.Classification) []attribute.KeyValue {
	kv = append(kv, ErrorTypeKey.String(ErrorType(c)), ClassKey.String(c.Class.String()))
	if c.Reason != "" {
		kv = append(kv, ReasonKey.String(string(c.Reason)))
	}
	if c.Rule != "" {
		kv = append(kv, RuleKey.String(c.Rule))
	}
	if c.RetryAfter > 0 {
		kv = append(kv, RetryAfterKey.Int64(c.RetryAfter.Milliseconds()))
	}
	if !c.ResetAt.IsZero() {
		kv = append(kv, ResetAtKey.String(c.ResetAt.UTC().Format(time.RFC3339)))
	}
	return kv
}

// FailureAttributes returns the attributes of a failed request that do not
// depend on its verdict: gen_ai.provider.name (see ProviderName),
// gen_ai.request.model and http.response.status_code, each when known.
//
// The Message, Code, Header and Err of f are left out on purpose: they are
// the provider's text and may quote the prompt or a credential. The verdict
// (ClassificationAttributes) says what they meant.
func FailureAttributes(f erradvisor.Failure) []attribute.KeyValue {
	return appendTarget(make([]attribute.KeyValue, 0, 3), f.Provider, f.Model, f.Status)
}

func appendTarget(kv []attribute.KeyValue, provider, model string, status int) []attribute.KeyValue {
	if p := ProviderName(provider); p != "" {
		kv = append(kv, ProviderNameKey.String(p))
	}
	if model != "" {
		kv = append(kv, RequestModelKey.String(model))
	}
	if status > 0 {
		kv = append(kv, HTTPStatusKey.Int(status))
	}
	return kv
}

// FinishReason returns the gen_ai.response.finish_reasons value for s. The
// conventions name "stop", "length", "content_filter", "tool_call" and
// "error" (the finish reasons of their output-message schema); the stop
// reasons they do not name get erradvisor's own: "aborted", "paused",
// "context_window" and "unknown".
func FinishReason(s erradvisor.StopReason) string {
	switch s {
	case erradvisor.StopEndTurn:
		return "stop"
	case erradvisor.StopLength:
		return "length"
	case erradvisor.StopToolUse:
		return "tool_call"
	case erradvisor.StopError:
		return "error"
	case erradvisor.StopRefused:
		return "content_filter"
	case erradvisor.StopAborted:
		return "aborted"
	case erradvisor.StopPaused:
		return "paused"
	case erradvisor.StopContextWindow:
		return "context_window"
	}
	return "unknown"
}

// OutcomeAttributes returns the attributes of one turn as the host reported
// it to Session.Decide: gen_ai.provider.name and gen_ai.request.model (the
// Failure's when it names them, else the Outcome's), http.response.status_code
// for a failure, and gen_ai.response.finish_reasons. The verdict is the
// Decision's: see DecisionAttributes.
func OutcomeAttributes(o erradvisor.Outcome) []attribute.KeyValue {
	provider, model := o.Provider, o.Model
	if o.Failure.Provider != "" {
		provider = o.Failure.Provider
	}
	if o.Failure.Model != "" {
		model = o.Failure.Model
	}
	kv := appendTarget(make([]attribute.KeyValue, 0, 4), provider, model, o.Failure.Status)
	return append(kv, ResponseFinishReasonsKey.StringSlice([]string{FinishReason(o.Stop)}))
}

// LegacyAttributes returns gen_ai.system set to the value of
// gen_ai.provider.name, for backends that still read the attribute's name
// before semantic conventions v1.37. It returns nil when ProviderName(p) is
// empty.
func LegacyAttributes(p string) []attribute.KeyValue {
	if v := ProviderName(p); v != "" {
		return []attribute.KeyValue{SystemKey.String(v)}
	}
	return nil
}

// DecisionAttributes returns the attributes of a Decision: erradvisor.action
// and erradvisor.cause; erradvisor.retry.attempt and erradvisor.retry.max
// when the decision counts attempts; erradvisor.retry.delay_ms for a Retry;
// erradvisor.ceiling_ms when a Stop ran into a limit; erradvisor.compaction
// for a Compact; and the verdict's attributes (ClassificationAttributes)
// when the decision carries one: a failed request's, or the one the Session
// gives a refusal or a context-window stop. A failed request that no rule
// matched has class "unknown" and error.type "_OTHER". Any other Stop (an
// unknown stop reason, the continuation cap) gets error.type set to its
// cause, since the turn did not complete.
func DecisionAttributes(d erradvisor.Decision) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 12)
	kv = append(kv, ActionKey.String(d.Action.String()), CauseKey.String(d.Cause.String()))
	if d.Attempt > 0 {
		kv = append(kv, RetryAttemptKey.Int(d.Attempt))
		if d.Max > 0 {
			kv = append(kv, RetryMaxKey.Int(d.Max))
		}
	}
	if d.Action == erradvisor.Retry {
		kv = append(kv, RetryDelayKey.Int64(d.Delay.Milliseconds()))
	}
	if d.Ceiling > 0 {
		kv = append(kv, CeilingKey.Int64(d.Ceiling.Milliseconds()))
	}
	if d.Action == erradvisor.Compact && d.Compaction != "" {
		kv = append(kv, CompactionKey.String(string(d.Compaction)))
	}
	switch {
	case hasVerdict(d):
		kv = appendClassification(kv, d.Classification)
	case d.Action == erradvisor.Stop:
		kv = append(kv, ErrorTypeKey.String(d.Cause.String()))
	}
	return kv
}

// hasVerdict reports whether d carries a verdict: a non-zero
// Classification, or a cause that only a failed request gives (whose
// verdict may be the zero Unknown).
func hasVerdict(d erradvisor.Decision) bool {
	if d.Classification != (erradvisor.Classification{}) {
		return true
	}
	switch d.Cause {
	case erradvisor.CauseRetryable, erradvisor.CauseRetriesExhausted, erradvisor.CauseRetryTimeExhausted,
		erradvisor.CauseWaitTooLong, erradvisor.CauseNotRetryable, erradvisor.CauseQuota,
		erradvisor.CauseClientRetried, erradvisor.CauseDeferPattern:
		return true
	}
	return false
}

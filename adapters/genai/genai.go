// Package genai turns errors and finish reasons of Google's Gen AI Go SDK
// (google.golang.org/genai), for the Gemini API and Vertex AI, into
// erradvisor values.
//
// A request made with that SDK fails in one of three ways:
//
//   - an HTTP error response: the SDK returns a genai.APIError holding the
//     parsed error object of the body (code, message, status word such as
//     "RESOURCE_EXHAUSTED", and details such as google.rpc.RetryInfo and
//     google.rpc.QuotaFailure);
//   - an error object inside a 200 stream: GenerateContentStream yields the
//     same genai.APIError;
//   - a Go error: a canceled context, a deadline, a dropped connection or a
//     cut stream, which the SDK wraps with %w.
//
// [Failure] covers all three. The APIError carries no response headers: the
// SDK drops them, so Retry-After and Date never reach it (the SDK's own
// retry loop ignores Retry-After too). Send the SDK's requests through an
// httprec.Recorder (genai.ClientConfig{HTTPClient: rec.Client()}) and fill
// the Failure from the recorded response to get them back; see the package
// example.
//
// The SDK retries only when HTTPOptions.RetryOptions is set; leave it nil
// (or set Attempts to 1) and let the request loop decide, since stacked
// retry layers hide quota errors and multiply latency.
package genai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"google.golang.org/genai"
)

// Provider is the provider id the adapter puts in Failure.Provider for the
// Gemini API. It enables erradvisor's Gemini-specific rules.
const Provider = "gemini"

// ProviderVertex is the provider id for a client on Vertex AI. erradvisor
// reads it as Gemini; a host that tells the two apart in its logs keeps the
// distinction.
const ProviderVertex = "vertex"

// Failure describes err, an error returned by a genai call or yielded by a
// GenerateContentStream iterator, as an erradvisor.Failure for the Gemini
// API. Use [FailureFor] when the client may be on Vertex AI.
//
// For a genai.APIError found with errors.As (an HTTP error response, or an
// error object inside a stream), Status is the error's HTTP code, Code its
// status word ("RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", ...), and Message a
// JSON rendering of the error object, {"error":{"code","message","status",
// "details"}}, so the classifier reads the message together with the
// details' retryDelay and quota metric ids (Code is empty when the object
// has no status word). When the server's body was not a JSON error object
// the SDK keeps it as text: Message is then that text and Code is empty.
//
// Any other error (context.Canceled, a deadline, a dropped connection, a
// cut stream) gives a Failure with only Provider, Message (err.Error()) and
// Err.
//
// Err is always err itself, so the classifier walks the whole chain. Header
// is nil and At is zero, because the SDK's error carries no headers: fill
// them from an httprec.Recorder, or set At to the host clock's now. Model is
// left for the host. A nil err gives the zero Failure.
func Failure(err error) erradvisor.Failure {
	return failure(Provider, err)
}

// FailureFor is [Failure] for a client on the given backend: Provider is
// [ProviderVertex] for genai.BackendVertexAI and genai.BackendEnterprise, and
// [Provider] otherwise. Pass client.ClientConfig().Backend.
func FailureFor(backend genai.Backend, err error) erradvisor.Failure {
	p := Provider
	if backend == genai.BackendVertexAI || backend == genai.BackendEnterprise {
		p = ProviderVertex
	}
	return failure(p, err)
}

func failure(provider string, err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Provider: provider, Err: err}
	if apiErr, ok := asAPIError(err); ok {
		if apiErr.Code >= 100 && apiErr.Code <= 599 {
			f.Status = apiErr.Code
		}
		switch {
		case isStatusWord(apiErr.Status):
			f.Code = apiErr.Status
			f.Message = render(apiErr)
		case apiErr.Status == "":
			// A JSON error object without a status word.
			f.Message = render(apiErr)
		default:
			// The body was not a JSON error object; the SDK kept it as
			// text and put the HTTP status line ("502 Bad Gateway") in
			// Status.
			f.Message = strings.TrimSpace(apiErr.Message)
		}
	}
	if f.Message == "" {
		f.Message = err.Error()
	}
	return f
}

// asAPIError finds a genai.APIError, by value or by pointer, in err's chain.
func asAPIError(err error) (genai.APIError, bool) {
	var v genai.APIError
	if errors.As(err, &v) {
		return v, true
	}
	var p *genai.APIError
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return genai.APIError{}, false
}

// isStatusWord reports whether s looks like a google.rpc.Code name such as
// "RESOURCE_EXHAUSTED": upper-case letters and underscores.
func isStatusWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return true
}

// render returns the error object as the API sends it, {"error":{...}},
// with the message's characters left as they are.
func render(e genai.APIError) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(struct {
		Error genai.APIError `json:"error"`
	}{e}) != nil {
		return ""
	}
	return strings.TrimSpace(buf.String())
}

// Classify classifies err with erradvisor's default rules, observed now:
// erradvisor.Classify(f) where f is Failure(err) with At set to time.Now().
// A nil err gives the zero Classification (Unknown).
func Classify(err error) erradvisor.Classification {
	if err == nil {
		return erradvisor.Classification{}
	}
	f := Failure(err)
	f.At = time.Now()
	return erradvisor.Classify(f)
}

// StopReason maps a candidate's finish reason to erradvisor's stop reason:
//
//   - STOP: StopEndTurn (a turn with function calls also ends with STOP;
//     [ResponseStopReason] tells it apart);
//   - MAX_TOKENS: StopLength;
//   - SAFETY, RECITATION, LANGUAGE, BLOCKLIST, PROHIBITED_CONTENT, SPII,
//     IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT, IMAGE_RECITATION: StopRefused
//     (the answer was withheld; the same request gets the same answer);
//   - CONTINUATION: StopPaused (the per-request token limit was reached and
//     the same request, sent again with the continuation token, carries on;
//     the SDK does that itself unless AutomaticContinuation is false);
//   - MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS,
//     NO_IMAGE, IMAGE_OTHER, OTHER, FINISH_REASON_UNSPECIFIED, the empty
//     reason and any reason this package does not know: StopUnknown, never
//     a normal end.
func StopReason(reason genai.FinishReason) erradvisor.StopReason {
	switch reason {
	case genai.FinishReasonStop:
		return erradvisor.StopEndTurn
	case genai.FinishReasonMaxTokens:
		return erradvisor.StopLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonLanguage,
		genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent, genai.FinishReasonSPII,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent,
		genai.FinishReasonImageRecitation:
		return erradvisor.StopRefused
	case genai.FinishReasonContinuation:
		return erradvisor.StopPaused
	}
	return erradvisor.StopUnknown
}

// ResponseStopReason is how a GenerateContent response (or the last chunk of
// a stream) ended, from its first candidate:
//
//   - a prompt blocked by the safety filters (PromptFeedback.BlockReason set,
//     no candidates): StopRefused;
//   - a STOP whose candidate holds function calls: StopToolUse;
//   - otherwise [StopReason] of the first candidate's finish reason.
//
// A nil response or one without candidates gives StopUnknown.
func ResponseStopReason(resp *genai.GenerateContentResponse) erradvisor.StopReason {
	if resp == nil {
		return erradvisor.StopUnknown
	}
	if resp.PromptFeedback != nil && resp.PromptFeedback.BlockReason != "" &&
		resp.PromptFeedback.BlockReason != genai.BlockedReasonUnspecified {
		return erradvisor.StopRefused
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return erradvisor.StopUnknown
	}
	c := resp.Candidates[0]
	if c.FinishReason == genai.FinishReasonStop && c.Content != nil {
		for _, p := range c.Content.Parts {
			if p != nil && p.FunctionCall != nil {
				return erradvisor.StopToolUse
			}
		}
	}
	return StopReason(c.FinishReason)
}

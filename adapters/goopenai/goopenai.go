// Package goopenai turns errors of the community OpenAI Go client
// github.com/sashabaranov/go-openai into erradvisor Failures, and its finish
// reasons into erradvisor stop reasons.
//
// The client fails in four ways, and Failure reads each:
//
//   - an HTTP error response whose body holds an "error" object: the client
//     returns an *openai.APIError with the status, the error's code (a string
//     or a number), type, message and param;
//   - an HTTP error response it cannot read as such (an HTML gateway page,
//     plain text, an empty body): an *openai.RequestError with the status and
//     the raw body;
//   - an error inside a 200 stream: stream.Recv returns an *openai.APIError
//     with no status (a data line holding an "error" object), or
//     openai.ErrTooManyEmptyStreamMessages when the server sent too many
//     lines that were not events;
//   - a Go error: a cancel, a deadline, a refused or dropped connection,
//     which stays in Failure.Err for the classifier's error-chain rules.
//
// The client keeps no response headers on an error. To give the classifier
// Retry-After and the rate-limit headers, pass the client an http.Client
// whose Transport records the last failed response (see the README).
//
// The client is used for many OpenAI-compatible servers (Azure OpenAI,
// OpenRouter, Groq, vLLM, Ollama's /v1 endpoint, ...): FailureFor names the
// provider actually called.
//
// go-openai has no retries of its own: each call makes one HTTP request and
// returns its error. Keep it that way (do not wrap its HTTPClient in a
// retrying transport), so that the request loop sees every quota error.
package goopenai

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	openai "github.com/sashabaranov/go-openai"
)

// Provider is the provider id Failure puts in Failure.Provider. It enables
// erradvisor's OpenAI-specific rules.
const Provider = "openai"

// maxBody caps how much of a RequestError's body goes into Failure.Message.
// Error bodies are small; an HTML error page is cut.
const maxBody = 64 << 10

// Failure describes err, an error returned by a go-openai call or by a
// stream's Recv, as an erradvisor.Failure for the OpenAI API. It is
// FailureFor(Provider, err).
func Failure(err error) erradvisor.Failure {
	return FailureFor(Provider, err)
}

// FailureFor describes err, an error returned by a go-openai call or by a
// stream's Recv, as an erradvisor.Failure from provider, the id of the
// server the client was pointed at ("openai", "azure", "openrouter",
// "groq", "ollama", ...; see erradvisor.CanonicalProvider).
//
// For an *openai.RequestError found with errors.As (an error status whose
// body is not an OpenAI error object), Status is its HTTP status and
// Message its raw body (up to 64 KiB); when it wraps an *openai.APIError,
// Code comes from that.
//
// For an *openai.APIError, Status is its HTTP status (0 for an error object
// inside a 200 stream), Code is its code (a string, or a number written in
// decimal) or else its type, and Message is the error object written back
// as the API sends it, {"error":{"message","type","param","code"}}: the
// client keeps no raw body. Azure's innererror (a content-filter verdict)
// is kept in it.
//
// For openai.ErrTooManyEmptyStreamMessages, Message reads "stream error:
// stream has sent too many empty messages", so the stream fault is
// classified as one (transient, stream).
//
// Any other error (context.Canceled, a deadline, a refused or dropped
// connection) gives a Failure with only Provider, Message (err.Error()) and
// Err.
//
// Err is always err itself, so the classifier walks the whole chain. Header
// is empty and At zero, since the client keeps no response: set At to the
// host clock's now, or fill both from a recorded response. Model is left for
// the host. A nil err gives the zero Failure.
func FailureFor(provider string, err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Provider: provider, Err: err}
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	if errors.As(err, &reqErr) && reqErr != nil {
		f.Status = reqErr.HTTPStatusCode
		body := reqErr.Body
		if len(body) > maxBody {
			body = body[:maxBody]
		}
		f.Message = strings.TrimSpace(string(body))
	}
	if errors.As(err, &apiErr) && apiErr != nil {
		if f.Status == 0 {
			f.Status = apiErr.HTTPStatusCode
		}
		f.Code = firstNonEmpty(codeString(apiErr.Code), apiErr.Type)
		if f.Message == "" {
			f.Message = errorBody(apiErr)
		}
	}
	if f.Message == "" && errors.Is(err, openai.ErrTooManyEmptyStreamMessages) {
		f.Message = "stream error: " + openai.ErrTooManyEmptyStreamMessages.Error()
	}
	if f.Message == "" {
		f.Message = err.Error()
	}
	return f
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

// StopReason maps a chat completion choice's finish reason to an
// erradvisor.StopReason:
//
//	"stop"                          StopEndTurn
//	"length"                        StopLength
//	"tool_calls", "function_call"   StopToolUse
//	"content_filter"                StopRefused
//
// Anything else, among them openai.FinishReasonNull, the empty reason of a
// stream chunk that is not the last, and reasons other servers invent,
// gives StopUnknown, never StopEndTurn.
func StopReason(reason openai.FinishReason) erradvisor.StopReason {
	switch reason {
	case openai.FinishReasonStop:
		return erradvisor.StopEndTurn
	case openai.FinishReasonLength:
		return erradvisor.StopLength
	case openai.FinishReasonToolCalls, openai.FinishReasonFunctionCall:
		return erradvisor.StopToolUse
	case openai.FinishReasonContentFilter:
		return erradvisor.StopRefused
	}
	return erradvisor.StopUnknown
}

// errorBody writes e back as the API's error document. The fields are set
// by hand so that a code the client read as a number stays a number. The
// client reads "code": null as the number 0 (null leaves an int unset
// without an error), so an int 0 is written as null.
func errorBody(e *openai.APIError) string {
	code := e.Code
	if c, ok := code.(int); ok && c == 0 {
		code = nil
	}
	type inner struct {
		Message    string             `json:"message"`
		Type       string             `json:"type"`
		Param      *string            `json:"param"`
		Code       any                `json:"code"`
		InnerError *openai.InnerError `json:"innererror,omitempty"`
	}
	b, err := json.Marshal(struct {
		Error inner `json:"error"`
	}{inner{Message: e.Message, Type: e.Type, Param: e.Param, Code: code, InnerError: e.InnerError}})
	if err != nil {
		return e.Message
	}
	return string(b)
}

// codeString returns an APIError's code as text: a string as it is, a
// whole number in decimal, nothing for anything else. An int 0 is the
// client's reading of "code": null, so it gives nothing too.
func codeString(code any) string {
	switch c := code.(type) {
	case string:
		return c
	case int:
		if c != 0 {
			return strconv.Itoa(c)
		}
	case int64:
		return strconv.FormatInt(c, 10)
	case float64:
		if c == math.Trunc(c) && math.Abs(c) < 1<<53 {
			return strconv.FormatInt(int64(c), 10)
		}
	case json.Number:
		return c.String()
	}
	return ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

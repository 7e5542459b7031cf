// Package anthropic turns errors of the official Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2) into erradvisor Failures.
//
// The SDK reports every API failure as an *anthropic.Error: an HTTP error
// response (429 rate_limit_error, 529 overloaded_error, 400 "prompt is too
// long", ...) and also an `event: error` inside a 200 event stream, which
// stream.Err() returns with the stream's status (200). Failure tells the two
// apart: a streamed error has Status 0, as erradvisor expects for an error
// event inside a 200 stream.
//
// Cancellations, deadlines and network faults stay in Failure.Err, so the
// classifier sees them through the Go error chain.
//
// StopReason maps a successful message's stop_reason to an
// erradvisor.StopReason.
//
// Turn the SDK's own retries off (option.WithMaxRetries(0)) and let the
// request loop decide; stacked retry layers hide quota errors and multiply
// latency.
package anthropic

import (
	"errors"
	"net/http"
	"strings"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/erradvisor/erradvisor"
)

// Provider is the provider id the adapter puts in Failure.Provider. It
// enables erradvisor's Anthropic-specific rules.
const Provider = "anthropic"

// Failure describes err, an error returned by an anthropic-sdk-go call or by
// a stream's Err method, as an erradvisor.Failure.
//
// For an *anthropic.Error found with errors.As, Status is the HTTP status (0
// for an error event inside a 200 stream), Code is the error type from the
// body ("overloaded_error", "rate_limit_error", ...), Message is the raw
// response body or event data, and Header the response headers (among them
// x-should-retry, retry-after and the anthropic-ratelimit-* resets).
//
// Any other error (context.Canceled, a deadline, a dropped connection)
// gives a Failure with only Provider, Message (err.Error()) and Err.
//
// Err is always err itself, so the classifier walks the whole chain. When
// the error carries the HTTP response (an *anthropic.Error, streamed or
// not), At is the time of its Date header (parsed with http.ParseTime),
// which anchors HTTP-date Retry-After values and reset times; otherwise At
// is zero and the host sets it to its clock's now. Model is left empty for
// the host to fill. A nil err gives the zero Failure.
func Failure(err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Provider: Provider, Err: err}
	var apiErr *ant.Error
	if errors.As(err, &apiErr) && apiErr != nil {
		if apiErr.StatusCode >= 400 {
			f.Status = apiErr.StatusCode
		}
		f.Code = string(apiErr.Type())
		if f.Code == "" {
			f.Code = string(apiErr.ErrorCode())
		}
		f.Message = strings.TrimSpace(apiErr.RawJSON())
		if f.Message == "" {
			f.Message = apiErr.Message
		}
		// An error event inside a 200 stream carries the stream's response:
		// its headers and Date describe the stream's start, not the failure.
		if apiErr.Response != nil && apiErr.StatusCode >= 400 {
			f.Header = apiErr.Response.Header
			if at, err := http.ParseTime(apiErr.Response.Header.Get("Date")); err == nil {
				f.At = at
			}
		}
	}
	if f.Message == "" {
		f.Message = err.Error()
	}
	return f
}

// Classify classifies err with erradvisor's default rules:
// erradvisor.Classify(f) where f is Failure(err), with At set to time.Now()
// when the response gave no Date. A nil err gives the zero Classification
// (Unknown).
func Classify(err error) erradvisor.Classification {
	if err == nil {
		return erradvisor.Classification{}
	}
	f := Failure(err)
	if f.At.IsZero() {
		f.At = time.Now()
	}
	return erradvisor.Classify(f)
}

// StopReason maps a message's stop_reason (anthropic.Message.StopReason, or
// the message_delta event's Delta.StopReason in a stream) to an
// erradvisor.StopReason:
//
//	"end_turn", "stop_sequence"        StopEndTurn
//	"max_tokens"                       StopLength
//	"tool_use"                         StopToolUse
//	"pause_turn"                       StopPaused (send the response back
//	                                   as it is to let the turn go on)
//	"refusal"                          StopRefused
//	"model_context_window_exceeded"    StopContextWindow
//
// Anything else, among them "" (a stream cut before its message_delta),
// gives StopUnknown, never StopEndTurn.
func StopReason(reason ant.StopReason) erradvisor.StopReason {
	switch reason {
	case ant.StopReasonEndTurn, ant.StopReasonStopSequence:
		return erradvisor.StopEndTurn
	case ant.StopReasonMaxTokens:
		return erradvisor.StopLength
	case ant.StopReasonToolUse:
		return erradvisor.StopToolUse
	case ant.StopReasonPauseTurn:
		return erradvisor.StopPaused
	case ant.StopReasonRefusal:
		return erradvisor.StopRefused
	case ant.StopReasonModelContextWindowExceeded:
		return erradvisor.StopContextWindow
	}
	return erradvisor.StopUnknown
}

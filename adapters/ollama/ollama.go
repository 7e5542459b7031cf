// Package ollama turns errors of the Ollama Go client
// (github.com/ollama/ollama/api) into erradvisor Failures, and its done
// reasons into erradvisor stop reasons.
//
// The client fails in these ways, and Failure reads each:
//
//   - an HTTP error response: an api.StatusError with the status code, the
//     status line (on streaming calls) and the text of the body's "error"
//     field (or the whole body when it is not JSON);
//   - a 401 from ollama.com or a server that requires sign-in: an
//     api.AuthorizationError with the status and a sign-in URL;
//   - an {"error": ...} line inside a 200 stream: a plain error holding
//     that text;
//   - a Go error: the server not running (connection refused), a cancel, a
//     deadline, which stays in Failure.Err for the classifier's error-chain
//     rules.
//
// One failure the client does not report: when a stream's connection breaks
// mid-answer, Chat and Generate return nil. A host that saw no response
// with Done set should use ErrStreamEnded as the error.
//
// The client has no retries of its own: each call makes one HTTP request.
package ollama

import (
	"errors"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/ollama/ollama/api"
)

// Provider is the provider id the adapter puts in Failure.Provider.
const Provider = "ollama"

// ErrStreamEnded stands for a Chat or Generate stream that ended without a
// response with Done set while the call returned nil: the client ignores a
// read error on the stream, so a connection cut mid-answer looks like a
// success. Failure classifies it as a stream fault (transient).
var ErrStreamEnded = errors.New("ollama stream ended unexpectedly: no response with done set")

// Failure describes err, an error returned by an Ollama client call, as an
// erradvisor.Failure.
//
// For an api.StatusError (or *api.StatusError) found with errors.As, Status
// is its status code and Message the text of the error body (the client
// keeps the "error" field, or the raw body when it is not JSON), or its
// status line when that is empty. For an api.AuthorizationError, Status is
// its status code (401) and Message its status line, else "unauthorized".
// Ollama has no error codes: Code stays empty.
//
// Any other error (an error line in a 200 stream, connection refused when
// the server is not running, a cancel, a deadline, ErrStreamEnded) gives a
// Failure with only Provider, Message (err.Error()) and Err.
//
// Err is always err itself, so the classifier walks the whole chain. Header
// is empty and At zero, since the client keeps no response: set At to the
// host clock's now. Model is left for the host. A nil err gives the zero
// Failure.
func Failure(err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Provider: Provider, Err: err}
	var se api.StatusError
	var sep *api.StatusError
	var ae api.AuthorizationError
	var aep *api.AuthorizationError
	switch {
	case errors.As(err, &se):
		f.Status, f.Message = se.StatusCode, firstNonEmpty(se.ErrorMessage, se.Status)
	case errors.As(err, &sep) && sep != nil:
		f.Status, f.Message = sep.StatusCode, firstNonEmpty(sep.ErrorMessage, sep.Status)
	case errors.As(err, &ae):
		f.Status, f.Message = ae.StatusCode, firstNonEmpty(ae.Status, "unauthorized")
	case errors.As(err, &aep) && aep != nil:
		f.Status, f.Message = aep.StatusCode, firstNonEmpty(aep.Status, "unauthorized")
	}
	if f.Status < 0 {
		f.Status = 0
	}
	f.Message = strings.TrimSpace(f.Message)
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

// StopReason maps the done_reason of the last response of a Chat or
// Generate call (api.ChatResponse.DoneReason,
// api.GenerateResponse.DoneReason) to an erradvisor.StopReason:
//
//	"stop"             StopEndTurn
//	"length"           StopLength
//	"load", "unload"   StopEndTurn (a request with no prompt that only
//	                   loaded or unloaded the model ended normally)
//
// Anything else gives StopUnknown, never StopEndTurn: among them "", which
// the server sends when the runner's connection closed before the answer
// was done. Ollama reports tool calls in the message, not in done_reason:
// a host that finds ToolCalls in the final message should treat the turn
// as StopToolUse.
func StopReason(doneReason string) erradvisor.StopReason {
	switch doneReason {
	case "stop", "load", "unload":
		return erradvisor.StopEndTurn
	case "length":
		return erradvisor.StopLength
	}
	return erradvisor.StopUnknown
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

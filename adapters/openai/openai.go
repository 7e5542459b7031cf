// Package openai turns errors of the official OpenAI Go SDK
// (github.com/openai/openai-go/v3) into erradvisor Failures.
//
// It covers the three ways a request made with that SDK can fail:
//
//   - an HTTP error response: the SDK returns an *openai.Error carrying the
//     status, the parsed error type and code, and the response;
//   - an error inside a stream: stream.Err() returns an
//     *ssestream.StreamError when a server-sent event carries an "error"
//     object, or the transport error when the connection breaks;
//   - a Responses API stream event that reports a failure in band (an "error"
//     event or a "response.failed" event), which the SDK hands to the caller
//     as an ordinary event: see EventFailure.
//
// Cancellations, deadlines and network faults stay in Failure.Err, so the
// classifier sees them through the Go error chain.
//
// StopReason and ResponseStopReason map how a successful response ended
// (a Chat Completions finish_reason, a Responses API status and
// incomplete_details) to an erradvisor.StopReason.
//
// Turn the SDK's own retries off (option.WithMaxRetries(0)) and let the
// request loop decide; stacked retry layers hide quota errors and multiply
// latency.
package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// Provider is the provider id the adapter puts in Failure.Provider. It
// enables erradvisor's OpenAI-specific rules.
const Provider = "openai"

// maxBody caps how much of an error response body is read into
// Failure.Message. Error bodies are small; an HTML error page is cut.
const maxBody = 64 << 10

// Failure describes err, an error returned by an openai-go call or by a
// stream's Err method, as an erradvisor.Failure.
//
// For an *openai.Error found with errors.As, Status is the HTTP status, Code
// is the error's code (or its type when the code is empty), Message is the
// raw response body (or the SDK's parsed error JSON when the body is no
// longer readable) and Header the response headers. Reading the body
// restores it, so DumpResponse still works afterwards; do not call Failure
// on the same error from two goroutines at once.
//
// For an *ssestream.StreamError (an "error" object inside a 200 stream),
// Status is 0, Message is the event's data and Code the error's code or type.
//
// Any other error (context.Canceled, a deadline, a dropped connection)
// gives a Failure with only Provider, Message (err.Error()) and Err.
//
// Err is always err itself, so the classifier walks the whole chain. When
// the error carries the HTTP response (an *openai.Error), At is the time of
// its Date header (parsed with http.ParseTime), which anchors HTTP-date
// Retry-After values and reset times; otherwise At is zero and the host sets
// it to its clock's now. Model is left empty for the host to fill. A nil err
// gives the zero Failure.
func Failure(err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Provider: Provider, Err: err}
	var apiErr *oai.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr) && apiErr != nil:
		f.Status = apiErr.StatusCode
		f.Code = firstNonEmpty(apiErr.Code, apiErr.Type)
		if apiErr.Response != nil {
			f.Header = apiErr.Response.Header
			f.Message = readBody(apiErr.Response)
			f.At = responseDate(apiErr.Response.Header)
		}
		if f.Message == "" {
			f.Message = apiErr.RawJSON()
		}
	case errors.As(err, &streamErr) && streamErr != nil:
		data := strings.TrimSpace(string(streamErr.Event.Data))
		f.Message = data
		f.Code = errorCode([]byte(data))
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

// StopReason maps the finish_reason of a Chat Completions choice
// (oai.ChatCompletionChoice.FinishReason, or the last chunk's) to an
// erradvisor.StopReason:
//
//	"stop"                          StopEndTurn
//	"length"                        StopLength
//	"tool_calls", "function_call"   StopToolUse
//	"content_filter"                StopRefused
//
// Anything else, among them "" (a chunk that is not the last, or a server
// that sent null), gives StopUnknown, never StopEndTurn. The legacy
// Completions API's reasons ("stop", "length", "content_filter") map the
// same way.
func StopReason(finishReason string) erradvisor.StopReason {
	switch finishReason {
	case "stop":
		return erradvisor.StopEndTurn
	case "length":
		return erradvisor.StopLength
	case "tool_calls", "function_call":
		return erradvisor.StopToolUse
	case "content_filter":
		return erradvisor.StopRefused
	}
	return erradvisor.StopUnknown
}

// ChoiceStopReason maps a Chat Completions choice to an
// erradvisor.StopReason: StopRefused when the model refused (the message
// carries a refusal, which comes with finish_reason "stop"), else
// StopReason of its finish reason.
func ChoiceStopReason(c oai.ChatCompletionChoice) erradvisor.StopReason {
	if c.Message.Refusal != "" {
		return erradvisor.StopRefused
	}
	return StopReason(c.FinishReason)
}

// ResponseStopReason maps how a Responses API response ended (the
// Response of client.Responses.New, or of the final "response.completed",
// "response.incomplete", "response.failed" or "response.cancelled" stream
// event) to an erradvisor.StopReason, from its status:
//
//	"completed"    StopToolUse when the output holds a call the host must
//	               carry out (function_call, custom_tool_call,
//	               computer_call, local_shell_call, shell_call,
//	               apply_patch_call, mcp_approval_request); StopRefused
//	               when its messages hold a refusal and no text; else
//	               StopEndTurn
//	"incomplete"   by incomplete_details.reason: "max_output_tokens"
//	               StopLength, "content_filter" StopRefused, any other
//	               StopUnknown
//	"failed"       StopError (EventFailure describes the failure)
//	"cancelled"    StopAborted
//
// Any other status ("in_progress", "queued", "", or one added later) gives
// StopUnknown.
func ResponseStopReason(r responses.Response) erradvisor.StopReason {
	switch r.Status {
	case responses.ResponseStatusCompleted:
		refused, text := false, false
		for _, item := range r.Output {
			switch item.Type {
			case "function_call", "custom_tool_call", "computer_call", "local_shell_call",
				"shell_call", "apply_patch_call", "mcp_approval_request":
				return erradvisor.StopToolUse
			case "message":
				for _, part := range item.Content {
					switch part.Type {
					case "refusal":
						refused = true
					case "output_text":
						text = text || part.Text != ""
					}
				}
			}
		}
		if refused && !text {
			return erradvisor.StopRefused
		}
		return erradvisor.StopEndTurn
	case responses.ResponseStatusIncomplete:
		switch r.IncompleteDetails.Reason {
		case "max_output_tokens":
			return erradvisor.StopLength
		case "content_filter":
			return erradvisor.StopRefused
		}
	case responses.ResponseStatusFailed:
		return erradvisor.StopError
	case responses.ResponseStatusCancelled:
		return erradvisor.StopAborted
	}
	return erradvisor.StopUnknown
}

// responseDate returns the time of a Date header, or the zero time when
// there is none or it does not parse.
func responseDate(h http.Header) time.Time {
	t, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return time.Time{}
	}
	return t
}

// EventFailure reports whether ev, an event of a Responses API stream
// (client.Responses.NewStreaming), is a failure reported in band, and
// describes it. Two event types are failures:
//
//   - "error": Code is the event's code, Message the raw event JSON;
//   - "response.failed": Code is the response's error code, Message the raw
//     JSON of the response's error object (not the whole response, whose
//     instructions and output could mislead the classifier).
//
// Status is 0 (the stream's HTTP status was 200), Err is nil and Header is
// empty: the event is all there is. Every other event, including
// "response.incomplete" (a length or content-filter stop, not a failure),
// reports false.
func EventFailure(ev responses.ResponseStreamEventUnion) (erradvisor.Failure, bool) {
	switch ev.Type {
	case "error":
		e := ev.AsError()
		msg := ev.RawJSON()
		if msg == "" {
			msg = e.Message
		}
		return erradvisor.Failure{
			Provider: Provider,
			Code:     firstNonEmpty(e.Code, errorCode([]byte(msg))),
			Message:  msg,
		}, true
	case "response.failed":
		r := ev.AsResponseFailed().Response
		msg := r.Error.RawJSON()
		if msg == "" {
			msg = firstNonEmpty(r.Error.Message, "response.failed")
		}
		return erradvisor.Failure{
			Provider: Provider,
			Model:    string(r.Model),
			Code:     string(r.Error.Code),
			Message:  msg,
		}, true
	}
	return erradvisor.Failure{}, false
}

// readBody returns up to maxBody bytes of resp's body and puts the body back
// so that later readers see it whole.
func readBody(resp *http.Response) string {
	if resp.Body == nil || resp.Body == http.NoBody {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readCloser is a body put back after a partial read: the bytes read first,
// then the rest of the original body, which Close closes.
type readCloser struct {
	io.Reader
	io.Closer
}

// errorCode returns error.code, else error.type, else the top-level code,
// from a JSON error document; "" when there is none.
func errorCode(data []byte) string {
	var doc struct {
		Code  json.RawMessage `json:"code"`
		Error *struct {
			Code json.RawMessage `json:"code"`
			Type string          `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	if doc.Error != nil {
		return firstNonEmpty(jsonString(doc.Error.Code), doc.Error.Type)
	}
	return jsonString(doc.Code)
}

// jsonString returns raw as a string when it is a JSON string.
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Package bedrock turns errors and stop reasons of the AWS SDK for Go v2's
// Bedrock Runtime client (github.com/aws/aws-sdk-go-v2/service/bedrockruntime)
// into erradvisor values.
//
// Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream
// fail in one of three ways, and [Failure] reads all three:
//
//   - an HTTP error response: the SDK returns an error chain holding the
//     modelled exception (a smithy.APIError such as
//     *types.ThrottlingException or *types.ValidationException) and the
//     HTTP response (*awshttp.ResponseError, with the status, the headers
//     and the request id);
//   - an exception inside the event stream of a 200 response (ConverseStream,
//     InvokeModelWithResponseStream): the stream's Err method returns the
//     modelled exception alone, with no HTTP status;
//   - a Go error: a canceled context, a deadline, a dropped connection.
//
// When the SDK's own retries run out, the chain starts with a
// *retry.MaxAttemptsError. Failure keeps it in Err and reads the cause
// inside it: the class of the last attempt's error decides.
//
// Turn the SDK's retries off (bedrockruntime.Options{RetryMaxAttempts: 1})
// and let the request loop decide; stacked retry layers hide quota errors
// and multiply latency.
package bedrock

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/erradvisor/erradvisor"
)

// Provider is the provider id the adapter puts in Failure.Provider. It
// enables erradvisor's Bedrock-specific rules.
const Provider = "bedrock"

// Failure describes err, an error returned by a bedrockruntime call or by an
// event stream's Err method, as an erradvisor.Failure.
//
// For a modelled exception found with errors.As (smithy.APIError), Code is
// its error code ("ThrottlingException", "ValidationException", ...) and
// Message is "Code: message", the form Bedrock's own tools print. For
// ModelStreamErrorException and ModelErrorException, the model's original
// status code and message are appended when the service sent them.
//
// When the chain holds the HTTP response (*smithyhttp.ResponseError, which
// *awshttp.ResponseError wraps), Status is its status code, Header its
// headers (x-amzn-ErrorType, x-amzn-RequestId, X-Amz-Retry-After, Date,
// ...), and At the time of its Date header. An exception from inside an
// event stream has no response: Status is 0, Header nil and At zero.
//
// Any other error (context.Canceled, a deadline, a dropped connection, a
// body that is not Bedrock's JSON) gives Message err.Error(), plus the
// status and headers when the response is in the chain.
//
// Err is always err itself, so the classifier walks the whole chain,
// *retry.MaxAttemptsError included. When At is zero, set it to the host
// clock's now: it anchors HTTP-date waits and reset times. Model is left for
// the host. A nil err gives the zero Failure.
func Failure(err error) erradvisor.Failure {
	if err == nil {
		return erradvisor.Failure{}
	}
	f := erradvisor.Failure{Provider: Provider, Err: err}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr != nil && respErr.Response != nil && respErr.Response.Response != nil {
		resp := respErr.Response.Response
		f.Status = resp.StatusCode
		f.Header = resp.Header
		if d := resp.Header.Get("Date"); d != "" {
			if t, perr := http.ParseTime(d); perr == nil {
				f.At = t
			}
		}
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr != nil {
		f.Code = apiErr.ErrorCode()
		f.Message = message(apiErr)
	}
	if f.Message == "" {
		f.Message = err.Error()
	}
	return f
}

// message renders a modelled exception as "Code: message", with the model's
// original status and message when the exception carries them.
func message(e smithy.APIError) string {
	var b strings.Builder
	b.WriteString(e.ErrorCode())
	if m := e.ErrorMessage(); m != "" {
		b.WriteString(": ")
		b.WriteString(m)
	}
	var status *int32
	var original string
	switch x := e.(type) {
	case *types.ModelStreamErrorException:
		status = x.OriginalStatusCode
		if x.OriginalMessage != nil {
			original = *x.OriginalMessage
		}
	case *types.ModelErrorException:
		status = x.OriginalStatusCode
	}
	if status != nil || original != "" {
		b.WriteString(" (model")
		if status != nil {
			b.WriteString(" status ")
			b.WriteString(strconv.Itoa(int(*status)))
		}
		if original != "" {
			b.WriteString(": ")
			b.WriteString(original)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Classify classifies err with erradvisor's default rules: erradvisor.Classify
// of Failure(err), with At set to time.Now() when the response had no Date.
// A nil err gives the zero Classification (Unknown).
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

// StopReason maps the stop reason of a Converse or ConverseStream response
// (ConverseOutput.StopReason, MessageStopEvent.StopReason) to erradvisor's:
//
//   - end_turn, stop_sequence: StopEndTurn;
//   - tool_use: StopToolUse;
//   - max_tokens: StopLength;
//   - guardrail_intervened, content_filtered: StopRefused;
//   - model_context_window_exceeded: StopContextWindow;
//   - malformed_model_output, malformed_tool_use, the empty reason and any
//     reason this package does not know: StopUnknown, never a normal end.
//
// InvokeModel responses carry the model's own body; read its stop reason
// with the adapter for that model's API (the Anthropic adapter for Claude).
func StopReason(reason types.StopReason) erradvisor.StopReason {
	switch reason {
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		return erradvisor.StopEndTurn
	case types.StopReasonToolUse:
		return erradvisor.StopToolUse
	case types.StopReasonMaxTokens:
		return erradvisor.StopLength
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return erradvisor.StopRefused
	case types.StopReasonModelContextWindowExceeded:
		return erradvisor.StopContextWindow
	}
	return erradvisor.StopUnknown
}

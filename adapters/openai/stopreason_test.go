package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/openai"
	"github.com/google/go-cmp/cmp"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// TestStopReason covers every finish reason openai-go declares for Chat
// Completions (ChatCompletionChoice.FinishReason: "stop", "length",
// "tool_calls", "content_filter", "function_call") and the legacy
// Completions (CompletionChoiceFinishReason*), and others.
func TestStopReason(t *testing.T) {
	tests := []struct {
		reason string
		want   erradvisor.StopReason
	}{
		{"stop", erradvisor.StopEndTurn},
		{"length", erradvisor.StopLength},
		{"tool_calls", erradvisor.StopToolUse},
		{"function_call", erradvisor.StopToolUse},
		{"content_filter", erradvisor.StopRefused},
		{"", erradvisor.StopUnknown},
		{"null", erradvisor.StopUnknown},
		{"STOP", erradvisor.StopUnknown},
		{"end_turn", erradvisor.StopUnknown},
		{"error", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		if got := adapter.StopReason(tt.reason); got != tt.want {
			t.Errorf("StopReason(%q) = %v, want %v", tt.reason, got, tt.want)
		}
	}
}

// message is a Responses API output holding one message with parts.
func message(parts ...responses.ResponseOutputMessageContentUnion) []responses.ResponseOutputItemUnion {
	return []responses.ResponseOutputItemUnion{{Type: "message", Content: parts}}
}

// TestChoiceStopReason: a Chat Completions refusal comes with
// finish_reason "stop" and is a refusal all the same.
func TestChoiceStopReason(t *testing.T) {
	var refused, answered oai.ChatCompletionChoice
	refused.FinishReason, refused.Message.Refusal = "stop", "I'm sorry, I can't help with that."
	answered.FinishReason, answered.Message.Content = "stop", "Here it is."
	got := []erradvisor.StopReason{adapter.ChoiceStopReason(refused), adapter.ChoiceStopReason(answered)}
	if want := []erradvisor.StopReason{erradvisor.StopRefused, erradvisor.StopEndTurn}; !slices.Equal(got, want) {
		t.Errorf("ChoiceStopReason = %v, want %v", got, want)
	}
}

// TestResponseStopReason covers every ResponseStatus and every
// incomplete_details.reason openai-go declares ("max_output_tokens",
// "max_messages", "content_filter", "steered").
func TestResponseStopReason(t *testing.T) {
	item := func(typ string) []responses.ResponseOutputItemUnion {
		return []responses.ResponseOutputItemUnion{{Type: "reasoning"}, {Type: typ}}
	}
	tests := []struct {
		name string
		r    responses.Response
		want erradvisor.StopReason
	}{
		{"completed with a message", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("message")}, erradvisor.StopEndTurn},
		{"completed, no output", responses.Response{Status: responses.ResponseStatusCompleted}, erradvisor.StopEndTurn},
		{"completed after a server-side web search", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("web_search_call")}, erradvisor.StopEndTurn},
		{"completed with a function call", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("function_call")}, erradvisor.StopToolUse},
		{"completed with a custom tool call", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("custom_tool_call")}, erradvisor.StopToolUse},
		{"completed with a computer call", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("computer_call")}, erradvisor.StopToolUse},
		{"completed with a local shell call", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("local_shell_call")}, erradvisor.StopToolUse},
		{"completed with a shell call", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("shell_call")}, erradvisor.StopToolUse},
		{"completed with an apply_patch call", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("apply_patch_call")}, erradvisor.StopToolUse},
		{"completed with an MCP approval request", responses.Response{Status: responses.ResponseStatusCompleted, Output: item("mcp_approval_request")}, erradvisor.StopToolUse},
		{"completed with a refusal only", responses.Response{Status: responses.ResponseStatusCompleted, Output: message(
			responses.ResponseOutputMessageContentUnion{Type: "refusal", Refusal: "I can't help with that."})}, erradvisor.StopRefused},
		{"completed with text and a refusal", responses.Response{Status: responses.ResponseStatusCompleted, Output: message(
			responses.ResponseOutputMessageContentUnion{Type: "output_text", Text: "Part of it:"},
			responses.ResponseOutputMessageContentUnion{Type: "refusal", Refusal: "the rest I can't."})}, erradvisor.StopEndTurn},
		{"incomplete: max_output_tokens", incomplete("max_output_tokens"), erradvisor.StopLength},
		{"incomplete: content_filter", incomplete("content_filter"), erradvisor.StopRefused},
		{"incomplete: max_messages", incomplete("max_messages"), erradvisor.StopUnknown},
		{"incomplete: steered", incomplete("steered"), erradvisor.StopUnknown},
		{"incomplete: no reason", incomplete(""), erradvisor.StopUnknown},
		{"failed", responses.Response{Status: responses.ResponseStatusFailed}, erradvisor.StopError},
		{"cancelled", responses.Response{Status: responses.ResponseStatusCancelled}, erradvisor.StopAborted},
		{"in_progress", responses.Response{Status: responses.ResponseStatusInProgress}, erradvisor.StopUnknown},
		{"queued", responses.Response{Status: responses.ResponseStatusQueued}, erradvisor.StopUnknown},
		{"no status", responses.Response{}, erradvisor.StopUnknown},
		{"unknown status", responses.Response{Status: "paused"}, erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		if got := adapter.ResponseStopReason(tt.r); got != tt.want {
			t.Errorf("%s: ResponseStopReason = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func incomplete(reason string) responses.Response {
	r := responses.Response{Status: responses.ResponseStatusIncomplete}
	r.IncompleteDetails.Reason = reason
	return r
}

// TestStopReasonFromChatResponse reads each odd finish reason from a real
// 200 answer through the SDK client.
func TestStopReasonFromChatResponse(t *testing.T) {
	tests := []struct {
		reason string // as sent; "" sends null
		want   erradvisor.StopReason
	}{
		{"length", erradvisor.StopLength},
		{"tool_calls", erradvisor.StopToolUse},
		{"function_call", erradvisor.StopToolUse},
		{"content_filter", erradvisor.StopRefused},
		{"", erradvisor.StopUnknown},
		// vLLM and other compatible servers send reasons OpenAI does not declare.
		{"abort", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			reason := "null"
			if tt.reason != "" {
				reason = `"` + tt.reason + `"`
			}
			client := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":%s}]}`, reason)
			}))
			resp, err := client.Chat.Completions.New(context.Background(), chatParams)
			if err != nil {
				t.Fatal(err)
			}
			if got := adapter.StopReason(resp.Choices[0].FinishReason); got != tt.want {
				t.Errorf("StopReason(%q) = %v, want %v", resp.Choices[0].FinishReason, got, tt.want)
			}
		})
	}
}

// TestStopReasonFromResponses reads each odd ending of a Responses API
// answer through the SDK client: a plain response and a stream's final
// event (response.incomplete, as documented at
// https://platform.openai.com/docs/api-reference/responses-streaming/response/incomplete).
func TestStopReasonFromResponses(t *testing.T) {
	tests := []struct {
		name     string
		response string
		want     erradvisor.StopReason
	}{
		{"incomplete: max_output_tokens", `{"id":"resp_1","object":"response","created_at":1,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-4o","output":[]}`, erradvisor.StopLength},
		{"incomplete: content_filter", `{"id":"resp_1","object":"response","created_at":1,"status":"incomplete","incomplete_details":{"reason":"content_filter"},"model":"gpt-4o","output":[]}`, erradvisor.StopRefused},
		{"completed with a function call", `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4o","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_file","arguments":"{}","status":"completed"}]}`, erradvisor.StopToolUse},
		{"cancelled", `{"id":"resp_1","object":"response","created_at":1,"status":"cancelled","model":"gpt-4o","output":[]}`, erradvisor.StopAborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tt.response)
			}))
			r, err := client.Responses.New(context.Background(), respParams)
			if err != nil {
				t.Fatal(err)
			}
			if got := adapter.ResponseStopReason(*r); got != tt.want {
				t.Errorf("ResponseStopReason = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("stream ending in response.incomplete", func(t *testing.T) {
		client := newClient(t, sse(sseRespCreated, sseRespDelta,
			"event: response.incomplete\n"+`data: {"type":"response.incomplete","sequence_number":2,"response":{"id":"resp_1","object":"response","created_at":1,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-4o","output":[]}}`+"\n\n"))
		s := client.Responses.NewStreaming(context.Background(), respParams)
		defer s.Close()
		got := erradvisor.StopUnknown
		for s.Next() {
			if ev := s.Current(); ev.Type == "response.incomplete" {
				got = adapter.ResponseStopReason(ev.AsResponseIncomplete().Response)
			}
		}
		if err := s.Err(); err != nil || got != erradvisor.StopLength {
			t.Errorf("stream: stop %v, err %v; want length, no error", got, err)
		}
	})
}

// TestFailureAtFromDate checks that At is the response's Date and that a
// response without one leaves At zero.
func TestFailureAtFromDate(t *testing.T) {
	date := time.Date(2026, 2, 27, 2, 14, 29, 0, time.UTC)
	tests := []struct {
		name string
		date string // "" removes the header
		want time.Time
	}{
		{"Date header", date.Format(http.TimeFormat), date},
		{"no Date header", "", time.Time{}},
		{"Date that does not parse", "yesterday", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tt.date == "" {
					w.Header()["Date"] = nil // the server adds none
				} else {
					w.Header().Set("Date", tt.date)
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", date.Add(30*time.Second).Format(http.TimeFormat))
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, bodyRateLimit)
			}))
			_, err := client.Chat.Completions.New(context.Background(), chatParams)
			f := adapter.Failure(err)
			if diff := cmp.Diff(tt.want, f.At); diff != "" {
				t.Errorf("At mismatch (-want +got):\n%s", diff)
			}
			if !tt.want.IsZero() {
				if c := erradvisor.Classify(f); c.RetryAfter != 30*time.Second {
					t.Errorf("RetryAfter = %v, want 30s from the Date to the Retry-After date", c.RetryAfter)
				}
			}
		})
	}
}

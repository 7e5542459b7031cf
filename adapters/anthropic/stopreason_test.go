package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/anthropic"
	"github.com/google/go-cmp/cmp"
)

// TestStopReason covers every StopReason anthropic-sdk-go declares, and
// others.
func TestStopReason(t *testing.T) {
	tests := []struct {
		reason ant.StopReason
		want   erradvisor.StopReason
	}{
		{ant.StopReasonEndTurn, erradvisor.StopEndTurn},
		{ant.StopReasonMaxTokens, erradvisor.StopLength},
		{ant.StopReasonStopSequence, erradvisor.StopEndTurn},
		{ant.StopReasonToolUse, erradvisor.StopToolUse},
		{ant.StopReasonPauseTurn, erradvisor.StopPaused},
		{ant.StopReasonRefusal, erradvisor.StopRefused},
		{ant.StopReasonModelContextWindowExceeded, erradvisor.StopContextWindow},
		{"", erradvisor.StopUnknown},
		{"END_TURN", erradvisor.StopUnknown},
		{"stop", erradvisor.StopUnknown},
		{"compaction", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		if got := adapter.StopReason(tt.reason); got != tt.want {
			t.Errorf("StopReason(%q) = %v, want %v", tt.reason, got, tt.want)
		}
	}
}

// messageBody is a 200 Messages API answer with the given stop_reason
// (shape of https://docs.anthropic.com/en/api/messages).
func messageBody(reason string) string {
	return `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hel"}],"stop_reason":"` +
		reason + `","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}`
}

// TestStopReasonFromResponse reads each odd stop reason from a real 200
// answer through the SDK client, plain and streamed.
func TestStopReasonFromResponse(t *testing.T) {
	tests := []struct {
		reason string
		want   erradvisor.StopReason
	}{
		{"max_tokens", erradvisor.StopLength},
		{"stop_sequence", erradvisor.StopEndTurn},
		{"tool_use", erradvisor.StopToolUse},
		{"pause_turn", erradvisor.StopPaused},
		{"refusal", erradvisor.StopRefused},
		{"model_context_window_exceeded", erradvisor.StopContextWindow},
		{"some_new_reason", erradvisor.StopUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			client := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, messageBody(tt.reason))
			}))
			msg, err := client.Messages.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if got := adapter.StopReason(msg.StopReason); got != tt.want {
				t.Errorf("StopReason(%q) = %v, want %v", msg.StopReason, got, tt.want)
			}
		})
		t.Run(tt.reason+" streamed", func(t *testing.T) {
			client := newClient(t, sse(
				"event: message_start\n"+`data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`+"\n\n",
				"event: message_delta\n"+`data: {"type":"message_delta","delta":{"stop_reason":"`+tt.reason+`","stop_sequence":null},"usage":{"output_tokens":1}}`+"\n\n",
				"event: message_stop\n"+`data: {"type":"message_stop"}`+"\n\n",
			))
			s := client.Messages.NewStreaming(context.Background(), params)
			defer s.Close()
			var reason ant.StopReason
			for s.Next() {
				if ev := s.Current(); ev.Type == "message_delta" {
					reason = ev.Delta.StopReason
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if got := adapter.StopReason(reason); got != tt.want {
				t.Errorf("StopReason(%q) = %v, want %v", reason, got, tt.want)
			}
		})
	}
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
				w.WriteHeader(529)
				fmt.Fprint(w, bodyOverloaded)
			}))
			_, err := client.Messages.New(context.Background(), params)
			f := adapter.Failure(err)
			if diff := cmp.Diff(tt.want, f.At); diff != "" {
				t.Errorf("At mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

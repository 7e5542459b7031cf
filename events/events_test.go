package events

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShapes checks the events against the reference agent's documented
// JSON, byte for byte.
func TestShapes(t *testing.T) {
	tests := []struct {
		event Event
		want  string
	}{
		{AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded"},
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded"}`},
		{AutoRetryEnd{Success: true, Attempt: 2},
			`{"type":"auto_retry_end","success":true,"attempt":2}`},
		{AutoRetryEnd{Attempt: 3, FinalError: "529 overloaded"},
			`{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"529 overloaded"}`},
		{SummarizationRetryScheduled{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "terminated"},
			`{"type":"summarization_retry_scheduled","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"terminated"}`},
		{SummarizationRetryAttemptStart{Source: "compaction", Reason: "threshold"},
			`{"type":"summarization_retry_attempt_start","source":"compaction","reason":"threshold"}`},
		{SummarizationRetryAttemptStart{Source: "branchSummary"},
			`{"type":"summarization_retry_attempt_start","source":"branchSummary"}`},
		{SummarizationRetryFinished{}, `{"type":"summarization_retry_finished"}`},
		{CompactionStart{Reason: "overflow"}, `{"type":"compaction_start","reason":"overflow"}`},
		{CompactionEnd{Reason: "overflow", Result: &CompactionResult{
			Summary: "...", FirstKeptEntryID: "abc123", TokensBefore: 150000, EstimatedTokensAfter: 32000,
		}, WillRetry: true},
			`{"type":"compaction_end","reason":"overflow","result":{"summary":"...","firstKeptEntryId":"abc123",` +
				`"tokensBefore":150000,"estimatedTokensAfter":32000},"aborted":false,"willRetry":true}`},
		{CompactionEnd{Reason: "overflow", Aborted: true},
			`{"type":"compaction_end","reason":"overflow","aborted":true,"willRetry":false}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.event)
		if err != nil {
			t.Fatalf("marshal %T: %v", tt.event, err)
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.event.EventType(), diff)
		}
	}
}

package erradvisor

import "encoding/json"

// Event is a lifecycle event a host can stream to its UI or log unchanged.
// The concrete types marshal to JSON with a leading "type" field and the same
// field names the reference agent's JSON event stream uses, so existing
// consumers of that stream read them as they are.
type Event interface {
	// EventType returns the value of the "type" field, such as
	// "auto_retry_start".
	EventType() string
}

// Event type names.
const (
	EventAutoRetryStart                 = "auto_retry_start"
	EventAutoRetryEnd                   = "auto_retry_end"
	EventCompactionStart                = "compaction_start"
	EventCompactionEnd                  = "compaction_end"
	EventSummarizationRetryScheduled    = "summarization_retry_scheduled"
	EventSummarizationRetryAttemptStart = "summarization_retry_attempt_start"
	EventSummarizationRetryFinished     = "summarization_retry_finished"
)

// AutoRetryStart announces that a failed request will be retried after
// DelayMs milliseconds. Attempt counts from 1. MaxAttempts is 0 when the
// policy retries without limit.
type AutoRetryStart struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEnd closes a run of automatic retries: Success is true when a
// retried request succeeded, false when retries were exhausted or cancelled,
// in which case FinalError says why ("Retry cancelled" on a user abort).
type AutoRetryEnd struct {
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// CompactionStart announces a compaction. Reason is "manual", "threshold" or
// "overflow"; "overflow" means a context-overflow recovery is under way.
type CompactionStart struct {
	Reason CompactionReason `json:"reason"`
}

// CompactionEnd closes a compaction. Result is nil when the compaction was
// aborted (Aborted is true) or failed (ErrorMessage says why). WillRetry is
// true when a successful overflow recovery is about to retry the request.
type CompactionEnd struct {
	Reason       CompactionReason  `json:"reason"`
	Result       *CompactionResult `json:"result,omitempty"`
	Aborted      bool              `json:"aborted"`
	WillRetry    bool              `json:"willRetry"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
}

// CompactionResult describes a finished compaction, as the host reports it.
type CompactionResult struct {
	Summary              string `json:"summary"`
	FirstKeptEntryID     string `json:"firstKeptEntryId"`
	TokensBefore         int    `json:"tokensBefore"`
	EstimatedTokensAfter int    `json:"estimatedTokensAfter"`
}

// SummarizationRetryScheduled announces a retry of the summarization request
// a compaction or branch summary makes.
type SummarizationRetryScheduled struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// SummarizationRetryAttemptStart announces that a scheduled summarization
// retry begins. Source is "compaction" or "branchSummary"; Reason is set for
// compactions only.
type SummarizationRetryAttemptStart struct {
	Source string           `json:"source"`
	Reason CompactionReason `json:"reason,omitempty"`
}

// SummarizationRetryFinished closes a run of summarization retries.
type SummarizationRetryFinished struct{}

// EventType implements Event.
func (AutoRetryStart) EventType() string { return EventAutoRetryStart }

// EventType implements Event.
func (AutoRetryEnd) EventType() string { return EventAutoRetryEnd }

// EventType implements Event.
func (CompactionStart) EventType() string { return EventCompactionStart }

// EventType implements Event.
func (CompactionEnd) EventType() string { return EventCompactionEnd }

// EventType implements Event.
func (SummarizationRetryScheduled) EventType() string { return EventSummarizationRetryScheduled }

// EventType implements Event.
func (SummarizationRetryAttemptStart) EventType() string {
	return EventSummarizationRetryAttemptStart
}

// EventType implements Event.
func (SummarizationRetryFinished) EventType() string { return EventSummarizationRetryFinished }

// marshalTyped marshals v, a struct, and inserts a leading "type" field.
func marshalTyped(typ string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(typ)+11)
	out = append(out, `{"type":"`...)
	out = append(out, typ...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// MarshalJSON writes the event with its "type" field first.
func (e AutoRetryStart) MarshalJSON() ([]byte, error) {
	type plain AutoRetryStart
	return marshalTyped(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e AutoRetryEnd) MarshalJSON() ([]byte, error) {
	type plain AutoRetryEnd
	return marshalTyped(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e CompactionStart) MarshalJSON() ([]byte, error) {
	type plain CompactionStart
	return marshalTyped(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e CompactionEnd) MarshalJSON() ([]byte, error) {
	type plain CompactionEnd
	return marshalTyped(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e SummarizationRetryScheduled) MarshalJSON() ([]byte, error) {
	type plain SummarizationRetryScheduled
	return marshalTyped(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e SummarizationRetryAttemptStart) MarshalJSON() ([]byte, error) {
	type plain SummarizationRetryAttemptStart
	return marshalTyped(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e SummarizationRetryFinished) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"` + EventSummarizationRetryFinished + `"}`), nil
}

// Package events holds the wire shapes of the lifecycle events an
// erradvisor.Session reports: the same "type" names and camelCase fields
// (delayMs, maxAttempts, finalError, ...) as the reference agent's JSON event
// stream, so a host can stream them to consumers of that stream unchanged.
//
// The types are plain data. Each marshals to one JSON object whose first
// field is "type". The erradvisor package builds them; a host only reads,
// marshals or switches on them:
//
//	for _, ev := range d.Events() {
//		line, _ := json.Marshal(ev) // {"type":"auto_retry_start","attempt":1,...}
//		...
//	}
package events

import "encoding/json"

// Event is one lifecycle event.
type Event interface {
	// EventType returns the value of the "type" field, such as
	// "auto_retry_start".
	EventType() string
}

// The values of the "type" field.
const (
	TypeAutoRetryStart                 = "auto_retry_start"
	TypeAutoRetryEnd                   = "auto_retry_end"
	TypeCompactionStart                = "compaction_start"
	TypeCompactionEnd                  = "compaction_end"
	TypeSummarizationRetryScheduled    = "summarization_retry_scheduled"
	TypeSummarizationRetryAttemptStart = "summarization_retry_attempt_start"
	TypeSummarizationRetryFinished     = "summarization_retry_finished"
)

// AutoRetryStart announces that a failed request will be retried after
// DelayMs milliseconds. Attempt counts from 1; MaxAttempts is 0 when the
// policy sets no limit. ErrorMessage is the failure's text, redacted.
type AutoRetryStart struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEnd closes a run of automatic retries that happened. Success is
// true when a retried request succeeded; otherwise FinalError says why the
// run ended ("Retry cancelled" when the user stopped it).
type AutoRetryEnd struct {
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// CompactionStart announces a compaction. Reason is "manual", "threshold" or
// "overflow"; "overflow" means a context-overflow recovery is under way.
type CompactionStart struct {
	Reason string `json:"reason"`
}

// CompactionEnd closes a compaction. Result is nil when the compaction was
// aborted (Aborted is true) or failed (ErrorMessage says why). WillRetry is
// true when a successful overflow recovery is about to retry the request.
type CompactionEnd struct {
	Reason       string            `json:"reason"`
	Result       *CompactionResult `json:"result,omitempty"`
	Aborted      bool              `json:"aborted"`
	WillRetry    bool              `json:"willRetry"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
}

// CompactionResult describes a finished compaction.
type CompactionResult struct {
	Summary              string `json:"summary"`
	FirstKeptEntryID     string `json:"firstKeptEntryId"`
	TokensBefore         int    `json:"tokensBefore"`
	EstimatedTokensAfter int    `json:"estimatedTokensAfter"`
}

// SummarizationRetryScheduled announces a retry of the summarization request
// that a compaction or a branch summary makes.
type SummarizationRetryScheduled struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// SummarizationRetryAttemptStart announces that a scheduled summarization
// retry begins, once its delay has passed. Source is "compaction" or
// "branchSummary"; Reason ("manual", "threshold" or "overflow") is set for
// compactions only.
type SummarizationRetryAttemptStart struct {
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
}

// SummarizationRetryFinished closes a run of summarization retries.
type SummarizationRetryFinished struct{}

// EventType implements Event.
func (AutoRetryStart) EventType() string { return TypeAutoRetryStart }

// EventType implements Event.
func (AutoRetryEnd) EventType() string { return TypeAutoRetryEnd }

// EventType implements Event.
func (CompactionStart) EventType() string { return TypeCompactionStart }

// EventType implements Event.
func (CompactionEnd) EventType() string { return TypeCompactionEnd }

// EventType implements Event.
func (SummarizationRetryScheduled) EventType() string { return TypeSummarizationRetryScheduled }

// EventType implements Event.
func (SummarizationRetryAttemptStart) EventType() string {
	return TypeSummarizationRetryAttemptStart
}

// EventType implements Event.
func (SummarizationRetryFinished) EventType() string { return TypeSummarizationRetryFinished }

// typed marshals v, a struct, with a leading "type" field.
func typed(typ string, v any) ([]byte, error) {
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
	return typed(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e AutoRetryEnd) MarshalJSON() ([]byte, error) {
	type plain AutoRetryEnd
	return typed(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e CompactionStart) MarshalJSON() ([]byte, error) {
	type plain CompactionStart
	return typed(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e CompactionEnd) MarshalJSON() ([]byte, error) {
	type plain CompactionEnd
	return typed(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e SummarizationRetryScheduled) MarshalJSON() ([]byte, error) {
	type plain SummarizationRetryScheduled
	return typed(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e SummarizationRetryAttemptStart) MarshalJSON() ([]byte, error) {
	type plain SummarizationRetryAttemptStart
	return typed(e.EventType(), plain(e))
}

// MarshalJSON writes the event with its "type" field first.
func (e SummarizationRetryFinished) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"` + TypeSummarizationRetryFinished + `"}`), nil
}

package erradvisor

import "github.com/erradvisor/erradvisor/events"

// The lifecycle events a Session reports are built here, in the reference
// agent's wire shapes from package events: Decision.Events for retries and
// summarization retries, and the compaction calls for compaction_start and
// compaction_end. Every error text in them is redacted.

func compactionStartEvent(reason CompactionReason) events.CompactionStart {
	return events.CompactionStart{Reason: string(reason)}
}

func compactionEndEvent(reason CompactionReason, res *CompactionResult, failure string, aborted, willRetry bool) events.CompactionEnd {
	ev := events.CompactionEnd{Reason: string(reason), Aborted: aborted, WillRetry: willRetry}
	switch {
	case failure != "":
		ev.ErrorMessage = Redact(failure)
	case res != nil && !aborted:
		ev.Result = &events.CompactionResult{
			Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
			TokensBefore: res.TokensBefore, EstimatedTokensAfter: res.EstimatedTokensAfter,
		}
	}
	return ev
}

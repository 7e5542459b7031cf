package main

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/events"
)

// This file is the request loop itself: the part a host author copies.

// message is the host's own transcript entry. The library never sees it;
// view describes it to the Session.
type message struct {
	role     string // "user", "assistant" or "summary" (a compaction summary)
	text     string
	thinking string
	hidden   bool // a continuation or nudge the loop sent, not typed by the user
	stop     erradvisor.StopReason
	errText  string // the error of a failed assistant turn
	verdict  erradvisor.Classification
	model    string
	at       time.Time
}

// view describes the transcript to the Session, newest entry first, without
// copying it.
func view(msgs []message) iter.Seq[erradvisor.Entry] {
	return func(yield func(erradvisor.Entry) bool) {
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i]
			e := erradvisor.Entry{Time: m.at}
			switch m.role {
			case "user":
				e.Kind = erradvisor.EntryUser
			case "summary":
				e.Kind = erradvisor.EntryCompactionSummary
			case "assistant":
				e.Kind = erradvisor.EntryAssistant
				e.StopReason, e.ErrorMessage, e.Classification = m.stop, m.errText, m.verdict
				e.Provider, e.Model = providerID, m.model
				switch {
				case m.text != "":
					e.Content = erradvisor.ContentText
				case m.thinking != "":
					e.Content = erradvisor.ContentThinking
				default:
					e.Content = erradvisor.ContentNone
				}
			}
			if !yield(e) {
				return
			}
		}
	}
}

// compactor is the host's compaction: it replaces the history with a
// summary. A real host asks the model for the summary and counts tokens;
// the scenarios plug in a fake.
type compactor func(history []message) (summary string, tokensBefore, tokensAfter int, err error)

const providerID = "anthropic"

// session is one conversation: its transcript and its erradvisor.Session.
type session struct {
	model         string
	contextWindow int // the model's context window, in tokens
	maxTokens     int // max_tokens of every request
	client        *client
	compact       compactor

	// One erradvisor.Session per conversation: it decides, tracks the
	// single overflow recovery of a user message, and builds the notes.
	advisor *erradvisor.Session

	transcript []message
	log        *logger
	rec        *ScenarioResult
}

func newSession(policy erradvisor.Policy, c *client, log *logger, rec *ScenarioResult) *session {
	return &session{
		model:         "claude-sonnet-4-5",
		contextWindow: 200000,
		maxTokens:     1024,
		client:        c,
		advisor:       erradvisor.NewSession(policy),
		log:           log,
		rec:           rec,
	}
}

// maxRequestsPerMessage is a safety net for the demo; the Policy is what
// bounds retries and continuations.
const maxRequestsPerMessage = 20

// ask sends a user message and runs the request loop until the turn is
// done: answered, stopped, or cancelled. It returns ctx.Err() only when the
// user cancelled.
func (s *session) ask(ctx context.Context, text string) error {
	s.log.printf("user> %s", text)
	s.transcript = append(s.transcript, message{role: "user", text: text, at: time.Now()})
	// 1. A new user message: the continuation count, the nudge and the
	// overflow recovery start over.
	s.emit(s.advisor.UserMessage(time.Now()).Events()...)
	after := erradvisor.AfterUser

	for n := 1; n <= maxRequestsPerMessage; n++ {
		// 2. Build the request: the transcript, plus the advisory notes for
		// this request only. They are never stored in the transcript.
		now := time.Now()
		notes := s.advisor.Notes(now, s.target(), view(s.transcript))
		req := s.request(notes)
		s.log.request(n, req, notes)
		s.rec.Requests = append(s.rec.Requests, Request{Notes: noteTexts(notes)})

		// 3. Send it, and describe the result as an Outcome.
		t, failure := s.client.send(ctx, req)
		now = time.Now()
		var o erradvisor.Outcome
		if failure != nil {
			failure.Provider, failure.Model, failure.At = providerID, s.model, now
			o = erradvisor.Outcome{Stop: erradvisor.StopError, Failure: *failure, CurrentModel: s.model}
		} else {
			s.log.turn(t)
			o = s.outcome(t, after)
			s.rec.Answer = t.Text
		}

		// 4. Decide (the Session classifies a failure once), and stream the
		// decision's events to the UI.
		d := s.advisor.Decide(o, now)
		if failure != nil {
			s.log.failure(failure, d.Classification)
			s.rec.Classifications = append(s.rec.Classifications, d.Classification)
			// The transcript keeps the verdict, so the note on this failure
			// says what the decision said.
			s.transcript = append(s.transcript, message{role: "assistant", stop: erradvisor.StopError,
				errText: failure.Message, verdict: d.Classification, model: s.model, at: now})
		} else {
			s.transcript = append(s.transcript, message{role: "assistant", text: t.Text, thinking: t.Thinking,
				stop: o.Stop, model: s.model, at: now})
		}
		s.log.decision(d)
		s.record(d)
		s.emit(d.Events()...)

		// 5. Act on the decision.
		switch d.Action {
		case erradvisor.Retry:
			// The failed attempt stays out of the retry's context: a trailing
			// failure in the transcript means the loop has given up on it.
			s.transcript = s.transcript[:len(s.transcript)-1]
			if err := erradvisor.Wait(ctx, d.Delay); err != nil {
				// The user cancelled during the backoff: close the streak.
				s.emit(s.advisor.Cancel(time.Now()).Events()...)
				return err
			}

		case erradvisor.Compact:
			if !s.runCompaction(d.Compaction) {
				return nil
			}
			after = erradvisor.AfterUser

		case erradvisor.Continue, erradvisor.Nudge:
			// A hidden user message lets the model carry on.
			s.transcript = append(s.transcript, message{role: "user", text: d.Text, hidden: true, at: now})
			after = erradvisor.AfterContinuation

		case erradvisor.Stop:
			// Say why, and keep the failed turn: the next request, after the
			// user's next message, carries a note that explains it.
			s.log.printf("  shown to the user: stopped: %s", d.Explain())
			return nil

		default:
			// None: the turn stands. Defer: the host's own mechanism (its
			// threshold compaction, its retry layer) takes over.
			return nil
		}
	}
	s.log.printf("  giving up: more than %d requests for one message", maxRequestsPerMessage)
	return nil
}

// runCompaction runs the compaction a Decision asked for, reporting its start and
// end to the Session. It reports
// whether the loop should make its one fresh attempt: only an overflow
// recovery that compacted retries.
func (s *session) runCompaction(reason erradvisor.CompactionReason) bool {
	s.emit(s.advisor.CompactionStarted(reason, time.Now()))

	// Summarise everything before the latest user message; the failed turn
	// goes with it.
	last := len(s.transcript) - 1
	for last >= 0 && s.transcript[last].role != "user" {
		last--
	}
	var res *erradvisor.CompactionResult
	summary, before, after, err := "", 0, 0, errors.New("no user message to keep")
	if last >= 0 {
		summary, before, after, err = s.compact(s.transcript[:last])
	}
	if err == nil {
		res = &erradvisor.CompactionResult{Summary: summary, TokensBefore: before, EstimatedTokensAfter: after}
		kept := s.transcript[last]
		s.transcript = []message{{role: "summary", text: summary, at: time.Now()}, kept}
	}
	end := s.advisor.CompactionEnded(res, err, time.Now())
	s.emit(end)
	if !end.WillRetry {
		s.log.printf("  stopped: compaction did not complete: %s", end.ErrorMessage)
	}
	return end.WillRetry
}

// outcome describes a finished turn to the Session.
func (s *session) outcome(t *turn, after erradvisor.Preceding) erradvisor.Outcome {
	var produced erradvisor.Content
	if t.Text != "" {
		produced |= erradvisor.ContentText
	}
	if t.ToolCalls > 0 {
		produced |= erradvisor.ContentToolCalls
	}
	if t.Thinking != "" {
		produced |= erradvisor.ContentThinking
	}
	if produced == 0 {
		produced = erradvisor.ContentNone
	}
	o := erradvisor.Outcome{
		Provider: providerID, Model: s.model, CurrentModel: s.model,
		Content: produced,
		After:   after,
		Usage: erradvisor.TokenUsage{
			Input: t.InputTokens, Output: t.OutputTokens,
			ContextWindow: s.contextWindow, MaxOutput: s.maxTokens,
		},
	}
	switch t.StopReason {
	case "end_turn", "stop_sequence":
		o.Stop = erradvisor.StopEndTurn
	case "max_tokens":
		o.Stop = erradvisor.StopLength
	case "tool_use":
		o.Stop = erradvisor.StopToolUse
	case "refusal":
		o.Stop = erradvisor.StopRefused
	case "pause_turn":
		o.Stop = erradvisor.StopPaused
	case "model_context_window_exceeded":
		o.Stop = erradvisor.StopContextWindow
	default: // never read an unknown reason as a normal end
		o.Stop = erradvisor.StopUnknown
	}
	return o
}

// request builds the wire request from the transcript and appends the notes
// after its last message. Failed and empty assistant turns are host records,
// not context: they are left out.
func (s *session) request(notes []erradvisor.Note) wireRequest {
	req := wireRequest{Model: s.model, MaxTokens: s.maxTokens, Stream: true}
	add := func(role, text string) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == role {
			req.Messages[n-1].Content = append(req.Messages[n-1].Content, wireBlock{Type: "text", Text: text})
			return
		}
		req.Messages = append(req.Messages, wireMessage{Role: role, Content: []wireBlock{{Type: "text", Text: text}}})
	}
	for _, m := range s.transcript {
		switch {
		case m.role == "summary":
			add("user", "Summary of the conversation so far:\n"+m.text)
		case m.role == "user":
			add("user", m.text)
		case m.text != "":
			add("assistant", m.text)
		}
	}
	for _, n := range notes {
		add("user", n.Text)
	}
	return req
}

// record adds d to the scenario's result.
func (s *session) record(d erradvisor.Decision) {
	s.rec.Decisions = append(s.rec.Decisions, d)
	s.rec.Final = d
}

// emit streams lifecycle events as JSON lines, as a host would to its UI.
func (s *session) emit(events ...events.Event) {
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			line = []byte(`{"error":` + quote(err.Error()) + `}`)
		}
		s.log.printf("  event: %s", line)
		s.rec.Events = append(s.rec.Events, e)
	}
}

// pendingNotes returns the notes the next request would carry, for the log
// after a Stop. PeekNotes leaves one-shot notes (a compaction outcome, a
// command failure) for the real next request.
func (s *session) pendingNotes() []string {
	return noteTexts(s.advisor.PeekNotes(time.Now(), s.target(), view(s.transcript)))
}

// target is where the next request goes.
func (s *session) target() erradvisor.Target {
	return erradvisor.Target{Provider: providerID, Model: s.model}
}

func noteTexts(notes []erradvisor.Note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.Text
	}
	return out
}

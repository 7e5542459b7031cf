package main

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/erradvisor/erradvisor"
	adapter "github.com/erradvisor/erradvisor/adapters/anthropic"
)

// This file is the request loop: the part a host author copies. It sends
// each request with the official SDK (its retries off), turns the SDK's
// error into an erradvisor.Failure with the adapter, and acts on the
// Session's Decision.

// message is the host's own transcript entry.
type message struct {
	role    string // "user", "assistant" or "summary"
	text    string
	stop    erradvisor.StopReason
	errText string // a failed turn's error body
	verdict erradvisor.Classification
	at      time.Time
}

// conversation is one conversation: the SDK client, the transcript and its
// erradvisor.Session.
type conversation struct {
	client  ant.Client
	model   ant.Model
	advisor *erradvisor.Session
	msgs    []message
	log     *logger
	rec     *ScenarioResult
}

const providerID = adapter.Provider

// maxRequests is a safety net for the demo; the Policy bounds the retries.
const maxRequests = 10

// ask sends a user message and runs the loop until the turn is answered or
// stopped. It returns ctx.Err() when the context ends.
func (c *conversation) ask(ctx context.Context, text string) error {
	c.log.printf("user> %s", text)
	c.msgs = append(c.msgs, message{role: "user", text: text, at: time.Now()})
	c.advisor.UserMessage(time.Now())

	for n := 1; n <= maxRequests; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The notes go after the last message of this request only.
		notes := c.advisor.Notes(time.Now(), c.target(), c.view())
		params := c.params(notes)
		c.log.printf("request %d: %d message(s), %d note(s)", n, len(params.Messages), len(notes))
		for _, note := range notes {
			c.log.printf("  note: %s", note.Text)
		}

		resp, err := c.client.Messages.New(ctx, params)
		now := time.Now()
		var o erradvisor.Outcome
		if err != nil {
			f := adapter.Failure(err) // Provider, Status, Code, raw body, headers, Err
			f.Model, f.At = string(c.model), now
			o = erradvisor.Outcome{Stop: erradvisor.StopError, Failure: f, CurrentModel: string(c.model)}
			c.log.printf("  response: HTTP %d %s", f.Status, f.Code)
		} else {
			o = c.outcome(resp)
			c.log.printf("  response: HTTP 200, stop_reason %s: %q", resp.StopReason, textOf(resp))
		}

		d := c.advisor.Decide(o, now)
		c.rec.Decisions = append(c.rec.Decisions, d)
		if err != nil {
			v := d.Classification
			c.log.printf("  classified: %s / %s (rule %s%s)", v.Class, v.Reason, v.Rule, waitNote(v))
			c.msgs = append(c.msgs, message{role: "assistant", stop: erradvisor.StopError,
				errText: o.Failure.Message, verdict: v, at: now})
		} else {
			c.msgs = append(c.msgs, message{role: "assistant", text: textOf(resp), stop: o.Stop, at: now})
			c.rec.Answer = textOf(resp)
		}

		switch d.Action {
		case erradvisor.Retry:
			c.log.printf("  decision: retry after %s (%s)", d.Delay, d.Explain())
			c.msgs = c.msgs[:len(c.msgs)-1] // the failed attempt stays out of the retry
			if err := erradvisor.Wait(ctx, d.Delay); err != nil {
				c.advisor.Cancel(time.Now())
				return err
			}
		case erradvisor.Compact:
			c.log.printf("  decision: compact, then one fresh attempt (%s)", d.Explain())
			if !c.compact(d.Compaction) {
				return nil
			}
		case erradvisor.Stop:
			c.log.printf("  decision: stop: %s", d.Explain())
			return nil
		default:
			c.log.printf("  decision: %s (%s)", d.Action, d.Explain())
			return nil
		}
	}
	c.log.printf("  giving up after %d requests", maxRequests)
	return nil
}

// compact replaces everything before the latest user message with a
// summary, reporting the compaction to the Session. A real host asks the
// model for the summary; this one writes it. It reports whether to make the
// fresh attempt.
func (c *conversation) compact(reason erradvisor.CompactionReason) bool {
	c.advisor.CompactionStarted(reason, time.Now())
	last := len(c.msgs) - 1
	for last >= 0 && c.msgs[last].role != "user" {
		last--
	}
	var res *erradvisor.CompactionResult
	var err error
	if last < 0 {
		err = errors.New("no user message to keep")
	} else {
		summary := "Earlier, the user shared " + plural(last, "message") + " of build logs; all fail at linker step 412."
		res = &erradvisor.CompactionResult{Summary: summary, TokensBefore: 219898, EstimatedTokensAfter: 41000}
		c.msgs = []message{{role: "summary", text: summary, at: time.Now()}, c.msgs[last]}
	}
	end := c.advisor.CompactionEnded(res, err, time.Now())
	c.log.printf("  compacted: %d message(s) left, will retry: %v", len(c.msgs), end.WillRetry)
	return end.WillRetry
}

// outcome describes a successful response to the Session.
func (c *conversation) outcome(m *ant.Message) erradvisor.Outcome {
	o := erradvisor.Outcome{
		Stop: adapter.StopReason(m.StopReason), Provider: providerID,
		Model: string(c.model), CurrentModel: string(c.model),
		Usage: erradvisor.TokenUsage{
			Input: int(m.Usage.InputTokens), Output: int(m.Usage.OutputTokens),
			ContextWindow: 200000, MaxOutput: 1024,
		},
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				o.Content |= erradvisor.ContentText
			}
		case "tool_use", "server_tool_use":
			o.Content |= erradvisor.ContentToolCalls
		case "thinking", "redacted_thinking":
			o.Content |= erradvisor.ContentThinking
		}
	}
	if o.Content == 0 {
		o.Content = erradvisor.ContentNone
	}
	return o
}

// params builds the request from the transcript, with the notes after its
// last message. Failed turns are host records, not context.
func (c *conversation) params(notes []erradvisor.Note) ant.MessageNewParams {
	type turn struct {
		user   bool
		blocks []ant.ContentBlockParamUnion
	}
	var turns []turn
	add := func(user bool, text string) {
		block := ant.NewTextBlock(text)
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, block)
			return
		}
		turns = append(turns, turn{user, []ant.ContentBlockParamUnion{block}})
	}
	for _, m := range c.msgs {
		switch {
		case m.role == "summary":
			add(true, "Summary of the conversation so far: "+m.text)
		case m.role == "user":
			add(true, m.text)
		case m.text != "":
			add(false, m.text)
		}
	}
	for _, n := range notes {
		add(true, n.Text)
	}
	msgs := make([]ant.MessageParam, len(turns))
	for i, t := range turns {
		if t.user {
			msgs[i] = ant.NewUserMessage(t.blocks...)
		} else {
			msgs[i] = ant.NewAssistantMessage(t.blocks...)
		}
	}
	return ant.MessageNewParams{Model: c.model, MaxTokens: 1024, Messages: msgs}
}

// view describes the transcript to the Session, newest first.
func (c *conversation) view() iter.Seq[erradvisor.Entry] {
	return func(yield func(erradvisor.Entry) bool) {
		for i := len(c.msgs) - 1; i >= 0; i-- {
			m := c.msgs[i]
			e := erradvisor.Entry{Time: m.at}
			switch m.role {
			case "user":
				e.Kind = erradvisor.EntryUser
			case "summary":
				e.Kind = erradvisor.EntryCompactionSummary
			case "assistant":
				e.Kind, e.StopReason = erradvisor.EntryAssistant, m.stop
				e.ErrorMessage, e.Classification = m.errText, m.verdict
				e.Provider, e.Model = providerID, string(c.model)
				if m.text != "" {
					e.Content = erradvisor.ContentText
				} else {
					e.Content = erradvisor.ContentNone
				}
			}
			if !yield(e) {
				return
			}
		}
	}
}

func (c *conversation) target() erradvisor.Target {
	return erradvisor.Target{Provider: providerID, Model: string(c.model)}
}

// textOf joins the text blocks of m.
func textOf(m *ant.Message) string {
	var b strings.Builder
	for _, blk := range m.Content {
		if blk.Type == "text" {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}

func waitNote(c erradvisor.Classification) string {
	if c.RetryAfter > 0 {
		return ", server asks to wait " + c.RetryAfter.String()
	}
	return ""
}

package eino

import (
	"context"
	"errors"
	"io"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/erradvisor/erradvisor"
)

// Stream implements model.BaseChatModel. It adds the notes as Generate
// does, and retries or recovers a failure that happens before the first
// chunk arrives: an error from the inner Stream call or from the first
// Recv. Once a chunk was delivered the stream is the caller's: an error
// after it (a cut stream) is passed on as an *erradvisor.Error carrying the
// verdict, and reported to the Session, so the next call's notes mention
// it. Stream does not continue or nudge a turn; at the end of the stream
// the Session is told how the turn ended.
func (m *ChatModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msgs := input
	after := m.begin(input)
	for {
		req := m.withNotes(msgs)
		sr, err := m.inner.Stream(ctx, req, opts...)
		var first *schema.Message
		if err == nil {
			first, err = sr.Recv()
			if err != nil {
				sr.Close()
			}
			if errors.Is(err, io.EOF) {
				// An empty stream: a turn with nothing in it.
				m.clearFailure()
				m.decide(m.successOutcome(nil, after), m.cfg.now())
				return schema.StreamReaderFromArray[*schema.Message](nil), nil
			}
		}
		if err != nil {
			now := m.cfg.now()
			d := m.decide(m.failureOutcome(ctx, err, now), now)
			next, stop := m.onFailure(ctx, d, err, msgs, now)
			if stop != nil {
				return nil, stop
			}
			if d.Action == erradvisor.Compact {
				after = erradvisor.AfterUser
			}
			msgs = next
			continue
		}
		out, w := schema.Pipe[*schema.Message](1)
		go m.forward(ctx, sr, first, w, len(msgs), after)
		return out, nil
	}
}

// forward copies the inner stream to w, starting with first, and reports
// how the turn ended to the Session.
func (m *ChatModel) forward(ctx context.Context, sr *schema.StreamReader[*schema.Message], first *schema.Message,
	w *schema.StreamWriter[*schema.Message], inputLen int, after erradvisor.Preceding) {
	defer w.Close()
	defer sr.Close()
	chunks := []*schema.Message{first}
	closed := func() {
		// The caller closed the stream: the turn was abandoned.
		m.decide(erradvisor.Outcome{Stop: erradvisor.StopAborted}, m.cfg.now())
	}
	if w.Send(first, nil) {
		closed()
		return
	}
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			msg, cerr := schema.ConcatMessages(chunks)
			if cerr != nil {
				msg = first
			}
			m.clearFailure()
			m.decide(m.successOutcome(msg, after), m.cfg.now())
			return
		}
		if err != nil {
			now := m.cfg.now()
			s := m.cfg.session
			d := m.decide(m.failureOutcome(ctx, err, now), now)
			if d.Action == erradvisor.Retry {
				// Part of the answer is out: nothing is retried here.
				s.Cancel(now)
			}
			c := d.Classification
			if c == (erradvisor.Classification{}) {
				c = erradvisor.ClassifyError(err)
			}
			if c.Class != erradvisor.Canceled {
				m.recordFailure(err, c, inputLen, now)
			}
			w.Send(nil, &erradvisor.Error{Err: err, Classification: c})
			return
		}
		chunks = append(chunks, chunk)
		if w.Send(chunk, nil) {
			closed()
			return
		}
	}
}

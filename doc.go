// Package erradvisor decides what an LLM agent's request loop should do when
// a model request fails, and tells the model what happened.
//
// A failed request gets one of three answers, and they are not
// interchangeable:
//
//   - Retry: the failure is transient (rate limit, overload, 5xx, network,
//     timeout, a cut stream). Back off and repeat the same request.
//   - Recover: the request exceeded the context window. Compact the
//     conversation and make one fresh attempt.
//   - Stop: the request or the account is wrong (bad key, unknown model,
//     invalid request, quota or budget exhausted). Say why, and stop.
//
// The package is pure functions and small state machines. The host owns I/O,
// the transcript and the clock; every decision takes the current time as an
// argument.
//
// # Pieces
//
//   - [Classify] turns a [Failure] (status, body, headers, Go error) into a
//     [Classification]: a [Class], a [Reason], the id of the rule that
//     decided, and any wait or reset time the server stated. The rules are
//     data (rules.yaml, embedded); hosts layer their own with
//     [LoadClassifier].
//   - A [Session] (one per conversation) is the front door: it turns each
//     turn's [Outcome] into a [Decision] under a [Policy] (None, Retry,
//     Compact, Continue, Nudge, Stop or Defer, with the delay, a [Cause] and
//     the lifecycle events the reference agent streams), tracks compactions
//     and command failures, and returns the short notes to append to the
//     next outgoing request only. A failure is classified once: the notes
//     use the verdict the Decision used. [Conservative] and [Persistent]
//     are the two presets.
//   - Package events holds the events' wire shapes.
//
// # Wiring it into a request loop
//
// Once per conversation:
//
//	s := erradvisor.NewSession(erradvisor.Conservative())
//
// Then:
//
//  1. On each user message: s.UserMessage(now).
//  2. Before each request: append s.Notes(now, target, transcript) after
//     its last message (nothing is persisted; the prompt-cache prefix stays
//     stable). The transcript is the host's, described as [Entry] values
//     newest first (see [NewestFirst]).
//  3. Send it with the SDK's own retries off.
//  4. d := s.Decide(outcome, now), where the [Outcome] holds the stop
//     reason, usage and content, or the [Failure]; keep d.Classification on
//     the failed transcript entry; stream d.Events().
//  5. Act on d.Action: Retry after [Wait](ctx, d.Delay); Compact, reporting
//     it with s.CompactionStarted(d.Compaction, now) and s.CompactionEnded
//     (whose WillRetry says whether to make the fresh attempt); Continue or
//     Nudge by sending d.Text as a hidden user message; Stop and show
//     d.Explain() (or branch on d.Cause); None or Defer: nothing more.
//
// Command failures the model cannot see (an extension command that threw)
// go to s.CommandFailed, and surface once in the next request's notes.
package erradvisor

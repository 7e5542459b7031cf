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
//     decided, and any wait the server stated. The rules are data
//     (rules.yaml, embedded); hosts layer their own with [LoadClassifier].
//   - A [Retrier] (one per session) turns each turn's [Outcome] into a
//     [Decision]: None, Retry, Compact, Continue, Nudge, Stop or Defer, with
//     the delay and the lifecycle events the reference agent streams.
//     [Conservative] and [Persistent] are the two presets.
//   - A [CompactionTracker] pairs compaction starts and ends and holds the
//     recovery latch: one overflow recovery per user turn. The Retrier and
//     the Advisor of a session share it.
//   - An [Advisor] (one per session) scans the transcript, newest first, and
//     returns the short notes to append to the next outgoing request only.
//
// # Wiring it into a request loop
//
// Once per session:
//
//	r := erradvisor.NewRetrier(erradvisor.Conservative())
//	a := erradvisor.NewAdvisor(erradvisor.AdvisorConfig{Tracker: r.Tracker()})
//
// On each new user message, call r.UserMessage() (it re-arms the recovery
// latch and the continuation count). Then, for every request:
//
//  1. Build the request from the transcript and append
//     a.Notes(now, provider, model, transcript) at the end of the message
//     list (the prompt-cache prefix stays stable; nothing is persisted).
//  2. Send it with the SDK's own retries off.
//  3. Fill an Outcome from the result: the stop reason, usage, and for a
//     failure Classify(Failure{...}) of the status, body, headers and error.
//  4. d := r.Decide(outcome, now), stream d.Events(), and act on d.Action:
//     Retry after Wait(ctx, d.Delay); Compact, reporting the compaction with
//     a.CompactionStarted(d.Compaction, now) and a.CompactionEnded (whose
//     WillRetry says whether to retry); Continue or Nudge by sending d.Text as a hidden user
//     message; Stop and show d.Explain(); None or Defer: do nothing more.
//
// Command failures the model cannot see (an extension command that threw)
// go to a.CommandFailed, and surface once in the next request's notes.
package erradvisor

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
// The package is pure functions and small state machines: Classify turns a
// Failure into a Classification; the host owns I/O, the transcript and the
// clock.
package erradvisor

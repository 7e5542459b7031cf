package erradvisor

import "strconv"

// The outcome of one assistant turn, as the host reports it to Session.Decide,
// lives here.

// StopReason is how an assistant turn ended. The names follow the reference
// agent; the SDK adapters map each provider's stop or finish reason to one.
type StopReason uint8

// The stop reasons. The zero value is StopEndTurn.
const (
	// StopEndTurn: the model ended its turn normally ("stop").
	StopEndTurn StopReason = iota
	// StopLength: the output hit a token limit ("length").
	StopLength
	// StopToolUse: the turn ended with tool calls ("toolUse").
	StopToolUse
	// StopError: the request failed ("error"). Outcome.Failure or
	// Outcome.Classification describes the failure.
	StopError
	// StopAborted: the user aborted the request ("aborted").
	StopAborted
	// StopRefused: the response ended without an answer because the model
	// refused or a content filter or safety check cut it (Anthropic
	// "refusal", OpenAI "content_filter", Gemini "SAFETY", "RECITATION",
	// "BLOCKLIST", "PROHIBITED_CONTENT"). Repeating the request gives the
	// same answer.
	StopRefused
	// StopPaused: the provider paused a long-running turn and expects the
	// conversation to be sent again as it is to let the model carry on
	// (Anthropic "pause_turn").
	StopPaused
	// StopContextWindow: generation stopped because the context window was
	// full (Anthropic "model_context_window_exceeded", Bedrock's context
	// window stop). It is read as a context overflow.
	StopContextWindow
	// StopUnknown: the provider gave a stop or finish reason the host does
	// not recognise, or one that marks an unusable turn (Gemini
	// "MALFORMED_FUNCTION_CALL", "OTHER"). It is never read as a normal end.
	StopUnknown
)

// String returns the reference agent's name: "stop", "length", "toolUse",
// "error" or "aborted"; and "refused", "paused", "contextWindow" or
// "unknown" for the reasons the reference agent does not have.
func (s StopReason) String() string {
	switch s {
	case StopEndTurn:
		return "stop"
	case StopLength:
		return "length"
	case StopToolUse:
		return "toolUse"
	case StopError:
		return "error"
	case StopAborted:
		return "aborted"
	case StopRefused:
		return "refused"
	case StopPaused:
		return "paused"
	case StopContextWindow:
		return "contextWindow"
	case StopUnknown:
		return "unknown"
	}
	return "stopReason(" + strconv.Itoa(int(s)) + ")"
}

// Content says what an assistant turn produced: a set of the flags below.
//
// The zero value means the host did not say, and it is read as a turn with
// usable output: a turn is only treated as empty or thinking-only (and so
// continued or nudged, when the policy asks for that) when the host states
// ContentNone or ContentThinking alone.
type Content uint8

// The content flags.
const (
	// ContentText: the turn has visible text.
	ContentText Content = 1 << iota
	// ContentToolCalls: the turn has tool calls.
	ContentToolCalls
	// ContentThinking: the turn has thinking (reasoning) content.
	ContentThinking
	// ContentNone: the host states that the turn produced nothing at all.
	// It is ignored when any other flag is set.
	ContentNone
)

// usable reports whether c holds output the model meant for the user or a
// tool, or is not stated.
func (c Content) usable() bool {
	return c == 0 || c&(ContentText|ContentToolCalls) != 0
}

// thinkingOnly reports a turn that produced only thinking.
func (c Content) thinkingOnly() bool { return c&^ContentNone == ContentThinking }

// Preceding is the message just before an assistant turn.
type Preceding uint8

// The kinds of preceding message. The zero value is AfterOther.
const (
	// AfterOther: anything else, or not known.
	AfterOther Preceding = iota
	// AfterUser: a message the user typed.
	AfterUser
	// AfterToolResult: a tool result.
	AfterToolResult
	// AfterContinuation: a hidden continuation or nudge sent on a Decision.
	AfterContinuation
)

// TokenUsage is the token accounting of one assistant turn, with the limits
// of the model that produced it. Zero means not known.
type TokenUsage struct {
	// Input is the number of uncached prompt tokens.
	Input int
	// CacheRead is the number of prompt tokens read from the cache.
	CacheRead int
	// Output is the number of generated tokens.
	Output int
	// ContextWindow is the model's context window. Without it, a length
	// stop cannot be told to have filled the window.
	ContextWindow int
	// MaxOutput is the output limit of the request: the max_tokens it asked
	// for, or else the model's own output limit. Without it, a length stop
	// cannot be told to have come early.
	MaxOutput int
}

// Used returns the tokens the turn occupied in the context window.
func (u TokenUsage) Used() int { return u.Input + u.CacheRead + u.Output }

// Summarizing marks an Outcome as that of the summarization request a
// compaction or a branch summary makes, rather than of a conversation turn.
type Summarizing uint8

// The kinds of request an Outcome can be. The zero value is a conversation
// turn.
const (
	// NotSummarizing: an ordinary turn of the conversation.
	NotSummarizing Summarizing = iota
	// SummarizingCompaction: the summary request of a compaction.
	SummarizingCompaction
	// SummarizingBranch: the summary request of an abandoned branch.
	SummarizingBranch
)

// Outcome is one assistant turn, or one summarization request, as the host
// reports it to Session.Decide.
type Outcome struct {
	// Stop is how the turn ended.
	Stop StopReason
	// Failure describes a failed request (Stop is StopError): status, body,
	// headers, Go error. The Session classifies it once, remembers the
	// verdict for the next request's notes, and quotes its text (redacted)
	// in events.
	Failure Failure
	// Classification is the verdict on the failure, when the host has
	// already classified it (with its own Classifier, say). When it is the
	// zero value the Session classifies Failure.
	Classification Classification
	// Provider and Model are where the turn's request went. When Failure
	// names them too, Failure wins.
	Provider, Model string
	// CurrentModel is the model the next request will use. When both Model
	// and CurrentModel are set and differ, no overflow recovery is
	// attempted: the user already switched.
	CurrentModel string
	// Usage is the turn's token accounting and the model's limits.
	Usage TokenUsage
	// Content is what the turn produced.
	Content Content
	// After is the kind of message before the turn.
	After Preceding
	// Summarizing marks the outcome of a compaction's or a branch
	// summary's own summarization request, which is retried under the same
	// policy with its own count and events.
	Summarizing Summarizing
}

// model returns the model the turn used.
func (o *Outcome) model() string {
	if o.Failure.Model != "" {
		return o.Failure.Model
	}
	return o.Model
}

// sameModel reports whether the failing turn used the current model, as far
// as the host said.
func (o *Outcome) sameModel() bool {
	m := o.model()
	return m == "" || o.CurrentModel == "" || m == o.CurrentModel
}

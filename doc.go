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
//
// # Rule format
//
// Rules are data: a YAML document with a list of rules, each naming the class
// and reason it decides and the evidence it needs, and an optional list of
// concepts the rules can name.
//
//	concepts:                               # optional; vocabularies, see below
//	  quota: [quota, 配额, 额度]
//	  excess: [exceed, "too many", 超出]
//	rules:
//	  - id: anthropic.overloaded            # unique; letters, digits, '.', '_', '-'
//	    tier: provider                      # place in the evidence order (see below); optional
//	    class: transient                    # transient overflow quota billing permanent canceled (unknown: see tiers)
//	    reason: overloaded                  # one of the class's reasons
//	    description: the API is temporarily overloaded
//	    providers: [anthropic]              # guard: only for these providers (aliases understood)
//	    status: [529]                       # guard: only for these HTTP statuses
//	    codes: [overloaded_error]           # trigger: Failure.Code equals one of these
//	    match: ["overloaded"]               # trigger: any of these phrases occurs
//	    clause: ["quota + excess"]          # trigger: a word of each named concept occurs in one clause
//	    regex: 'retry in \d+'               # trigger: the regular expression matches (case-insensitive)
//	    all: ["tokens per min"]             # constraint: every one of these phrases occurs
//	    also: ["exceed", "longer than"]     # constraint: at least one of these phrases occurs
//	    unless: ["quota"]                   # constraint: none of these phrases occurs
//	    numbers: over                       # constraint: a count is followed by a smaller bound; or budget (see below)
//	    examples: ['{"type":"overloaded_error"}']  # texts the rule must match
//	    not: ["rate limit exceeded"]        # texts the rule must not match
//	    firm: true                          # a quota that a short stated wait does not turn into a rate limit
//	    exhausted: true                     # the text says a client's retry layer gave up (see below)
//
// A rule applies when all its guards hold, at least one of its triggers fires
// (when it has any), and its constraints hold.
//
// A rule with `numbers: over` holds only where the text sets a stated size
// against a smaller bound: a count of at least 1000 with its unit beside it
// (tokens, characters, bytes) followed, in the same sentence and within 200
// bytes, by a smaller one, with a word of comparison between the two (">",
// exceeds, max, limit, but, 超过, ...): "tokens: 12000 > 8192", "(143,211
// tokens) exceeds the limit of 128,000", "35000 tokens; model max is 32768"
// ("128k" counts thousands). Numbers that belong to a word, a version, a
// date, a time, an address or a decimal are not counts.
//
// A rule with `numbers: budget` holds only where the text states an output
// budget (max_tokens and its kin, with its count within a few words after
// it, or a count followed by "in the completion" as OpenAI accounts for a
// request) at least as large as the context window it also states
// ("maximum context length is N", "max_model_len N"): "'max_tokens' is too
// large: 65536. This model's maximum context length is 65536 tokens". No
// compaction makes such a request fit; only a smaller budget does.
//
// A rule with `exhausted: true` recognises a client-side retry layer that
// already gave up ("exceeded maximum number of attempts", "Max retries
// exceeded"). It never decides while another rule applies: it sets
// Classification.RetriesExhausted on whatever verdict the text gets, and
// its own class and reason apply only when no other rule does.
//
// A rule file is read defensively, since it may come from anywhere: it must
// be a regular file of at most 1 MiB holding exactly one YAML document, with
// no key repeated in any mapping and aliases that expand to at most 4 MiB;
// statuses are integers from 100 to 599; a regular expression is at most
// 1024 bytes; and a rule must not match nearly everything: no regular
// expression that matches the empty text, a single character or plain
// prose, no match/all/also phrase with fewer than three letters or digits
// (a CJK character counts as two), no status list that covers every error
// status (400 to 599).
//
// # Rule text
//
// Phrases are compared case-insensitively, with '_' and '-' read as spaces
// and runs of white space as one space, so "context_length_exceeded" contains
// the phrase "context length exceeded". A phrase never matches across the
// boundary between Failure.Code and Failure.Message. URLs ("https://..." up
// to the next space, quote or bracket) and paths that start a word
// ("/v1/chat/completions") are not read at all: a link whose anchor says
// "context-window" is no evidence. Nor are stack-frame lines after a line
// break ("at X.Y(...)", `File "x.py", line 9, in f`): a function's name says
// nothing of what failed. Prefer phrases and concepts; use a
// regular expression only where a shape with numbers demands it.
//
// Chinese is written once, in simplified characters: a match, also or
// unless phrase and a concept word with simplified characters of error
// vocabulary also match their traditional forms, so "余额不足" finds
// "餘額不足" and "请稍后再试" finds "請稍後再試". An `all` phrase matches as
// written. Words that Taiwan or Hong Kong say differently (伺服器 for
// 服务器) are words of their own.
//
// # Rule concepts
//
// A concept is a named vocabulary: words, in any language, that stand for
// one idea ("excess": exceed, too long, 超出, ...). A `clause` entry joins
// concept names with '+' and fires when a word of each occurs within one
// clause of the text, in any order and with any words between, so
// "quota has been exceeded", "exceeded your quota" and "额度已超出" all
// satisfy "quota + excess". A clause ends at a line break, ';', '|', a '.',
// '!' or '?' before a space, a quote or the end, and at "。". Words are
// stems: "exceed" also finds "exceeds", "exceeded" and "exceeding". A rule
// file may name the concepts of the defaults without defining them, and may
// extend one by listing it again: the words of all layers are joined. At
// most 127 concepts and 128 distinct clause combinations exist per Classifier.
//
// # Rule tiers
//
// The tier places a rule in the order of evidence. From first to last:
//
//	outside     no failure of a model request (a tool's, an MCP server's, a tracing exporter's)
//	abort       the caller aborted
//	provider    a provider's documented wording or code
//	hard_limit  limits waiting does not clear: requests too large, quotas, budgets, suspensions, billing
//	rate        rate limits and capacity (before overflow: a throttle that mentions tokens is no overflow)
//	overflow    the prompt does not fit the context window, and first the sizes
//	            that look like it but are not (an image over its own bound)
//	permanent   request and configuration errors
//	fault       server, stream, timeout and network faults
//	status      the HTTP status, with at most a word of text
//
// A rule without a tier gets one: `provider` when it names providers,
// `status` when it reads only the status, otherwise by its class (unknown:
// outside; canceled: abort; quota and billing: hard_limit; transient
// rate_limit and overloaded: rate; overflow: overflow; permanent: permanent;
// other transient: fault).
//
// The outside tier is where a rule says a text reports no failure of a
// model request at all, so that no later rule, no status and no word model
// gives it a class: a host may hand over a tool's "429 Too Many Requests"
// or a tracing exporter's 403, and neither says anything of the next model
// request. Its rules, and only they, have class unknown and no reason; the
// verdict is Unknown with the rule's id in Classification.Rule. They take no
// `exhausted`, `firm` or `numbers`.
//
// Layers merge within a tier (see [NewClassifier]): every rule of a tier is
// tried before any rule of a later tier, and within a tier the rules of a
// higher layer come first, each layer's rules in file order. The rules of
// the other tiers are tried on the body and then on the Go error's text; the
// rules of the status tier (the status, with at most a word such as "Bad
// Request") come after all of them. So a
// user rule `status: [400]` never beats a default rule that reads "maximum
// context length" in the body; to override a default, name a stronger tier
// or disable the default rule by its id.
//
// Under a status that refuses the request (a 4xx other than 408, 409, 421,
// 424, 425, 429 and 499), the fault tier's transport words, network and
// stream, are not read unless the rule names that status: the server
// answered, so a host's "connection failed" around the answer is no fault.
// Under an authentication refusal (401, 407) no fault-tier rule reads
// unless it names the status: "the endpoint may be temporarily unavailable,
// try again" around a 401 is a host's advice, not the cause. Under any such
// refusal no abort rule reads unless it names the status either: "aborting
// request: 404 Resource not found" is a host giving up on the answer, not a
// person's cancel.
//
// A rule with `disabled: true` removes the rule of the same id from the
// layers below it.
package erradvisor

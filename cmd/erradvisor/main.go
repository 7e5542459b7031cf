// Command erradvisor classifies failed LLM provider requests from the command
// line, with the same rules the erradvisor package uses, explains what a
// request loop would decide and tell the model about one failure, and
// replays the reference agent's session files through an erradvisor.Session.
//
// Usage:
//
//	erradvisor classify [flags] [TEXT...]
//	erradvisor classify --jsonl [flags] < failures.jsonl
//	erradvisor explain [flags] [TEXT...]
//	erradvisor replay [--policy P] [--compare] [--json] [--context-window N] [--max-output N]
//	                  [--models FILE] [--rules FILE]... FILE.jsonl|-
//	erradvisor rules list [--rules FILE]...
//	erradvisor rules check FILE.yaml...
//	erradvisor help
//
// # classify
//
// classify classifies one failure: TEXT (the arguments joined by spaces) or,
// without TEXT, all of standard input as one message. It prints one line:
//
//	$ erradvisor classify --provider openai --status 429 'Rate limit reached for gpt-4o ... Please try again in 20s.'
//	transient  rate_limit  rule=transient.rate_limit  retry_after=20s
//	$ erradvisor classify --status 429
//	transient  rate_limit  rule=status.429
//	$ echo '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' | erradvisor classify --provider anthropic
//	transient  overloaded  rule=transient.overloaded
//
// Flags may come before or after TEXT; put "--" before a TEXT that starts
// with '-'. The flags are:
//
//	--provider ID  provider id ("anthropic", "openai", "bedrock", ...; aliases understood)
//	--status N     HTTP status (0 = none; otherwise 100-599)
//	--code CODE    the provider's error type or code, when the SDK gives it separately
//	--rules FILE   a rule file layered over the defaults; repeatable, first = highest priority.
//	               Unlike erradvisor.LoadClassifier, a file that does not exist is an error.
//	--json         print one JSON object instead of the human line
//	--jsonl        read JSON lines from standard input (see below)
//
// With --json the object is
//
//	{"class":"transient","reason":"rate_limit","rule":"transient.rate_limit","retry_after_ms":20000}
//
// retry_after_ms is the stated wait in milliseconds, rounded up, or 0. reset_at
// (RFC 3339, UTC) is present only when a quota or billing limit states when it
// resets; it is omitted, never empty, otherwise. An unclassified failure has
// class "unknown" and empty reason and rule. The exit status is 0 whatever
// the class.
//
// Failures are observed "now": reset times stated as durations are anchored
// at the current time.
//
// # classify with no input: the built-in examples
//
// With no TEXT, no --provider, --status or --code, and a standard input that
// is a terminal, /dev/null or empty, classify (and erradvisor with no
// arguments at all) prints a table of a few real provider errors and their
// verdicts, so a newcomer sees it work:
//
//	$ erradvisor classify </dev/null
//
// It never waits for input in that case.
//
// # classify --jsonl
//
// --jsonl reads standard input as JSON lines, one failure per line:
//
//	{"provider":"anthropic","status":529,"code":"overloaded_error","message":"Overloaded"}
//
// ("model" is accepted too; unknown fields are ignored; --provider, --status
// and --code give defaults for lines that omit them) and writes one JSON
// object per good line, in the --json format above. Blank lines are skipped.
// A line that is not a JSON object, has a field of the wrong type, or is
// longer than 8 MiB is reported on standard error with its line number and
// produces no output; reading continues, and the exit status is 1 at the end.
//
//	$ printf '%s\n' '{"status":429,"message":"Too many requests"}' 'oops' | erradvisor classify --jsonl
//	{"class":"transient","reason":"rate_limit","rule":"transient.rate_limit","retry_after_ms":0}
//	erradvisor: line 2: not a JSON object: oops
//	erradvisor: 1 bad line(s) of 2
//	$ echo $?
//	1
//
// # explain
//
// explain classifies one failure like classify (same flags, without
// --jsonl, plus --model M and --policy conservative|persistent), then shows
// what a session would do with it as the first failure of a user turn: the
// Decision of a fresh Session of that policy (action, cause, delay, attempt
// of max, Explain), the events it emits as JSON lines, and the notes the
// same Session would append to the next request when the transcript is that
// one failed assistant turn; the notes use the decision's verdict, and a
// Retry's next request is the retry itself, which carries none:
//
//	$ erradvisor explain --provider anthropic --status 529 '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
//	class       transient
//	reason      overloaded
//	rule        transient.overloaded
//	...
//	decision    retry
//	cause       retryable
//	delay       2s
//	attempt     1 of 3
//	why         overloaded: retry 1 of 3 in 2s
//	event       {"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,...}
//
//	notes on the next request to anthropic/?, the transcript being this one failed turn (the automatic retry: no note about the failure it retries):
//	  none
//
// With --json it prints one object: the classify --json fields, "policy",
// "decision" {"action","cause","delay_ms","attempt","max","explain","text"} (max 0 =
// no limit), "events" (the event objects) and "notes" [{"kind","text"}].
//
// # replay
//
// replay reads a session file of the reference agent (Pi, versions 1, 2
// and 3), or standard input for "-", and feeds it to an erradvisor.Session
// of the --policy preset. For every assistant message on the session's
// main line it prints the request that produced it (provider, model, start
// time and the notes the Session would append) and then the outcome (stop
// reason, content, usage and the model's limits), the classification of
// its errorMessage, the verdict and its events, and what the recorded
// agent did next; after the last entry it prints the notes of the next
// request. Times come from the file. The main line is the file order for
// version 1 files (a single chain) and, for versions 2 and 3, the path
// from the last entry up through parentId, as Pi's loader resolves the
// current leaf; entries on abandoned branches are counted and skipped. See
// replayer for the details.
//
//	line 11  assistant  zai/glm-5.1  error
//	  outcome   stop=error  content=empty  usage in=0 out=0 cacheRead=0  limits window=204800 max_output=131072 (table)  used=0
//	  error     "Connection error."
//	  class     transient  network  rule=transient.network
//	  verdict   retry  delay=8s  attempt=3/3  — network: retry 3 of 3 in 8s
//	  event     {"type":"auto_retry_start","attempt":3,"maxAttempts":3,"delayMs":8000,"errorMessage":"Connection error."}
//	  recorded  the user typed after 1m9s (line 12)
//
// The verdict is what the library decides under the policy, with the
// events it would emit; it is not what happened. Nothing printed claims a
// retry or a compaction the file does not show: "recorded" says what the
// agent in the file did next, read from the following entries of the main
// line: it retried (another request of the same user turn after an error,
// with the delay from the error to the retry's start), continued (another
// request after a turn that did not fail), ran the tool calls, compacted
// (a compaction entry), the user typed (a user message), the model was
// switched (a model_change and no further request of the turn), or nothing
// (the end of the file). The transcript the notes are built from follows
// the file too: an attempt the agent retried leaves it. Events such as
// auto_retry_end come from the Session, so they close only a streak the
// Session itself started.
//
// The flags are:
//
//	--policy P          conservative (default) or persistent
//	--rules FILE        a rule file layered over the defaults (repeatable)
//	--compare           mark each verdict [agrees] or [DISAGREES with the verdict] and
//	                    end with the counts by verdict and recorded action
//	--json              write JSON lines instead of the text (see below)
//	--context-window N  the context window of every model, in tokens
//	--max-output N      the output limit of every model, in tokens
//	--models FILE       a models table (the YAML format of internal/models/models.yaml)
//	                    layered over the embedded one
//
// Each assistant turn's outcome carries the model's context window and
// output limit: those of --context-window and --max-output when given,
// else the models table's, so that a length stop whose output stayed below
// the output limit while the context filled is an early length stop, as
// in a live loop (both presets compact it once). Session files do not
// record a request's own max_tokens, so the table's output limit stands
// for it; give --max-output when the agent asked for less. A model without
// known limits is reported once ("limits    none known for ...").
//
// --compare compares each verdict with the recorded action: Retry agrees
// with retried; Compact with compacted; Stop with the user typed, the model
// was switched, or nothing; Continue and Nudge with continued; None with
// ran the tool calls, the user typed, the model was switched, or nothing.
// Any other pair disagrees. Defer, and a stop reason the Session does not
// decide on, are not compared. The summary at the end counts agreements
// and disagreements by pair:
//
//	compare (conservative): 8 agree, 1 disagree, 0 not compared
//	  agree     retry     vs retried         5
//	  ...
//	  disagree  retry     vs user_typed      1
//
// --json writes one JSON object per line, told apart by "type": "session"
// (the header), "request" (n, provider, model, at, notes [{kind, text}];
// final: true for the request after the last entry), "decision" (line,
// provider, model, stop, content, usage, limits, error, class in the
// classify --json form, verdict {action, cause, delay_ms, attempt, max,
// explain, text}, events, recorded {kind, line, after_ms, model_switch}
// and agrees: true, false or null when not compared), "user" and
// "compaction" (the events of a user message or a recovery, when there are
// any) and a final "summary" (policy, requests, decisions, agree,
// disagree, not_compared, pairs [{verdict, recorded, agrees, count}],
// no_limits, skipped_lines). Kinds of "recorded" are retried, continued,
// tools, compacted, user_typed, model_switched and nothing.
//
// Every provider text replay prints (error texts, notes, events, user
// excerpts) is redacted first: API keys, bearer tokens and keys in URLs
// become "[redacted]". explain and classify do the same where they echo
// text.
//
// Reading is bounded: the header must come within the first 1 MiB (so a
// stream with no newline, such as a FIFO fed from /dev/zero, fails at
// once), an entry line may be up to 64 MiB, and the whole input up to 1 GiB.
// A device (/dev/zero) or a directory is refused. A line that is not JSON,
// not an object, an entry whose fields have the wrong JSON types, or an
// over-long line is skipped with a warning on standard error, as Pi's
// loader skips lines it cannot parse, and the number of skipped lines is
// reported at the end; the replay goes on. A missing file, a first line
// that is not a session header, an unknown version, or a `pi --mode json`
// event stream is an error with exit status 1. Two JSON objects on one
// line (a quirk of real files) are read as two entries, with a warning.
// Only the fields a replay needs are kept from each line, and the replay's
// work is linear in the file's length.
//
// # rules
//
// rules list prints every rule of the layered set (the --rules files over the
// embedded defaults) in the order they are tried: id, class, reason,
// providers and where the rule is defined. A rule hidden or disabled by a
// higher layer is not listed.
//
// rules check validates user rule files: their syntax, fields, and every
// rule's examples and `not` texts. It prints "FILE: ok: N rules" per file, with a
// note for each rule that overrides or disables a default rule, or the error
// (file, line and rule) and exits 1:
//
//	$ erradvisor rules check my-rules.yaml
//	my-rules.yaml: ok: 2 rules
//	my-rules.yaml:10: note: rule "transient.gateway_no_body" disables the default rule (rules.yaml:NNN)
//	$ erradvisor rules check bad.yaml
//	erradvisor: bad.yaml:2: rule "acme.gateway_busy": example does not match: "something else entirely"
//	$ erradvisor rules list --rules my-rules.yaml
//
// It then layers each good file over the defaults and reports every text
// whose class or reason the file changes: the examples and `not` texts of
// the default rules, and the fixtures (*.yaml in the schema of
// testdata/fixtures) of --fixtures DIR, or of testdata/fixtures when the
// command runs where that folder exists:
//
//	$ erradvisor rules check overloaded-is-quota.yaml
//	overloaded-is-quota.yaml: ok: 1 rule
//	overloaded-is-quota.yaml: changes example of transient.overloaded: transient/overloaded (transient.overloaded) becomes quota/quota (user.overloaded): "..."
//	...
//	overloaded-is-quota.yaml: changes the verdict on 33 of 1246 default examples and fixtures
//
// # help
//
// erradvisor help, -h and --help, and -h or --help after any command,
// print the usage to standard output and exit 0.
//
// # Exit status
//
// 0 on success, 1 when an input, a rule file or the output failed, 2 for a
// misused command line (the message goes to standard error).
package main

import (
	"os"
)

func main() {
	isTerm := true // when in doubt, never wait for input
	if fi, err := os.Stdin.Stat(); err == nil {
		isTerm = fi.Mode()&os.ModeCharDevice != 0
	}
	os.Exit(run(os.Args[1:], os.Stdin, isTerm, os.Stdout, os.Stderr))
}

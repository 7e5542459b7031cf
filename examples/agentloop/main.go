// Command agentloop is a complete agent request loop wired to erradvisor,
// run against a local fake provider that replays real failure sequences:
// overload, rate limits, a context overflow, a bad key, an exhausted usage
// window, an error inside a 200 stream, a length stop and a thinking-only
// stop.
//
//	go run ./examples/agentloop
//
// The wiring, in the order the calls are made (see session.ask in loop.go):
//
//  1. Per conversation: one erradvisor.Session, NewSession(policy). Turn off
//     any SDK-level retries: the loop decides.
//  2. Per user message: Session.UserMessage, which ends a pending retry
//     streak, restarts the continuation count and the nudge, and re-arms
//     the single overflow recovery.
//  3. Per request: Session.Notes(now, target, transcript newest first), and
//     append the notes after the last message of this request only. Never
//     store them in the transcript.
//  4. After the response: describe it as an Outcome (for a failure, the
//     Failure with everything known: status, body, headers, Go error, time;
//     for a success, the stop reason, content and usage, an unknown stop
//     reason never read as a normal end); call Session.Decide(outcome, now)
//     with the host's clock; keep Decision.Classification on the failed
//     transcript entry; stream Decision.Events to the UI.
//  5. Act on Decision.Action:
//     Retry: drop the failed attempt from the context, Wait(ctx, d.Delay),
//     send again (on cancellation, stream Session.Cancel's events);
//     Compact: Session.CompactionStarted(Decision.Compaction), compact,
//     Session.CompactionEnded, and send once more if the end event says
//     WillRetry;
//     Continue and Nudge: append Decision.Text as a hidden user message and
//     send again;
//     Stop: show Decision.Explain and keep the failed turn, so the next
//     request's notes tell the model what happened;
//     None and Defer: the turn is done (Defer hands it to the host's own
//     threshold compaction or retry layer).
//
// The delays are shortened through the Policy (20 ms doubling to 200 ms) so
// the whole run takes well under a second of waiting; the presets use 2 s
// doubling to 60 s.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/erradvisor/erradvisor"
	"github.com/erradvisor/erradvisor/events"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	if _, err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
	fmt.Printf("\ndone in %s\n", time.Since(start).Round(time.Millisecond))
}

// Report is what a run did, scenario by scenario.
type Report struct {
	Scenarios []ScenarioResult
}

// ScenarioResult records one scenario.
type ScenarioResult struct {
	Name   string
	Policy string
	// Requests holds the requests the loop made, with the notes each
	// carried.
	Requests []Request
	// Received holds the requests as the provider received them.
	Received        []wireRequest
	Classifications []erradvisor.Classification // one per failure
	Decisions       []erradvisor.Decision       // one per response
	Events          []events.Event              // lifecycle events, in order
	Final           erradvisor.Decision         // the last decision
	Answer          string                      // the last answer's text
	PendingNotes    []string                    // after a Stop: the next request's notes
}

// Request is one request of the loop.
type Request struct {
	Notes []string
}

// scenario is a scripted conversation.
type scenario struct {
	name    string
	policy  string // "conservative" or "persistent"
	prompt  string
	history []message // earlier conversation, if any
	script  []reply
}

// fast shortens a preset's delays for the demo.
func fast(p erradvisor.Policy) erradvisor.Policy {
	p.BaseDelay = 20 * time.Millisecond
	p.MaxDelay = 200 * time.Millisecond
	p.MaxRetryAfter = 200 * time.Millisecond // honour server waits up to this
	return p
}

func policyFor(name string) erradvisor.Policy {
	if name == "persistent" {
		return fast(erradvisor.Persistent())
	}
	return fast(erradvisor.Conservative())
}

// Real error bodies, as the Anthropic API and the Codex backend send them.
const (
	overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	rateLimitBody  = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your organization's rate limit of 30,000 input tokens per minute (org: ef36bf5a-434a-4c52-b7a0-ba958aef9dfd, model: claude-sonnet-4-20250514). For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}`
	tooLongBody    = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`
	badKeyBody     = `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
)

// usageLimitBody is the Codex backend's 429 for an exhausted plan window,
// resetting in resetIn.
func usageLimitBody(now time.Time, resetIn time.Duration) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":%d,"eligible_promo":null,"resets_in_seconds":%d}}`,
		now.Add(resetIn).Unix(), int(resetIn.Seconds()))
}

func scenarios(now time.Time) []scenario {
	return []scenario{{
		name:   "1. overloaded twice, then success",
		policy: "conservative",
		prompt: "Summarise the design document in three bullet points.",
		script: []reply{
			failWith(529, overloadedBody, "x-should-retry", "true"),
			failWith(529, overloadedBody, "x-should-retry", "true"),
			answer("- Pure decisions\n- Host owns I/O\n- Notes for the next request only"),
		},
	}, {
		name:   "2. rate limited with retry-after-ms",
		policy: "conservative",
		prompt: "List the open issues.",
		script: []reply{
			failWith(429, rateLimitBody, "retry-after-ms", "50"),
			answer("Issues 3, 5 and 8 are open."),
		},
	}, {
		name:   "3. prompt too long: compact, then one fresh attempt",
		policy: "conservative",
		prompt: "Now find the bug in the last log.",
		history: []message{
			{role: "user", text: "Read build.log and tell me what failed."},
			{role: "assistant", text: "The build log is 800k characters; the linker failed at step 412.", model: "claude-sonnet-4-5"},
			{role: "user", text: "Read the other five logs too."},
			{role: "assistant", text: "Done: all five fail at the same step.", model: "claude-sonnet-4-5"},
		},
		script: []reply{
			failWith(400, tooLongBody),
			answer("The bug is a missing symbol in step 412: libfoo is linked before its dependant."),
		},
	}, {
		name:   "4. invalid API key",
		policy: "conservative",
		prompt: "Hello?",
		script: []reply{failWith(401, badKeyBody, "x-should-retry", "false")},
	}, {
		name:   "5. usage limit reached, with a reset time",
		policy: "conservative",
		prompt: "Refactor the parser.",
		script: []reply{failWith(429, usageLimitBody(now, 3*time.Hour+51*time.Minute))},
	}, {
		name:   "6. overloaded_error inside a 200 stream",
		policy: "conservative",
		prompt: "Explain the retry policy.",
		script: []reply{
			errorInStream(overloadedBody),
			answer("Transient failures are retried with exponential backoff."),
		},
	}, {
		name:   "7. length stop: continue",
		policy: "persistent",
		prompt: "Write the full migration guide.",
		script: []reply{
			cutAtMaxTokens("# Migration guide\n\n1. Replace the retry wrapper with", 30000, 1024),
			answer(" erradvisor.NewSession.\n2. Remove SDK retries.\n3. Done."),
		},
	}, {
		name:   "8. thinking-only stop: one nudge",
		policy: "persistent",
		prompt: "Which preset should a CI bot use?",
		script: []reply{
			thinkingOnly("The user asks about presets. A CI bot should not loop forever on billing..."),
			answer("Conservative: a CI job should fail fast on quota and billing."),
		},
	}}
}

// fakeCompaction stands in for a real summariser: it reports the token count
// the provider stated and an estimate after summarising.
func fakeCompaction(history []message) (string, int, int, error) {
	return fmt.Sprintf("The user asked to read six build logs (%d messages); all fail at linker step 412.", len(history)),
		219898, 41000, nil
}

// run plays every scenario against a fresh session and writes the log to w.
func run(ctx context.Context, w io.Writer) (Report, error) {
	prov := newProvider()
	defer prov.Close()
	httpClient := &http.Client{Timeout: 10 * time.Second}

	var rep Report
	for i, sc := range scenarios(time.Now()) {
		id := fmt.Sprint(i + 1)
		log := &logger{w: w}
		p := policyFor(sc.policy)
		log.printf("== %s  [policy: %s, base %s, max %s]", sc.name, sc.policy, p.BaseDelay, p.MaxDelay)

		res := ScenarioResult{Name: sc.name, Policy: sc.policy}
		c := &client{baseURL: prov.load(id, sc.script), apiKey: "sk-ant-demo", http: httpClient}
		s := newSession(p, c, log, &res)
		s.compact = fakeCompaction
		for _, m := range sc.history {
			m.at = time.Now()
			s.transcript = append(s.transcript, m)
		}

		if err := s.ask(ctx, sc.prompt); err != nil {
			return rep, err
		}
		if res.Final.Action == erradvisor.Stop {
			res.PendingNotes = s.pendingNotes()
			for _, n := range res.PendingNotes {
				log.printf("  next request's note: %s", n)
			}
		}
		res.Received = prov.requests(id)
		rep.Scenarios = append(rep.Scenarios, res)
		log.printf("")
	}
	return rep, nil
}

// logger writes the readable log.
type logger struct{ w io.Writer }

func (l *logger) printf(format string, args ...any) {
	fmt.Fprintf(l.w, format+"\n", args...)
}

func (l *logger) request(n int, req wireRequest, notes []erradvisor.Note) {
	l.printf("request %d: %d message(s), %s", n, len(req.Messages), plural(len(notes), "note"))
	for _, note := range notes {
		l.printf("  note: %s", note.Text)
	}
}

func (l *logger) failure(f *erradvisor.Failure, c erradvisor.Classification) {
	status := "stream error"
	if f.Status != 0 {
		status = fmt.Sprintf("HTTP %d", f.Status)
	}
	l.printf("  response: %s: %s", status, oneLine(f.Message, 160))
	extra := ""
	if c.RetryAfter > 0 {
		extra += ", server asks to wait " + c.RetryAfter.String()
	}
	if !c.ResetAt.IsZero() {
		extra += ", resets at " + c.ResetAt.UTC().Format("15:04 MST")
	}
	l.printf("  classified: %s / %s (rule %s%s)", c.Class, c.Reason, c.Rule, extra)
}

func (l *logger) turn(t *turn) {
	what := fmt.Sprintf("%q", oneLine(t.Text, 80))
	if t.Text == "" && t.Thinking != "" {
		what = "thinking only, no text"
	}
	l.printf("  response: HTTP 200 stream, stop_reason %s, %d output tokens: %s", t.StopReason, t.OutputTokens, what)
}

func (l *logger) decision(d erradvisor.Decision) {
	switch d.Action {
	case erradvisor.Retry:
		l.printf("  decision: retry after %s (%s)", d.Delay, d.Explain())
	case erradvisor.Continue, erradvisor.Nudge:
		l.printf("  decision: %s with %q (%s)", d.Action, d.Text, d.Explain())
	default:
		l.printf("  decision: %s (%s)", d.Action, d.Explain())
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if n == 0 {
		return "no " + word + "s"
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// oneLine flattens s and cuts it to limit bytes.
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}

// Command sdkloop is an agent request loop that calls the model with the
// official Anthropic Go SDK (github.com/anthropics/anthropic-sdk-go/v2) and
// lets erradvisor decide what to do when a call fails or ends oddly.
//
//	cd examples/sdkloop && go run .
//
// The program starts a fake Anthropic API on 127.0.0.1 that replays real
// responses, and plays four conversations against it:
//
//  1. 529 overloaded_error twice, then an answer: two retries with backoff.
//  2. 400 "prompt is too long", then an answer: compact, one fresh attempt.
//  3. 429 rate_limit_error with retry-after: 1, then an answer: the retry
//     waits the second the server asked for.
//  4. an answer with stop_reason "refusal": stop, and say why.
//
// The wiring (see conversation.ask in loop.go):
//
//   - the SDK client is built with option.WithMaxRetries(0): the loop
//     decides, and the SDK's own retries would hide each attempt (and quota
//     errors) from it;
//   - a failed call's error goes through the adapter's Failure (status,
//     error type, raw body, headers, Go error), to which the host adds the
//     model and its clock's now;
//   - a successful response's stop_reason is mapped to an
//     erradvisor.StopReason, an unknown one never read as a normal end;
//   - Session.Decide turns either into a Decision, and the loop acts on it:
//     Retry after Wait(ctx, d.Delay), Compact then retry once, Stop with
//     d.Explain().
//
// The delays are shortened through the Policy (20 ms doubling to 200 ms,
// server waits honoured up to 2 s) so the run takes about a second; the
// Conservative preset itself waits 2 s doubling to 60 s.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/erradvisor/erradvisor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	if _, err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sdkloop:", err)
		os.Exit(1)
	}
	fmt.Printf("done in %s\n", time.Since(start).Round(time.Millisecond))
}

// ScenarioResult records what one conversation did.
type ScenarioResult struct {
	Name string
	// Decisions holds one Decision per response, in order.
	Decisions []erradvisor.Decision
	// Received holds the requests as the fake API saw them.
	Received []received
	// Answer is the text of the last response, when there was one.
	Answer string
}

// scenario is a scripted conversation.
type scenario struct {
	name    string
	prompt  string
	history []message
	script  []reply
}

func scenarios() []scenario {
	return []scenario{{
		name:   "1. overloaded twice, then an answer",
		prompt: "Summarise the design document in three bullet points.",
		script: []reply{
			fail(529, overloadedBody, "x-should-retry", "true"),
			fail(529, overloadedBody, "x-should-retry", "true"),
			answer("- Pure decisions\n- The host owns I/O\n- Notes for the next request only", "end_turn"),
		},
	}, {
		name:   "2. prompt too long: compact, then one fresh attempt",
		prompt: "Now find the bug in the last log.",
		history: []message{
			{role: "user", text: "Read build.log and tell me what failed."},
			{role: "assistant", text: "The build log is 800k characters; the linker failed at step 412."},
			{role: "user", text: "Read the other five logs too."},
			{role: "assistant", text: "Done: all five fail at the same step."},
		},
		script: []reply{
			fail(400, promptTooLongBody, "x-should-retry", "false"),
			answer("The bug is a missing symbol at step 412: libfoo is linked before the library that needs it.", "end_turn"),
		},
	}, {
		name:   "3. rate limited with retry-after",
		prompt: "List the open issues.",
		script: []reply{
			fail(429, rateLimitBody, "retry-after", "1", "x-should-retry", "true"),
			answer("Issues 3, 5 and 8 are open.", "end_turn"),
		},
	}, {
		name:   "4. refusal",
		prompt: "Write an exploit for this router's firmware.",
		script: []reply{answer("I", "refusal")},
	}}
}

// policy is the Conservative preset with the demo's short delays.
func policy() erradvisor.Policy {
	p := erradvisor.Conservative()
	p.BaseDelay = 20 * time.Millisecond
	p.MaxDelay = 200 * time.Millisecond
	p.MaxRetryAfter = 2 * time.Second
	return p
}

// run plays every scenario and writes the log to w.
func run(ctx context.Context, w io.Writer) ([]ScenarioResult, error) {
	api, err := startFakeAPI()
	if err != nil {
		return nil, err
	}
	defer api.Close()

	var out []ScenarioResult
	for i, sc := range scenarios() {
		id := fmt.Sprint(i + 1)
		log := &logger{w: w}
		log.printf("== %s", sc.name)
		res := ScenarioResult{Name: sc.name}
		c := &conversation{
			client: ant.NewClient(
				option.WithBaseURL(api.load(id, sc.script)),
				option.WithAPIKey("sk-ant-demo"),
				option.WithMaxRetries(0), // the loop decides, not the SDK
				option.WithRequestTimeout(10*time.Second),
			),
			model:   "claude-sonnet-4-5",
			advisor: erradvisor.NewSession(policy()),
			log:     log,
			rec:     &res,
		}
		for _, m := range sc.history {
			m.at = time.Now()
			c.msgs = append(c.msgs, m)
		}
		if err := c.ask(ctx, sc.prompt); err != nil {
			return out, err
		}
		res.Received = api.requests(id)
		out = append(out, res)
		log.printf("")
	}
	return out, nil
}

// logger writes the readable log.
type logger struct{ w io.Writer }

func (l *logger) printf(format string, args ...any) {
	fmt.Fprintf(l.w, format+"\n", args...)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

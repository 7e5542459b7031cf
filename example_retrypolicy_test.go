package erradvisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/erradvisor/erradvisor"
)

// overloadedTurn is a failed turn as a host would describe it.
func overloadedTurn() erradvisor.Outcome {
	return erradvisor.Outcome{
		Stop:    erradvisor.StopError,
		Status:  529,
		Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		Classification: erradvisor.Classification{
			Class: erradvisor.Transient, Reason: erradvisor.ReasonOverloaded, Rule: "anthropic.overloaded",
		},
	}
}

func ExampleConservative() {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	r := erradvisor.NewRetrier(erradvisor.Conservative())
	for range 4 {
		d := r.Decide(overloadedTurn(), now)
		fmt.Printf("%-5s %-3s %s\n", d.Action, d.Delay, d.Explain())
	}

	quota := erradvisor.Outcome{Stop: erradvisor.StopError, Status: 429, Classification: erradvisor.Classification{
		Class: erradvisor.Quota, Reason: erradvisor.ReasonUsageLimit,
		ResetAt: time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC),
	}}
	d := r.Decide(quota, now)
	fmt.Println(d.Action, "-", d.Explain())
	// Output:
	// retry 2s  overloaded: retry 1 of 3 in 2s
	// retry 4s  overloaded: retry 2 of 3 in 4s
	// retry 8s  overloaded: retry 3 of 3 in 8s
	// stop  0s  retries exhausted after 3 attempts: overloaded
	// stop - quota: usage_limit, resets at 15:00 UTC
}

func ExamplePersistent() {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	r := erradvisor.NewRetrier(erradvisor.Persistent())

	credits := erradvisor.Outcome{Stop: erradvisor.StopError, Status: 402, Message: "Insufficient Balance",
		Classification: erradvisor.Classification{Class: erradvisor.Billing, Reason: erradvisor.ReasonCredits}}
	var delays []time.Duration
	for range 7 {
		delays = append(delays, r.Decide(credits, now).Delay)
	}
	fmt.Println(delays)

	length := erradvisor.Outcome{Stop: erradvisor.StopLength, HasText: true, Usage: erradvisor.TokenUsage{
		Input: 68000, Output: 32000, ContextWindow: 200000, MaxOutput: 32000,
	}}
	d := r.Decide(length, now)
	fmt.Printf("%s %q\n", d.Action, d.Text)

	thinkingOnly := erradvisor.Outcome{Stop: erradvisor.StopEndTurn, HasThinking: true}
	fmt.Println(r.Decide(thinkingOnly, now).Action, r.Decide(thinkingOnly, now).Action)
	// Output:
	// [2s 4s 8s 16s 32s 1m0s 1m0s]
	// continue "continue"
	// nudge none
}

// ExampleWait shows a complete retry loop: the host sends a request,
// classifies a failure, asks the Retrier, waits and tries again.
func ExampleWait() {
	p := erradvisor.Conservative()
	p.BaseDelay, p.MaxDelay = time.Millisecond, 5*time.Millisecond // keep the example fast

	// send stands for the host's provider call: overloaded twice, then an
	// answer.
	calls := 0
	send := func() *erradvisor.Failure {
		if calls++; calls <= 2 {
			return &erradvisor.Failure{Provider: "anthropic", Status: 529,
				Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
		}
		return nil
	}

	r := erradvisor.NewRetrier(p)
	ctx := context.Background()
	for {
		o := erradvisor.Outcome{Stop: erradvisor.StopEndTurn, HasText: true}
		if f := send(); f != nil {
			o = erradvisor.Outcome{Stop: erradvisor.StopError, Classification: erradvisor.Classify(*f),
				Status: f.Status, Message: "529 overloaded"}
		}
		d := r.Decide(o, time.Now())
		for _, e := range d.Events() {
			line, _ := json.Marshal(e)
			fmt.Println(string(line))
		}
		if d.Action != erradvisor.Retry {
			fmt.Println(d.Action, "after", calls, "calls:", d.Explain())
			break
		}
		if err := erradvisor.Wait(ctx, d.Delay); err != nil {
			if errors.Is(err, context.Canceled) {
				r.Cancel() // its auto_retry_end says "Retry cancelled"
			}
			break
		}
	}
	// Output:
	// {"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":1,"errorMessage":"529 overloaded"}
	// {"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":2,"errorMessage":"529 overloaded"}
	// {"type":"auto_retry_end","success":true,"attempt":2}
	// none after 3 calls: turn succeeded
}

func ExampleBackoff() {
	p := erradvisor.Conservative()
	var delays []time.Duration
	for attempt := 1; attempt <= 7; attempt++ {
		delays = append(delays, erradvisor.Backoff(p, attempt, 0))
	}
	fmt.Println(delays)

	// The official SDKs' schedule: 0.5 s doubling to 8 s, minus up to 25%.
	sdk := erradvisor.Policy{BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second,
		Jitter: erradvisor.JitterProportional}
	fmt.Println(erradvisor.Backoff(sdk, 3, 0), erradvisor.Backoff(sdk, 3, 0.5), erradvisor.Backoff(sdk, 9, 0.5))
	// Output:
	// [2s 4s 8s 16s 32s 1m0s 1m0s]
	// 2s 1.75s 7s
}

func ExampleRetrier_Tracker() {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	r := erradvisor.NewRetrier(erradvisor.Conservative())
	overflow := erradvisor.Outcome{Stop: erradvisor.StopError, Message: "prompt is too long: 213462 tokens > 200000 maximum",
		Classification: erradvisor.Classification{Class: erradvisor.Overflow, Reason: erradvisor.ReasonContextWindow}}

	d := r.Decide(overflow, now)
	fmt.Println(d.Action)
	if d.Action == erradvisor.Compact {
		// The host compacts and reports it to the tracker it shares with
		// its Advisor.
		t := r.Tracker()
		t.Started(erradvisor.CompactionOverflow, now)
		end := t.Ended(&erradvisor.CompactionResult{TokensBefore: 213462, EstimatedTokensAfter: 41000}, nil, now)
		fmt.Println("will retry:", end.WillRetry)
	}
	d = r.Decide(overflow, now) // the fresh attempt overflows again
	fmt.Println(d.Action, "-", d.Explain())

	r.UserMessage() // a new user message re-arms the recovery
	fmt.Println(r.Decide(overflow, now).Action)
	// Output:
	// compact
	// will retry: true
	// stop - context overflow again: the recovery for this user message was already used
	// compact
}

func ExampleRetrier_Cancel() {
	r := erradvisor.NewRetrier(erradvisor.Conservative())
	d := r.Decide(overloadedTurn(), time.Now())

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the user presses Ctrl+C during the backoff
	if err := erradvisor.Wait(ctx, d.Delay); err != nil {
		for _, e := range r.Cancel().Events() {
			line, _ := json.Marshal(e)
			fmt.Println(string(line))
		}
	}
	// Output:
	// {"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}
}

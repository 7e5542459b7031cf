package erradvisor

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func FuzzClassify(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.Provider, fx.Status, fx.Code, fx.Message, "")
	}
	f.Add("cerebras", 400, "", "400 status code (no body)", "")
	f.Add("", 0, "", "try again in 99999999999999999999999 days", "1e309")
	f.Add("", 0, "", `"resets_at": 99999999999999`, "-1")
	f.Add("", 0, "", "429 status code", "Mon, 02 Jan 2006 15:04:05 GMT")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, provider string, status int, code, msg, retryAfter string) {
		fl := Failure{Provider: provider, Status: status, Code: code, Message: msg, At: at,
			Header: http.Header{"Retry-After": {retryAfter}}}
		got := Classify(fl)
		if again := Classify(fl); again != got {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}
		if !got.Class.Valid() {
			t.Fatalf("invalid class %d", got.Class)
		}
		if rc, ok := got.Reason.Class(); !ok || rc != got.Class {
			t.Fatalf("reason %q does not belong to class %s", got.Reason, got.Class)
		}
		// Unknown has a rule only when a rule of the outside tier said the
		// text reports no failure of a model request.
		if got.Rule == "" && got.Class != Unknown || got.Class == Unknown && got.Rule != "" && !strings.HasPrefix(got.Rule, "outside.") {
			t.Fatalf("rule %q with class %s", got.Rule, got.Class)
		}
		if got.RetryAfter < 0 || got.RetryAfter > maxHint {
			t.Fatalf("retry after %v out of range", got.RetryAfter)
		}
		if !got.ResetAt.IsZero() && got.Class != Quota && got.Class != Billing {
			t.Fatalf("reset time on class %s", got.Class)
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"20", "2.5", "-1", "NaN", "Inf", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "", " 7 ",
		"99999999999999999999999999", "6m0s", "0.000000001"} {
		f.Add(s, s, s, "Please try again in "+s)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, secs, reset, body string) {
		h := http.Header{
			"Retry-After-Ms":                       {ms},
			"Retry-After":                          {secs},
			"X-Ratelimit-Remaining-Tokens":         {"0"},
			"X-Ratelimit-Reset-Tokens":             {reset},
			"Anthropic-Ratelimit-Tokens-Remaining": {"0"},
			"Anthropic-Ratelimit-Tokens-Reset":     {reset},
		}
		for _, when := range []time.Time{at, {}} {
			d := RetryAfter(h, when)
			if d < 0 || d > maxHint {
				t.Fatalf("RetryAfter = %v", d)
			}
		}
		cl := Classify(Failure{Message: body, At: at})
		if cl.RetryAfter < 0 || cl.RetryAfter > maxHint {
			t.Fatalf("body wait %v", cl.RetryAfter)
		}
	})
}

func FuzzRules(f *testing.F) {
	f.Add([]byte(defaultRulesYAML))
	f.Add([]byte("rules:\n  - id: x\n    class: quota\n    reason: quota\n    match: [a]\n    examples: [a]\n"))
	f.Add([]byte("rules: [{id: x, class: transient, reason: server, regex: '(a'}]"))
	f.Add([]byte("rules: !!binary AAAA"))
	f.Add([]byte("&a [*a]"))
	files, _ := filepath.Glob("testdata/rules/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseRules("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		c, err := NewClassifier(set)
		if err != nil {
			return
		}
		_ = c.Classify(Failure{Message: string(data), Status: 429, Provider: "openai"})
		_ = set.Rules()
	})
}

// FuzzClassifyErrorValues builds Go error values from the fuzz input (typed
// nils of several types, self-unwrapping and value-looping errors, cycles,
// joins, wraps of any depth, errors whose every method panics, errors of
// non-comparable types, certificate errors) and checks that ClassifyError
// returns, never panics, and visits at most chainBudget errors.
func FuzzClassifyErrorValues(f *testing.F) {
	f.Add([]byte{0, 5, 5, 6})
	f.Add([]byte{1, 2, 3, 4, 6, 6, 6})
	f.Add([]byte{7, 5, 13, 6, 14})
	f.Add([]byte{11, 8, 9, 10, 12, 15, 16})
	f.Add([]byte{0, 12, 12, 12, 12, 12, 12, 12, 12, 6, 6})
	f.Add([]byte{17, 5, 5, 18, 8, 19, 6})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 512 {
			ops = ops[:512]
		}
		err := buildError(ops)
		got := ClassifyError(err)
		if !got.Class.Valid() {
			t.Fatalf("invalid class %d", got.Class)
		}
		if rc, ok := got.Reason.Class(); !ok || rc != got.Class {
			t.Fatalf("reason %q does not belong to class %s", got.Reason, got.Class)
		}
		if again := ClassifyError(err); again != got {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}
		if fc := walkErrChain(err); fc.visited > chainBudget {
			t.Fatalf("visited %d errors", fc.visited)
		}
		_ = Classify(Failure{Err: err, Message: "upstream: 503", Status: 503})
	})
}

// wrapNode wraps an error under a fixed text, so that building deep chains
// costs the harness nothing (fmt.Errorf would print the whole chain at each
// level).
type wrapNode struct {
	msg string
	err error
}

func (w *wrapNode) Error() string { return w.msg }
func (w *wrapNode) Unwrap() error { return w.err }

// buildError interprets ops as a little stack machine that builds an error.
func buildError(ops []byte) error {
	var stack []error
	top := func() error {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	pop := func() error {
		if len(stack) == 0 {
			return nil
		}
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return e
	}
	var firstCycle *cycleError
	for i, op := range ops {
		switch op % 20 {
		case 0:
			stack = append(stack, chainTargets[i%len(chainTargets)])
		case 1:
			stack = append(stack, nilOp)
		case 2:
			stack = append(stack, nilDNS)
		case 3:
			stack = append(stack, nilURL)
		case 4:
			stack = append(stack, nilDeref)
		case 5:
			stack = append(stack, &wrapNode{msg: "wrap", err: pop()})
		case 6:
			a, b := pop(), pop()
			stack = append(stack, errors.Join(a, b))
		case 7:
			stack = append(stack, &selfError{})
		case 8:
			stack = append(stack, &panicError{inner: pop()})
		case 9:
			stack = append(stack, &net.OpError{Op: "read", Net: "tcp", Err: pop()})
		case 10:
			stack = append(stack, &url.Error{Op: "Post", URL: "https://x", Err: pop()})
		case 11:
			stack = append(stack, valueLoop{})
		case 12:
			stack = append(stack, &fanOut{child: pop()})
		case 13:
			stack = append(stack, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})
		case 14:
			stack = append(stack, listError{"a", fmt.Sprint(i)})
		case 15:
			stack = append(stack, &nilDerefError{msg: fmt.Sprint(i)})
		case 16:
			a, b := pop(), pop()
			stack = append(stack, errors.Join(a, b, a)) // a shared branch
		case 17:
			c := &cycleError{next: pop()}
			if firstCycle == nil {
				firstCycle = c
			}
			stack = append(stack, c)
		case 18:
			if firstCycle != nil { // close the cycle through whatever is on top
				firstCycle.next = top()
			}
		case 19:
			stack = append(stack, errors.New("exceeded maximum number of attempts, 3, connection reset by peer"))
		}
	}
	if len(stack) == 0 {
		return nilDeref
	}
	return errors.Join(stack...)
}

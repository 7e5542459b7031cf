package erradvisor_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/erradvisor/erradvisor"
)

func ExampleClassify() {
	for _, f := range []erradvisor.Failure{
		{Provider: "anthropic", Status: 529,
			Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{Provider: "openai", Status: 429,
			Message: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota"}}`},
		{Provider: "anthropic", Status: 400,
			Message: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"}}`},
		{Provider: "bedrock", Status: 429, Message: "Too many tokens, please wait before trying again."},
		{Provider: "openrouter", Status: 400, Message: "400 status code (no body)"},
	} {
		c := erradvisor.Classify(f)
		fmt.Println(c.Class, c.Reason, c.Rule)
	}
	// Output:
	// transient overloaded transient.overloaded
	// quota quota quota.exhausted
	// overflow context_window overflow.stated
	// transient rate_limit transient.rate_limit
	// transient server transient.gateway_no_body
}

func ExampleClassify_retryAfter() {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := erradvisor.Classify(erradvisor.Failure{
		Provider: "gemini-cli", Status: 429, At: at,
		Message: "You have exhausted your capacity on this model. Your quota will reset after 8h44m7s.",
	})
	fmt.Println(c.Class, c.Reason, c.RetryAfter, c.ResetAt.Format(time.RFC3339))

	c = erradvisor.Classify(erradvisor.Failure{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}}})
	fmt.Println(c.Class, c.Reason, c.RetryAfter)
	// Output:
	// quota usage_limit 8h44m7s 2026-03-01T20:44:07Z
	// transient rate_limit 1.5s
}

// A host may hand over an error that was never the model request's: a
// tool's 429 or a tracing upload's 403. A rule of the outside tier says so:
// the class is Unknown, and Rule names the rule that read it.
func ExampleClassify_outside() {
	c := erradvisor.Classify(erradvisor.Failure{Status: 429,
		Message: "tool-error: web_search failed: HTTP Error 429: Too Many Requests"})
	fmt.Println(c.Class, c.Rule, c.Evidence)
	// Output:
	// unknown outside.tool text
}

func ExampleClassifyError() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(erradvisor.ClassifyError(fmt.Errorf("post /v1/messages: %w", ctx.Err())).Class)
	fmt.Println(erradvisor.ClassifyError(errors.New(`Post "https://api.anthropic.com/v1/messages": read tcp 10.0.0.2:51234->1.2.3.4:443: read: connection reset by peer`)).Reason)
	// Output:
	// canceled
	// network
}

// A certificate the client does not trust fails the same way on every
// attempt, and a client's own retry layer that already gave up is reported,
// so that the host does not retry on top of it.
func ExampleClassifyError_permanentAndExhausted() {
	var err *net.OpError // a typed nil, as a buggy wrapper might return
	fmt.Println(erradvisor.ClassifyError(fmt.Errorf("dial: %w", err)).Class)

	cert := &url.Error{Op: "Post", URL: "https://api.example.com/v1/chat/completions",
		Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}
	c := erradvisor.ClassifyError(cert)
	fmt.Println(c.Class, c.Reason, c.Rule)

	c = erradvisor.ClassifyError(fmt.Errorf("operation error Bedrock Runtime: Converse, exceeded maximum number of attempts, 3, %w",
		syscall.ECONNRESET))
	fmt.Println(c.Class, c.Reason, c.Rule, c.RetriesExhausted)
	// Output:
	// unknown
	// permanent invalid_request go.x509_unknown_authority
	// transient network go.econnreset true
}

func ExampleNewClassifier() {
	// A project rule for a provider whose overflow wording the defaults do not
	// know, guarded by the provider so that no other provider's text is
	// mistaken for an overflow.
	project, err := erradvisor.ParseRules(".erradvisor/rules.yaml", []byte(`
rules:
  - id: acme.overflow
    class: overflow
    reason: context_window
    providers: [acme]
    match: ["model is too long for this context"]
    examples: ["error: model is too long for this context"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defaults, err := erradvisor.DefaultRules()
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := erradvisor.NewClassifier(project, defaults)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Classify(erradvisor.Failure{Provider: "acme", Message: "error: model is too long for this context"}).Rule)
	fmt.Println(c.Classify(erradvisor.Failure{Provider: "other", Message: "error: model is too long for this context"}).Class)

	_, err = erradvisor.ParseRules("bad.yaml", []byte("rules:\n  - id: x\n    class: flaky\n    reason: rate_limit\n    match: [a]\n"))
	fmt.Println(err)
	// Output:
	// acme.overflow
	// unknown
	// bad.yaml:2: rule "x": class "flaky": want transient, overflow, quota, billing, permanent, canceled or unknown
}

func ExampleRetryAfter() {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", at.Add(90*time.Second).Format(http.TimeFormat))
	fmt.Println(erradvisor.RetryAfter(h, at))
	// Output: 1m30s
}

func ExampleCanonicalProvider() {
	fmt.Println(erradvisor.CanonicalProvider("amazon-bedrock"), erradvisor.CanonicalProvider("Vertex"), erradvisor.CanonicalProvider("moonshot"))
	// Output: bedrock gemini kimi
}

func ExampleLoadClassifier() {
	dir, err := os.MkdirTemp("", "erradvisor")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project-rules.yaml")
	rules := "rules:\n  - id: proxy.budget\n    class: quota\n    reason: budget\n    match: [\"team allowance spent\"]\n"
	if err := os.WriteFile(project, []byte(rules), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	// Files that do not exist (here, the user's) are skipped.
	c, err := erradvisor.LoadClassifier(project, filepath.Join(dir, "user-rules.yaml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	got := c.Classify(erradvisor.Failure{Status: 429, Message: "Team allowance spent for this month"})
	fmt.Println(got.Class, got.Reason, got.Rule)
	// Output: quota budget proxy.budget
}

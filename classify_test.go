package erradvisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor/internal/match"
	"github.com/google/go-cmp/cmp"
)

func TestDefaultRulesParse(t *testing.T) {
	set, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(set.Rules()); n < 40 {
		t.Fatalf("only %d default rules", n)
	}
}

// TestRuleExamples runs every default rule's examples and negatives, and
// checks that each example also gets the rule's class from the whole rule
// set (so an earlier rule never silently shadows a later one's example).
func TestRuleExamples(t *testing.T) {
	set, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClassifier(set)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	buf := make([]uint64, (c.m.NumPhrases()+63)/64)
	for _, r := range c.rules {
		for _, ex := range r.examples {
			n++
			if !c.ruleMatchesExample(r, ex, buf) {
				t.Errorf("%s: example does not match: %q", r.id, ex)
			}
			f := Failure{Message: ex}
			if len(r.providers) > 0 {
				f.Provider = r.providers[0]
			}
			if len(r.status) > 0 {
				f.Status = r.status[0]
			}
			if len(r.match) == 0 && len(r.all) == 0 && r.re == nil && len(r.codes) > 0 {
				f.Code, f.Message = ex, ""
			}
			if got := c.Classify(f); got.Class != r.class {
				t.Errorf("%s: example %q classified %s by %s, want %s", r.id, ex, got.Class, got.Rule, r.class)
			}
		}
		for _, ex := range r.not {
			n++
			if c.ruleMatchesExample(r, ex, buf) {
				t.Errorf("%s: 'not' text matches: %q", r.id, ex)
			}
		}
	}
	if n < 80 {
		t.Errorf("only %d rule examples", n)
	}
}

func TestClassifyEvidenceOrder(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	dnsErr := &net.DNSError{Err: "no such host", Name: "api.example.com", IsNotFound: true}
	tests := []struct {
		name string
		f    Failure
		want Classification
	}{
		{"canceled beats body", Failure{Status: 529, Message: "overloaded_error", Err: fmt.Errorf("post: %w", context.Canceled)},
			Classification{Class: Canceled, Reason: ReasonAborted, Rule: "go.context_canceled"}},
		{"deadline", Failure{Err: &url.Error{Op: "Post", URL: "https://x", Err: context.DeadlineExceeded}},
			Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.deadline_exceeded"}},
		{"econnreset", Failure{Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnreset"}},
		{"econnrefused", Failure{Err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.econnrefused"}},
		{"epipe", Failure{Err: fmt.Errorf("write: %w", syscall.EPIPE)},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.epipe"}},
		{"unexpected eof", Failure{Err: fmt.Errorf("read body: %w", io.ErrUnexpectedEOF)},
			Classification{Class: Transient, Reason: ReasonStream, Rule: "go.unexpected_eof"}},
		{"dns", Failure{Err: &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "dial", Err: dnsErr}}},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "go.dns"}},
		{"net timeout", Failure{Err: &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}},
			Classification{Class: Transient, Reason: ReasonTimeout, Rule: "go.deadline_exceeded"}},
		{"http2 goaway text", Failure{Err: errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR")},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "transient.network"}},
		{"error text when body is silent", Failure{Status: 0, Message: "<html></html>", Err: errors.New("read tcp: connection reset by peer")},
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "transient.network"}},
		{"x-should-retry true beats body", Failure{Status: 400, Message: "invalid request", Header: hdr("X-Should-Retry", "true")},
			Classification{Class: Transient, Reason: ReasonServer, Rule: "header.x-should-retry"}},
		{"x-should-retry false blocks transient", Failure{Status: 429, Message: "rate limit", Header: hdr("X-Should-Retry", "false")},
			Classification{}},
		{"x-should-retry false keeps quota", Failure{Status: 429, Message: "insufficient_quota", Header: hdr("X-Should-Retry", "false")},
			Classification{Class: Quota, Reason: ReasonQuota, Rule: "quota.exhausted"}},
		{"body beats status: 429 quota", Failure{Status: 429, Message: `{"error":{"type":"insufficient_quota"}}`},
			Classification{Class: Quota, Reason: ReasonQuota, Rule: "quota.exhausted"}},
		{"body beats status: 400 overflow", Failure{Status: 400, Message: "This model's maximum context length is 8192 tokens."},
			Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "overflow.stated"}},
		{"wrapped 503 overflow", Failure{Status: 503, Message: "Error: 503 litellm.ServiceUnavailableError: AnthropicException - prompt is too long: 210000 tokens > 200000 maximum"},
			Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "overflow.stated"}},
		{"rate limit with length is not overflow", Failure{Status: 429, Message: "Rate limit exceeded. Please reduce the prompt length or try again later."},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit"}},
		{"bare number is not a status", Failure{Message: "prompt has 140017 tokens, range [1, 2500]"}, Classification{}},
		{"status from text", Failure{Message: "API Error (529)"}, Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "status.overloaded"}},
		{"status from text: HTTP", Failure{Message: "upstream said HTTP/1.1 503"}, Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "status.overloaded"}},
		{"status from text: camel case", Failure{Message: "AI_APICallError: Bad Gateway\n statusCode: 502,\n responseBody: ''"},
			Classification{Class: Transient, Reason: ReasonServer, Rule: "transient.server"}},
		{"status from text: camel case only", Failure{Message: `{"statusCode":429,"body":"{}"}`},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "status.429"}},
		{"status code before", Failure{Message: "429 status code (no body)"}, Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "status.429"}},
		{"404 without model", Failure{Status: 404, Message: "Not Found"}, Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "status.404"}},
		{"404 with model", Failure{Status: 404, Message: "model: claude-x"}, Classification{Class: Permanent, Reason: ReasonModelNotFound, Rule: "status.404_model"}},
		{"413 bare", Failure{Status: 413}, Classification{}},
		{"413 with size wording", Failure{Status: 413, Message: "Payload Too Large"}, Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "overflow.request_too_large"}},
		{"402", Failure{Status: 402}, Classification{Class: Billing, Reason: ReasonCredits, Rule: "status.402"}},
		{"cerebras no body", Failure{Provider: "Cerebras", Status: 400, Message: "400 status code (no body)"},
			Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "cerebras.no_body_overflow"}},
		{"gateway no body", Failure{Provider: "openrouter", Status: 400, Message: "400 status code (no body)"},
			Classification{Class: Transient, Reason: ReasonServer, Rule: "transient.gateway_no_body"}},
		{"alias: dashscope", Failure{Provider: "DashScope", Status: 429, Message: "Allocated quota exceeded, please increase your quota limit."},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "qwen.allocated_quota_tpm"}},
		{"unknown provider skips guarded rules", Failure{Provider: "acme", Status: 400, Message: "400 status code (no body)"},
			Classification{Class: Transient, Reason: ReasonServer, Rule: "transient.gateway_no_body"}},
		{"retry-after header", Failure{Status: 429, Header: hdr("Retry-After", "20")},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "status.429", RetryAfter: 20 * time.Second}},
		{"quota with reset", Failure{Status: 429, At: at, Message: "You have exhausted your capacity on this model. Your quota will reset after 2h."},
			Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit", RetryAfter: 2 * time.Hour, ResetAt: at.Add(2 * time.Hour)}},
		{"short quota wait is transient", Failure{Status: 429, At: at, Message: "You have exhausted your capacity on this model. Your quota will reset after 5s."},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "quota.usage_limit.short_wait", RetryAfter: 5 * time.Second}},
		{"long rate wait is quota", Failure{Status: 429, At: at, Header: hdr("Retry-After", "7200")},
			Classification{Class: Quota, Reason: ReasonQuota, Rule: "status.429.long_wait", RetryAfter: 2 * time.Hour, ResetAt: at.Add(2 * time.Hour)}},
		{"epoch reset", Failure{Message: `{"type":"usage_limit_reached","resets_at":1767225600}`},
			Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit", ResetAt: time.Unix(1767225600, 0).UTC()}},
		{"header wait does not shorten a stated reset", Failure{Status: 429, At: at, Header: hdr("Retry-After", "5"),
			Message: "You have exhausted your capacity on this model. Your quota will reset after 8h44m7s."},
			Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit",
				RetryAfter: 8*time.Hour + 44*time.Minute + 7*time.Second, ResetAt: at.Add(8*time.Hour + 44*time.Minute + 7*time.Second)}},
		{"header wait does not shorten an absolute reset", Failure{Status: 429, At: at, Header: hdr("Retry-After", "5"),
			Message: "Claude AI usage limit reached|" + fmt.Sprint(at.Add(2*time.Hour).Unix())},
			Classification{Class: Quota, Reason: ReasonUsageLimit, Rule: "quota.usage_limit", RetryAfter: 5 * time.Second, ResetAt: at.Add(2 * time.Hour)}},
		{"retry after a timestamp", Failure{Status: 429, At: at, Message: "Too many requests. Retry after " + at.Add(30*time.Second).Format(time.RFC3339)},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 30 * time.Second}},
		{"retry after a clock time is no wait", Failure{Status: 429, At: at, Message: "Too many requests. Retry after 12:30 UTC"},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit"}},
		{"error text read before the bare status", Failure{Status: 400, Message: "Bad Request", Err: errors.New("prompt is too long: 250000 tokens > 200000 maximum")},
			Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "overflow.stated"}},
		{"a leading count is not a status", Failure{Message: "500 tokens exceeded the maximum"}, Classification{}},
		{"a gateway's 5xx around the provider's refusal", Failure{Status: 500, Message: `{"message":"upstream failed","details":[{"statusCode":400}]}`},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "status.400"}},
		{"a gateway's 5xx around a throttle stays a 5xx", Failure{Status: 502, Message: "upstream returned status code 429"},
			Classification{Class: Transient, Reason: ReasonServer, Rule: "status.5xx"}},
		{"a host's transport words around a refusal", Failure{Status: 403, Message: "I'm sorry, I encountered a connection error."},
			Classification{Class: Permanent, Reason: ReasonPermission, Rule: "status.403"}},
		{"a fault the answer names itself", Failure{Status: 400, Message: `{"status": 400, "message": "PluginInvokeError: {\"error_type\":\"ServiceUnavailableError\"}"}`},
			Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "transient.unavailable"}},
		{"a leading status before a lower-case text", Failure{Message: "404 page not found"},
			Classification{Class: Permanent, Reason: ReasonInvalidRequest, Rule: "status.404"}},
		{"admin words are no budget", Failure{Status: 503, Message: "503 Service Unavailable. If the problem persists, contact your administrator."},
			Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "transient.unavailable"}},
		{"temporarily blocked by a throttle", Failure{Status: 429, Message: "Too many requests, you have been temporarily blocked. Retry after 60 seconds"},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: time.Minute}},
		{"not available for the moment", Failure{Status: 503, Message: "The model is not available for the moment due to high load"},
			Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "transient.overloaded"}},
		{"empty", Failure{}, Classification{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Classify(tt.f), ignoreEvidence); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyError(t *testing.T) {
	if got := ClassifyError(nil); got != (Classification{}) {
		t.Errorf("nil error: %+v", got)
	}
	got := ClassifyError(fmt.Errorf("stream: %w", context.Canceled))
	if got.Class != Canceled {
		t.Errorf("canceled: %+v", got)
	}
	got = ClassifyError(errors.New(`POST "https://api.openai.com/v1/responses": 429 Too Many Requests`))
	if got.Class != Transient || got.Reason != ReasonRateLimit {
		t.Errorf("text: %+v", got)
	}
}

func TestSameProvider(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"claude", "anthropic", true}, {"Amazon-Bedrock", "bedrock", true}, {"my-proxy", "My_Proxy", true},
		{"openai", "anthropic", false}, {"my-proxy", "other", false}, {"vertex", "gemini", true},
	} {
		if got := sameProvider(tt.a, tt.b); got != tt.want {
			t.Errorf("sameProvider(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
	if n := testing.AllocsPerRun(10, func() { sameProvider("my-proxy", "anthropic") }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}

func TestProviderAliases(t *testing.T) {
	for in, want := range map[string]string{
		"amazon-bedrock": "bedrock", "AWS_Bedrock": "bedrock", "Vertex": "gemini", "google": "gemini",
		"z.ai": "zai", "GLM": "zai", "moonshot": "kimi", "Kimi": "kimi", "dashscope": "qwen", "Alibaba": "qwen",
		"github-copilot": "copilot", "LM Studio": "lmstudio", "llama.cpp": "llamacpp", "acme-ai": "acmeai", "--": "",
	} {
		if got := CanonicalProvider(in); got != want {
			t.Errorf("CanonicalProvider(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRetryAfterHeaders(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{http.Header{"retry-after-ms": {"250.5"}}, 250500 * time.Microsecond},
		{http.Header{"Retry-After": {"20"}}, 20 * time.Second},
		{http.Header{"Retry-After": {"2.5"}}, 2500 * time.Millisecond},
		{http.Header{"Retry-After": {at.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {at.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"-5"}}, 0},
		{http.Header{"Retry-After": {"NaN"}}, 0},
		{http.Header{"Retry-After": {"99999999999999999999"}}, 0},
		{http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"6m0s"}}, 6 * time.Minute},
		{http.Header{"X-Ratelimit-Remaining-Requests": {"5"}, "X-Ratelimit-Reset-Requests": {"6m0s"}}, 0},
		{http.Header{"x-ratelimit-remaining-requests": {"0"}, "x-ratelimit-reset-requests": {"20s"}}, 20 * time.Second},
		{http.Header{"Anthropic-Ratelimit-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Tokens-Reset": {at.Add(30 * time.Second).Format(time.RFC3339)}}, 30 * time.Second},
		{nil, 0},
	}
	for i, tt := range tests {
		if got := RetryAfter(tt.h, at); got != tt.want {
			t.Errorf("%d: RetryAfter(%v) = %v, want %v", i, tt.h, got, tt.want)
		}
	}
}

func TestBodyHints(t *testing.T) {
	tests := []struct {
		msg  string
		want time.Duration
	}{
		{"Please try again in 20s.", 20 * time.Second},
		{"Please retry in 2.5s", 2500 * time.Millisecond},
		{`"retryDelay": "37s"`, 37 * time.Second},
		{"Your quota will reset after 8h44m7s.", 8*time.Hour + 44*time.Minute + 7*time.Second},
		{"Try again in ~81 min.", 81 * time.Minute},
		{"Your limit resets in 16 days", 16 * 24 * time.Hour},
		{"try again in 5 days 22 hours 11 minutes", 142*time.Hour + 11*time.Minute},
		{"Please retry after 30 seconds", 30 * time.Second},
		{"retry after 30", 30 * time.Second},
		{"Please wait 17 seconds before trying again.", 17 * time.Second},
		{"Retrying in 4 seconds", 0},
		{"try again later", 0},
		{"try again in 5 months", 0},
		{"try again in 99999999999999999999 days", 0},
		{`"resets_in_seconds": 13872`, 13872 * time.Second},
		{"Rate limit reached. Please wait 2 minutes. Your usage resets in 30 days", 2 * time.Minute},
		{`Please retry in 12.5s. "retryDelay": "12s"`, 12 * time.Second},
	}
	c, err := defaultClassifier()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		ends := scanAnchors(c, tt.msg)
		if got, _, _ := bodyHints(tt.msg, &ends, time.Time{}); got != tt.want {
			t.Errorf("bodyHints(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"syntax", "rules: [", "bad.yaml:1"},
		{"unknown top key", "rule: []", `bad.yaml:1: unknown key "rule"`},
		{"unknown field", "rules:\n  - id: x\n    clas: transient\n", `bad.yaml:3: rule "x": unknown field "clas"`},
		{"bad class", "rules:\n  - id: x\n    class: flaky\n    reason: rate_limit\n    match: [a]\n", `bad.yaml:2: rule "x": class "flaky"`},
		{"reason of other class", "rules:\n  - id: x\n    class: quota\n    reason: rate_limit\n    match: [a]\n", `reason "rate_limit" does not belong to class quota`},
		{"no matcher", "rules:\n  - id: x\n    class: quota\n    reason: quota\n", "needs at least one of"},
		{"bad regex", "rules:\n  - id: x\n    class: quota\n    reason: quota\n    regex: '('\n", "regex:"},
		{"bad status", "rules:\n  - id: x\n    class: quota\n    reason: quota\n    status: [42]\n", "status 42"},
		{"bad id", "rules:\n  - id: 'a b'\n    class: quota\n    reason: quota\n    match: [a]\n", `id "a b"`},
		{"duplicate", "rules:\n  - {id: x, class: quota, reason: quota, match: [abc]}\n  - {id: x, class: quota, reason: quota, match: [bcd]}\n", `bad.yaml:3: rule "x": duplicate rule id`},
		{"example fails", "rules:\n  - id: x\n    class: quota\n    reason: quota\n    match: [out of juice]\n    examples: [nothing here]\n", `example does not match: "nothing here"`},
		{"not matches", "rules:\n  - id: x\n    class: quota\n    reason: quota\n    match: [juice]\n    not: [no juice]\n", `'not' text matches`},
		{"wrong type", "rules:\n  - id: x\n    class: quota\n    reason: quota\n    status: abc\n", `bad.yaml:5: rule "x"`},
		{"not a list", "rules: 3", "'rules' must be a list"},
		{"empty phrase", "rules:\n  - {id: x, class: quota, reason: quota, match: ['  ']}\n", "empty phrase"},
		{"unknown with a reason", "rules:\n  - {id: x, class: unknown, reason: server, match: [abc]}\n", `reason "server" does not belong to class unknown`},
		{"unknown outside its tier", "rules:\n  - {id: x, class: unknown, tier: fault, match: [abc]}\n", "class unknown and tier outside go together"},
		{"outside tier with a class", "rules:\n  - {id: x, class: transient, reason: server, tier: outside, match: [abc]}\n", "class unknown and tier outside go together"},
		{"unknown exhausted", "rules:\n  - {id: x, class: unknown, exhausted: true, match: [abc]}\n", "class unknown: exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules("bad.yaml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			var re *RuleError
			if !errors.As(err, &re) || re.File != "bad.yaml" {
				t.Errorf("error %T is not a *RuleError naming the file", err)
			}
		})
	}
}

func TestLayering(t *testing.T) {
	project, err := ParseRules("project.yaml", []byte(`rules:
  - id: acme.overflow
    class: overflow
    reason: context_window
    providers: [acme]
    match: ["model is too long for this context"]
    examples: ["model is too long for this context"]
  - id: status.429
    disabled: true
`))
	if err != nil {
		t.Fatal(err)
	}
	user, err := ParseRules("user.yaml", []byte(`rules:
  - id: acme.overflow
    class: transient
    reason: server
    match: ["model is too long for this context"]
`))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := DefaultRules()
	c, err := NewClassifier(project, user, d)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Classify(Failure{Provider: "ACME", Message: "error: model is too long for this context"})
	want := Classification{Class: Overflow, Reason: ReasonContextWindow, Rule: "acme.overflow"}
	if diff := cmp.Diff(want, got, ignoreEvidence); diff != "" {
		t.Errorf("project rule (-want +got):\n%s", diff)
	}
	// The guard keeps other providers out, and the user layer's rule of the
	// same id is hidden.
	if got := c.Classify(Failure{Provider: "openai", Message: "model is too long for this context"}); got.Class != Unknown {
		t.Errorf("other provider: %+v", got)
	}
	// status.429 is disabled by the project layer.
	if got := c.Classify(Failure{Status: 429}); got.Class != Unknown {
		t.Errorf("disabled status.429 still applies: %+v", got)
	}
	dir := t.TempDir()
	path := dir + "/rules.yaml"
	if err := os.WriteFile(path, []byte("rules:\n  - {id: x.y, class: quota, reason: budget, match: [piggy bank empty]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lc, err := LoadClassifier(dir+"/missing.yaml", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := lc.Classify(Failure{Message: "Piggy-Bank  empty"}); got.Rule != "x.y" {
		t.Errorf("LoadClassifier: %+v", got)
	}
	if _, err := LoadRuleFile(dir + "/missing.yaml"); err == nil {
		t.Error("missing file: no error")
	}
}

func TestClassStrings(t *testing.T) {
	for c := Unknown; c < numClasses; c++ {
		b, err := c.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Class
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("round trip %v: %v %v", c, back, err)
		}
	}
	if s := Class(200).String(); s != "class(200)" {
		t.Errorf("out of range: %q", s)
	}
	if _, err := Class(200).MarshalText(); err == nil {
		t.Error("marshal out of range: no error")
	}
	for r, c := range reasonClass {
		if got, ok := r.Class(); !ok || got != c {
			t.Errorf("%q.Class() = %v, %v", r, got, ok)
		}
	}
	if _, ok := Reason("bogus").Class(); ok {
		t.Error("bogus reason accepted")
	}
}

// TestStatusFromText covers the shapes a status is read in, and the bare
// numbers it is never read from.
func TestStatusFromText(t *testing.T) {
	c, err := defaultClassifier()
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]int{
		"got 429 status code":     429,
		"status code: 503":        503,
		"HTTP/2 429":              429,
		"Error code: 529 - {}":    529,
		"API error (429)":         429,
		"429":                     429,
		"Error: 404":              404,
		"  429 Too Many Requests": 429,
		"error:429":               429,
		`{"code": 400, "x"}`:      400,
		`"statusCode":502`:        502,
		"1429 status code":        0,
		"status code 4290":        0,
		"[1, 2500]":               0,
		"140017 tokens":           0,
		"http://x:503/":           0,
		"status code":             0,
		"12 status code":          0,
		"status code 429.5":       0,
		"status code 1,500":       0,
	} {
		ends := scanAnchors(c, msg)
		if got := statusFromText(msg, &ends); got != want {
			t.Errorf("statusFromText(%q) = %d, want %d", msg, got, want)
		}
	}
}

// TestWrapperStatusYieldsToQuotedRefusal checks that a 5xx wrapper, given by
// the host or leading the text, yields to the client error it quotes, and
// only to one that refuses the request.
func TestWrapperStatusYieldsToQuotedRefusal(t *testing.T) {
	for _, tt := range []struct {
		status int
		msg    string
		want   string // the rule that decides
	}{
		{0, "500: Portkey Gateway API error: 404 Not Found", "status.404"},
		{500, "Gateway API error: 404 Not Found", "status.404"},
		{502, "upstream said: status code 400", "status.400"},
		{0, "500: upstream API error (429)", "status.5xx"}, // a rate limit is no refusal
		{0, "503 Service Unavailable", "transient.unavailable"},
		{500, "HTTP 500 from the gateway", "status.5xx"},
	} {
		got := Classify(Failure{Status: tt.status, Message: tt.msg})
		if diff := cmp.Diff(tt.want, got.Rule); diff != "" {
			t.Errorf("Classify(%d, %q) rule mismatch (-want +got):\n%s", tt.status, tt.msg, diff)
		}
	}
}

// TestRefusalIgnoresFaultAndAbortWords checks that a host's retry advice
// around a 401 does not make it transient, while a 400 still reads a fault
// the answer names itself, and that a host's abort beside a refusal is no
// cancel, while a 499 or no status leaves the cancel.
func TestRefusalIgnoresFaultAndAbortWords(t *testing.T) {
	for _, tt := range []struct {
		status int
		msg    string
		want   Class
	}{
		{401, "An unexpected error occurred: Server returned 401 — the LLM endpoint may be temporarily unavailable. Try again in a moment.", Permanent},
		{407, "Internal Server Error from the proxy", Permanent},
		{400, `{"type":"error","error":{"type":"ServiceUnavailableError","message":"Service Unavailable"}}`, Transient},
		// A host's abort beside a refusal is its reaction to the answer.
		{404, "[handleAbortError] AI response error; aborting request: 404 Resource not found", Permanent},
		{0, "Operation aborted: HTTP 400 Bad Request", Permanent},
		{0, "The operation was aborted (HTTP 403)", Permanent},
		{499, "request cancelled by user", Canceled},
		{0, "Error: Request was aborted.", Canceled},
	} {
		if got := Classify(Failure{Status: tt.status, Message: tt.msg}); got.Class != tt.want {
			t.Errorf("Classify(%d, %q) = %v (%s), want %v", tt.status, tt.msg, got.Class, got.Rule, tt.want)
		}
	}
}

// TestLaterAnchorOccurrences checks that a hint is still read when the first
// occurrence of its anchor phrase carries no number.
func TestLaterAnchorOccurrences(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want Classification
	}{
		{"POST https://api.example.com/v1/chat failed: HTTP 503",
			Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "status.overloaded"}},
		{"failed to decode body; upstream code: 503",
			Classification{Class: Transient, Reason: ReasonOverloaded, Rule: "status.overloaded"}},
		{"rate limit: please wait a moment. wait 30 seconds",
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", RetryAfter: 30 * time.Second}},
		{"http://127.0.0.1:503/v1/chat: dial tcp: connection refused",
			Classification{Class: Transient, Reason: ReasonNetwork, Rule: "transient.network"}},
	} {
		if diff := cmp.Diff(tt.want, Classify(Failure{Message: tt.msg}), ignoreEvidence); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.msg, diff)
		}
	}
}

// TestStatusRulesPerLayer: a higher layer's status-only rule is tried before
// the text rules of the layers below it, and a rule with an 'unless' reads
// text.
func TestStatusRulesPerLayer(t *testing.T) {
	project, err := ParseRules("project.yaml", []byte(`rules:
  - id: myproxy.400
    class: transient
    reason: server
    providers: [myproxy]
    status: [400]
  - id: proxy.418
    class: quota
    reason: quota
    status: [418]
    unless: ["teapot drained"]
`))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := DefaultRules()
	c, err := NewClassifier(project, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify(Failure{Provider: "myproxy", Status: 400, Message: "upstream: invalid parameter"}); got.Rule != "myproxy.400" {
		t.Errorf("project status rule lost to a default text rule: %+v", got)
	}
	for _, f := range []Failure{
		{Status: 418, Message: "the teapot drained"},
		{Status: 418, Message: "the teapot drained", Err: errors.New("http error")},
	} {
		if got := c.Classify(f); got.Rule == "proxy.418" {
			t.Errorf("%+v: 'unless' ignored: %+v", f, got)
		}
	}
}

// scanAnchors scans msg with c's matcher and returns where each anchor
// phrase first ends (-1 when absent).
func scanAnchors(c *Classifier, msg string) [numAnchors]int {
	h := match.Hits{Set: make([]uint64, (c.m.NumPhrases()+63)/64)}
	var ends [numAnchors]int
	for i := range ends {
		ends[i] = -1
	}
	c.m.Scan(msg, &h, c.anchors[:], ends[:])
	return ends
}

// TestDefaultRegexRulesAreGated keeps the scan linear in practice: a default
// rule's regular expression runs only when a literal it needs (an `all`
// phrase) occurs, never on every text.
func TestDefaultRegexRulesAreGated(t *testing.T) {
	d, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.rules {
		if r.re != nil && len(r.all) == 0 {
			t.Errorf("%s:%d: rule %q runs its regex on every text: give it an `all` phrase the regex needs", d.name, r.line, r.id)
		}
	}
}

// TestOutsideTier checks that a rule of the outside tier gives Unknown with
// its id, before any other rule, any status and the word model: a tool's
// "429 Too Many Requests" says nothing of the next model request.
func TestOutsideTier(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    Failure
		want Classification
	}{
		{"tool 429", Failure{Status: 429, Message: "tool-error: search failed: HTTP Error 429: Too Many Requests"},
			Classification{Class: Unknown, Rule: "outside.tool", Evidence: EvidenceText}},
		{"mcp server", Failure{Message: "MCP error -32602: Invalid arguments for tool create_page"},
			Classification{Class: Unknown, Rule: "outside.tool", Evidence: EvidenceText}},
		{"tracing 403", Failure{Status: 403, Message: "[non-fatal] Tracing client error 403: Country, region, or territory not supported"},
			Classification{Class: Unknown, Rule: "outside.telemetry", Evidence: EvidenceText}},
		{"model request still read", Failure{Status: 429, Message: "Rate limit reached for requests"},
			Classification{Class: Transient, Reason: ReasonRateLimit, Rule: "transient.rate_limit", Evidence: EvidenceText}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Classify(tt.f)); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
	s := NewSession(Policy{})
	d := s.Decide(Outcome{Stop: StopError, Failure: Failure{Message: "tool-error: search failed: HTTP Error 429: Too Many Requests"}},
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if d.Action != Stop || !strings.Contains(d.Explain(), "no failure of a model request (outside.tool)") {
		t.Errorf("Decide: %v %q, want Stop naming outside.tool", d.Action, d.Explain())
	}
}

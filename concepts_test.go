package erradvisor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreEvidence leaves Classification.Evidence out of comparisons of
// tables written before it existed; TestEvidence checks it.
var ignoreEvidence = cmpopts.IgnoreFields(Classification{}, "Evidence")

type conceptVerdict struct {
	Class  Class
	Reason Reason
}

// TestConceptWordings checks that concepts read wordings no phrase lists:
// other word orders, inflections, filler and languages for the same ideas.
// These sentences are written for the test; the real texts the concepts were
// learnt from are in testdata/fixtures/blind_a.yaml.
func TestConceptWordings(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want conceptVerdict
	}{
		{"Your quota has been exceeded for this billing period.", conceptVerdict{Quota, ReasonQuota}},
		{"the project quota was exhausted", conceptVerdict{Quota, ReasonQuota}},
		{"当前令牌额度已用尽", conceptVerdict{Quota, ReasonQuota}},
		{"You have reached the weekly request limit of your plan.", conceptVerdict{Quota, ReasonUsageLimit}},
		{"input too long", conceptVerdict{Overflow, ReasonContextWindow}},
		{"The prompt is too long for the window of this model.", conceptVerdict{Overflow, ReasonContextWindow}},
		{"There is no room left in the context for the reply.", conceptVerdict{Overflow, ReasonContextWindow}},
		{"prompt (12,345 tokens) exceeds the model limit", conceptVerdict{Overflow, ReasonContextWindow}},
		{"you sent 9000 tokens, but the configured context is 8192", conceptVerdict{Overflow, ReasonContextWindow}},
		{"request body of 30000000 bytes exceeds the 25 MB limit", conceptVerdict{Overflow, ReasonContextWindow}},
		{"Your account balance is insufficient.", conceptVerdict{Billing, ReasonCredits}},
		{"账户已欠费，请充值后再试", conceptVerdict{Billing, ReasonCredits}},
		{"请求过于频繁，请稍后再试", conceptVerdict{Transient, ReasonRateLimit}},
		{"并发请求数超过限制", conceptVerdict{Transient, ReasonRateLimit}},
		{"当前模型 gpt-x 无可用渠道", conceptVerdict{Permanent, ReasonModelNotFound}},
		{"模型不存在", conceptVerdict{Permanent, ReasonModelNotFound}},
		{"令牌已过期或验证不正确", conceptVerdict{Permanent, ReasonAuth}},
		{"参数无效: temperature", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Your organization has been deactivated.", conceptVerdict{Quota, ReasonSuspended}},
		{"Request cancelled by the user.", conceptVerdict{Canceled, ReasonAborted}},
		{"The stream ended with an empty response.", conceptVerdict{Transient, ReasonStream}},
		{"fetch failed: other side closed", conceptVerdict{Transient, ReasonNetwork}},
		{"x509: certificate has expired or is not yet valid", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"x509: certificate signed by unknown authority", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Token count 50000 exceeds your TPM of 40000", conceptVerdict{Transient, ReasonRateLimit}},
		{"The total number of tokens in the messages (300000) exceeds the limit (262144)", conceptVerdict{Overflow, ReasonContextWindow}},
		{"请求的 token 数超过模型上下文长度", conceptVerdict{Overflow, ReasonContextWindow}},
		{"Your trial has expired. Please upgrade to continue.", conceptVerdict{Quota, ReasonUsageLimit}},
		{`Server Error: {"error":{"message":"no quota left"}}`, conceptVerdict{Quota, ReasonQuota}},
		{`upstream error: {"error":{"message":"Your credit balance is too low"}}`, conceptVerdict{Billing, ReasonCredits}},
		{"User cancelled the request", conceptVerdict{Canceled, ReasonAborted}},
		{"Model stream ended without a finish reason", conceptVerdict{Transient, ReasonStream}},
		{"Unable to reach the model provider", conceptVerdict{Transient, ReasonNetwork}},
		// Paraphrases: one meaning in the words a new provider might choose.
		{"You have used this month's allowance. Upgrade your plan to continue.", conceptVerdict{Quota, ReasonUsageLimit}},
		{"Daily token allowance used up", conceptVerdict{Quota, ReasonQuota}},
		{"今日调用次数已用完，请明天再试", conceptVerdict{Quota, ReasonQuota}},
		{"You have no credits remaining.", conceptVerdict{Billing, ReasonCredits}},
		{"The conversation no longer fits in the context. Start a new session or compact.", conceptVerdict{Overflow, ReasonContextWindow}},
		{"too many tokens in the prompt: 300123 (limit 262144)", conceptVerdict{Overflow, ReasonContextWindow}},
		{"Too many tokens in the last minute, slow down", conceptVerdict{Transient, ReasonRateLimit}},
		{"The stream was interrupted before the response completed", conceptVerdict{Transient, ReasonStream}},
		{"当前模型负载较高，请稍后重试", conceptVerdict{Transient, ReasonOverloaded}},
		{"Server disconnected without sending a response.", conceptVerdict{Transient, ReasonNetwork}},
		{"temporary failure in name resolution", conceptVerdict{Transient, ReasonNetwork}},
		{"You do not have access to this model.", conceptVerdict{Permanent, ReasonPermission}},
		{"No such deployment: my-gpt4", conceptVerdict{Permanent, ReasonModelNotFound}},
		{"Invalid value for 'temperature': must be between 0 and 2", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"You are not authorized to use this endpoint.", conceptVerdict{Permanent, ReasonPermission}},
		{"This feature is not available in your region.", conceptVerdict{Permanent, ReasonPermission}},
		{"Invalid request: messages must alternate between user and assistant", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"missing required field: messages", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{`{"error":{"type":"invalid_request_error","message":"Service temporarily unavailable"}}`, conceptVerdict{Transient, ReasonOverloaded}},
		{`Post "https://api.anthropic.com/v1/messages": EOF`, conceptVerdict{Transient, ReasonNetwork}},
		{"Spend limit reached for this API key.", conceptVerdict{Quota, ReasonBudget}},
		{"当前请求人数较多，请稍后再试", conceptVerdict{Transient, ReasonOverloaded}},
		{"模型输入token过多", conceptVerdict{Overflow, ReasonContextWindow}},
		{"llama_decode: failed to find a memory slot for batch; the KV cache is full", conceptVerdict{Overflow, ReasonContextWindow}},
		// An output budget over the model's bound: the request must ask for less; no overflow.
		{"max_tokens: 10000 tokens exceeds the model's limit of 8192 output tokens", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"The maximum tokens you requested exceeds the model limit of 32768.", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"max_new_tokens is larger than what this model allows", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Context limit reached · /compact or /clear to continue", conceptVerdict{Overflow, ReasonContextWindow}},
		// An attachment over its own bound: shrink it; compacting does not help.
		{"The uploaded image is larger than the 20 MB limit", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"图片大小超过 10MB 限制", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"attachment exceeds maximum size of 25 MB", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you are trying to call.", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"The api_key client option must be set either by passing api_key to the client or by setting the OPENAI_API_KEY environment variable", conceptVerdict{Permanent, ReasonAuth}},
		{"io.grpc.StatusRuntimeException: UNAVAILABLE: io exception", conceptVerdict{Transient, ReasonServer}},
		{`requests.exceptions.ChunkedEncodingError: ("Connection broken: InvalidChunkLength(got length b'', 0 bytes read)")`, conceptVerdict{Transient, ReasonStream}},
		{"httpx.ReadError", conceptVerdict{Transient, ReasonNetwork}},
		// Japanese and Korean, and browser and curl transport wordings.
		{"利用上限に達しました。しばらくしてから再度お試しください。", conceptVerdict{Quota, ReasonUsageLimit}},
		{"サーバーが混雑しています。しばらくしてから再試行してください。", conceptVerdict{Transient, ReasonOverloaded}},
		{"入力が長すぎます。会話を短くしてください。", conceptVerdict{Overflow, ReasonContextWindow}},
		{"APIキーが無効です。", conceptVerdict{Permanent, ReasonAuth}},
		{"残高が不足しています。", conceptVerdict{Billing, ReasonCredits}},
		{"요청이 너무 많습니다. 잠시 후 다시 시도해 주세요.", conceptVerdict{Transient, ReasonRateLimit}},
		{"유효하지 않은 API 키입니다.", conceptVerdict{Permanent, ReasonAuth}},
		{"TypeError: Invalid URL", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"net::ERR_NETWORK_CHANGED", conceptVerdict{Transient, ReasonNetwork}},
		{"net::ERR_CERT_AUTHORITY_INVALID", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Your usage has exceeded the limits of the Free plan. Upgrade to Pro for more.", conceptVerdict{Quota, ReasonUsageLimit}},
		{"Account balance is negative. Please add funds.", conceptVerdict{Billing, ReasonCredits}},
		{"Your payment method was declined. Update your billing information to continue using the API.", conceptVerdict{Billing, ReasonCredits}},
		{"The model o3-pro is only available via the Responses API.", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"This model does not support image input.", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"HTTP/2 stream 1 was not closed cleanly: PROTOCOL_ERROR (err 1)", conceptVerdict{Transient, ReasonStream}},
		{"curl: (92) HTTP/2 stream 0 was not closed cleanly: INTERNAL_ERROR (err 2)", conceptVerdict{Transient, ReasonStream}},
		{"KeyboardInterrupt", conceptVerdict{Canceled, ReasonAborted}},
		// Sizes set against their bounds, and more request, place and transport wordings.
		{`{"error":{"message":"model gpt-4.1-mini-x is not available on this server","type":"service_unavailable"}}`, conceptVerdict{Permanent, ReasonModelNotFound}},
		{"Error: tokens: 12000 > 8192", conceptVerdict{Overflow, ReasonContextWindow}},
		{"prompt has 35000 tokens; model max is 32768", conceptVerdict{Overflow, ReasonContextWindow}},
		{"Your messages exceeded the limit of 128k tokens.", conceptVerdict{Overflow, ReasonContextWindow}},
		{"input_tokens (210000) + max_tokens (64000) > context_window (200000)", conceptVerdict{Overflow, ReasonContextWindow}},
		{"Requests from this region are not permitted.", conceptVerdict{Permanent, ReasonPermission}},
		{"Model is required", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"missing `messages` parameter", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Usage cap reached. Your cap resets in 6 days.", conceptVerdict{Quota, ReasonUsageLimit}},
		{"No credits left on your account", conceptVerdict{Billing, ReasonCredits}},
		{"The connection to the server was lost. Attempting to reconnect...", conceptVerdict{Transient, ReasonNetwork}},
		{"The total length of the input and the requested output exceeds the model limit (32768).", conceptVerdict{Overflow, ReasonContextWindow}},
		{"Unsupported content type: image/heic", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"Request body is not valid JSON", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"invalid JSON in request body", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"服务暂时不可用，请稍后重试", conceptVerdict{Transient, ReasonOverloaded}},
		{"网络连接超时", conceptVerdict{Transient, ReasonTimeout}},
		{"Model is warming up, try again in 30 seconds", conceptVerdict{Transient, ReasonOverloaded}},
		{"All backends are busy; please retry", conceptVerdict{Transient, ReasonOverloaded}},
		{"No healthy upstream", conceptVerdict{Transient, ReasonOverloaded}},
		{"messages.1.content.0.tool_use.input: Input should be a valid dictionary", conceptVerdict{Permanent, ReasonInvalidRequest}},
		{"tool_use ids were found without tool_result blocks immediately after", conceptVerdict{Permanent, ReasonInvalidRequest}},
	} {
		got := Classify(Failure{Message: tt.msg})
		if diff := cmp.Diff(tt.want, conceptVerdict{got.Class, got.Reason}); diff != "" {
			t.Errorf("%q (rule %s) (-want +got):\n%s", tt.msg, got.Rule, diff)
		}
	}
}

// TestConceptsNeedOneClause checks that words of two concepts in different
// sentences do not combine.
func TestConceptsNeedOneClause(t *testing.T) {
	for _, msg := range []string{
		"Your quota is fine. The request exceeded nothing.",
		"model is too long for this context",
		"context deadline exceeded",
		"500 tokens exceeded the maximum",
		"frequency_penalty must be between -2.0 and 2.0",
		"Error: Input buffer exceeded on read",
		"The endpoint /v1/chat/completion does not exist",
		"upstream connect error or disconnect/reset before headers. reset reason: overflow",
	} {
		got := Classify(Failure{Message: msg})
		if got.Class == Quota || got.Class == Overflow || got.Reason == ReasonRateLimit || got.Reason == ReasonModelNotFound {
			t.Errorf("%q: %s/%s by %s", msg, got.Class, got.Reason, got.Rule)
		}
	}
}

// TestIdentifiersAreNotProse checks that URLs and paths are no evidence.
func TestIdentifiersAreNotProse(t *testing.T) {
	for _, msg := range []string{
		"See https://docs.example.com/errors#context-window-exceeded",
		"see https://example.com/quota-exceeded/insufficient_balance for help",
		"GET /v1/context-length-exceeded/rate-limit failed",
	} {
		got := Classify(Failure{Message: msg})
		if got.Class != Unknown {
			t.Errorf("%q: %s/%s by %s, want unknown", msg, got.Class, got.Reason, got.Rule)
		}
	}
	for _, tt := range []struct {
		msg  string
		want Class
	}{
		{"429 Rate limit reached. Request id: req_context_length_exceeded_abc", Transient},
		// "Bad request" is read (a 400 in words); the link's anchor is not.
		{"Bad request. See https://docs.example.com/errors#context-window-exceeded", Permanent},
		{`{"id": "chatcmpl-quota-exceeded-1", "error": {"message": "Internal server error"}}`, Transient},
		{"request_id=insufficient_balance_77 upstream said: bad gateway", Transient},
	} {
		if got := Classify(Failure{Message: tt.msg}); got.Class != tt.want {
			t.Errorf("%q: %s/%s by %s, want %s", tt.msg, got.Class, got.Reason, got.Rule, tt.want)
		}
	}
	// Text after an identifier is still read.
	got := Classify(Failure{Message: "POST https://api.example.com/v1/chat: prompt is too long"})
	if got.Class != Overflow {
		t.Errorf("text after a URL: %s by %s", got.Class, got.Rule)
	}
}

// TestTiers checks that layers merge within a tier: a user rule that reads
// only the status never beats a default rule that reads the text, and a
// rule that names a stronger tier does.
func TestTiers(t *testing.T) {
	user, err := ParseRules("user.yaml", []byte(`rules:
  - id: proxy.bad_request
    class: permanent
    reason: invalid_request
    status: [400]
`))
	if err != nil {
		t.Fatal(err)
	}
	project, err := ParseRules("project.yaml", []byte(`rules:
  - id: acme.busy_is_quota
    tier: provider
    class: quota
    reason: quota
    match: ["server is busy"]
    examples: ["The server is busy."]
`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClassifier(project, user, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f        Failure
		wantRule string
	}{
		{Failure{Status: 400, Message: "This model's maximum context length is 8192 tokens."}, "overflow.stated"},
		{Failure{Status: 400, Message: "something odd"}, "proxy.bad_request"},
		{Failure{Status: 503, Message: "The server is busy."}, "acme.busy_is_quota"},
	} {
		if got := c.Classify(tt.f); got.Rule != tt.wantRule {
			t.Errorf("%+v: rule %s, want %s", tt.f, got.Rule, tt.wantRule)
		}
	}
	infos := user.Rules()
	if len(infos) != 1 || infos[0].Tier != "status" {
		t.Errorf("user rule info: %+v", infos)
	}
	if _, err := ParseRules("bad.yaml", []byte("rules:\n  - {id: x, tier: urgent, class: quota, reason: quota, match: [a]}\n")); err == nil {
		t.Error("unknown tier accepted")
	}
}

// TestUserConcepts checks that a rule file extends a default concept and
// names concepts of its own.
func TestUserConcepts(t *testing.T) {
	set, err := ParseRules("user.yaml", []byte(`concepts:
  quota: [allotment]
  piggy: [piggy bank]
rules:
  - id: acme.piggy
    class: billing
    reason: credits
    clause: ["piggy + lack"]
    examples: ["the piggy bank is out of coins"]
    not: ["the piggy bank is full. nothing is out of place"]
`))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := DefaultRules()
	c, err := NewClassifier(set, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Classify(Failure{Message: "your allotment was exhausted"}); got.Class != Quota {
		t.Errorf("extended concept: %+v", got)
	}
	if got := Classify(Failure{Message: "your allotment was exhausted"}); got.Class == Quota {
		t.Errorf("the defaults changed: %+v", got)
	}
	for _, bad := range []string{
		"rules:\n  - {id: x, class: quota, reason: quota, clause: [\"nosuch + excess\"]}\n",
		"concepts: [a]\nrules: []\n",
		"concepts:\n  Bad-Name: [a]\n",
		"concepts:\n  x: []\n",
		"rules:\n  - {id: x, class: quota, reason: quota, clause: [\"quota + \"]}\n",
	} {
		if _, err := ParseRules("bad.yaml", []byte(bad)); err == nil {
			t.Errorf("accepted: %q", bad)
		}
	}
}

// TestEvidence checks what kind of evidence each conceptVerdict names.
func TestEvidence(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    Failure
		want Evidence
	}{
		{"none", Failure{Message: "something odd"}, EvidenceNone},
		{"status", Failure{Status: 503}, EvidenceStatus},
		{"status from text", Failure{Message: "HTTP 503"}, EvidenceStatus},
		{"text", Failure{Status: 429, Message: "insufficient_quota"}, EvidenceText},
		{"concept", Failure{Message: "额度已用尽"}, EvidenceText},
		{"code", Failure{Provider: "zai", Status: 429, Code: "1113"}, EvidenceCode},
		{"header", Failure{Status: 400, Message: "bad", Header: map[string][]string{"X-Should-Retry": {"true"}}}, EvidenceHeader},
		{"chain", Failure{Message: "rate limit", Err: fmt.Errorf("post: %w", context.Canceled)}, EvidenceChain},
	} {
		if got := Classify(tt.f).Evidence; got != tt.want {
			t.Errorf("%s: evidence %s, want %s", tt.name, got, tt.want)
		}
	}
	if got := Evidence(200).String(); got != "evidence(200)" {
		t.Errorf("out of range: %q", got)
	}
	var names []string
	for e := EvidenceNone; e < numEvidence; e++ {
		names = append(names, e.String())
	}
	if diff := cmp.Diff("none words status text code header chain", strings.Join(names, " ")); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

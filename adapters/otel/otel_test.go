package otel_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	advisor "github.com/erradvisor/erradvisor/adapters/otel"
	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.yaml.in/yaml/v3"
)

// readYAML decodes the fixture file name of testdata into v.
func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestProviderName(t *testing.T) {
	var cases []struct {
		ID     string `yaml:"id"`
		Want   string `yaml:"want"`
		Source string `yaml:"source"`
	}
	readYAML(t, "providers.yaml", &cases)
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	got, want := map[string]string{}, map[string]string{}
	for _, c := range cases {
		if c.Source == "" {
			t.Errorf("%q: no source", c.ID)
		}
		got[c.ID], want[c.ID] = advisor.ProviderName(c.ID), c.Want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProviderName (-want +got):\n%s", diff)
	}
}

// recorder returns a tracer whose ended spans land in the returned
// recorder.
func recorder() (trace.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return tp.Tracer("test"), rec
}

// attrs flattens attributes into key → value text, the form the fixtures
// use.
func attrs(kv []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kv))
	for _, a := range kv {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

type failureCase struct {
	Name     string            `yaml:"name"`
	Source   string            `yaml:"source"`
	Comment  string            `yaml:"comment"`
	Provider string            `yaml:"provider"`
	Model    string            `yaml:"model"`
	Status   int               `yaml:"status"`
	Headers  map[string]string `yaml:"headers"`
	Body     string            `yaml:"body"`
	Secret   string            `yaml:"secret"`
	Want     struct {
		Attributes map[string]string `yaml:"attributes"`
		Status     string            `yaml:"status"`
	} `yaml:"want"`
}

// TestRecordDecision decides each real failure with a Conservative session
// and records it on a span of the SDK, as a host would.
func TestRecordDecision(t *testing.T) {
	var cases []failureCase
	readYAML(t, "failures.yaml", &cases)
	now := time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Source == "" {
				t.Error("no source")
			}
			h := http.Header{}
			for k, v := range c.Headers {
				h.Set(k, v)
			}
			o := erradvisor.Outcome{Stop: erradvisor.StopError, Failure: erradvisor.Failure{
				Provider: c.Provider, Model: c.Model, Status: c.Status, Message: c.Body, Header: h, At: now,
			}}
			d := erradvisor.NewSession(erradvisor.Conservative()).Decide(o, now)

			tracer, rec := recorder()
			_, span := tracer.Start(context.Background(), "chat "+c.Model,
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(advisor.OutcomeAttributes(o)...))
			advisor.RecordDecision(span, d)
			span.End()

			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			got := attrs(s.Attributes())
			if diff := cmp.Diff(c.Want.Attributes, got); diff != "" {
				t.Errorf("span attributes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.Want.Status, s.Status().Code.String()); diff != "" {
				t.Errorf("span status (-want +got):\n%s", diff)
			}
			if d.Action == erradvisor.Stop && s.Status().Description != d.Explain() {
				t.Errorf("status description %q, want %q", s.Status().Description, d.Explain())
			}
			evs := s.Events()
			if len(evs) != 1 || evs[0].Name != advisor.DecisionEvent {
				t.Fatalf("events %v, want one %s", evs, advisor.DecisionEvent)
			}
			if diff := cmp.Diff(attrs(advisor.DecisionAttributes(d)), attrs(evs[0].Attributes)); diff != "" {
				t.Errorf("event attributes (-want +got):\n%s", diff)
			}
			if c.Secret != "" {
				for k, v := range got {
					if strings.Contains(v, c.Secret) {
						t.Errorf("attribute %s = %q quotes the body", k, v)
					}
				}
				if strings.Contains(s.Status().Description, c.Secret) {
					t.Errorf("status description %q quotes the body", s.Status().Description)
				}
			}
		})
	}
}

// TestRecordDecisionSequence records a streak on one span: two retries and
// the success that ends it. The span keeps every decision as an event and
// ends with the last one's attributes.
func TestRecordDecisionSequence(t *testing.T) {
	const overloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	now := time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC)
	s := erradvisor.NewSession(erradvisor.Conservative())
	tracer, rec := recorder()
	_, span := tracer.Start(context.Background(), "invoke_agent")
	fail := erradvisor.Outcome{Stop: erradvisor.StopError, Failure: erradvisor.Failure{Provider: "anthropic", Status: 529, Message: overloaded}}
	for _, o := range []erradvisor.Outcome{fail, fail, {Provider: "anthropic", Content: erradvisor.ContentText}} {
		advisor.RecordDecision(span, s.Decide(o, now))
		now = now.Add(5 * time.Second)
	}
	span.End()
	sp := rec.Ended()[0]
	type ev struct {
		Name  string
		Attrs map[string]string
	}
	var got []ev
	for _, e := range sp.Events() {
		got = append(got, ev{e.Name, attrs(e.Attributes)})
	}
	retry := func(n int, delay string) ev {
		return ev{advisor.DecisionEvent, map[string]string{
			"erradvisor.action": "retry", "erradvisor.cause": "retryable",
			"erradvisor.retry.attempt": string(rune('0' + n)), "erradvisor.retry.max": "3", "erradvisor.retry.delay_ms": delay,
			"error.type": "transient.overloaded", "erradvisor.class": "transient", "erradvisor.reason": "overloaded",
			"erradvisor.rule": "transient.overloaded",
		}}
	}
	want := []ev{
		retry(1, "2000"), retry(2, "4000"),
		{advisor.DecisionEvent, map[string]string{"erradvisor.action": "none", "erradvisor.cause": "success"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if sp.Status().Code != codes.Unset {
		t.Errorf("status %v, want Unset", sp.Status())
	}
}

// TestRecordDecisionStops covers the stops and compactions that are not a
// failed request: a refusal, an unknown stop reason, a context-window stop.
func TestRecordDecisionStops(t *testing.T) {
	now := time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		stop   erradvisor.StopReason
		want   map[string]string
		status codes.Code
	}{{
		stop: erradvisor.StopRefused,
		want: map[string]string{
			"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
			"gen_ai.response.finish_reasons": `["content_filter"]`,
			"erradvisor.action":              "stop", "erradvisor.cause": "refused",
			"error.type": "stop.refused", "erradvisor.class": "permanent", "erradvisor.reason": "content_policy",
			"erradvisor.rule": "stop.refused",
		},
		status: codes.Error,
	}, {
		stop: erradvisor.StopUnknown,
		want: map[string]string{
			"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
			"gen_ai.response.finish_reasons": `["unknown"]`,
			"erradvisor.action":              "stop", "erradvisor.cause": "unknown_stop", "error.type": "unknown_stop",
		},
		status: codes.Error,
	}, {
		stop: erradvisor.StopContextWindow,
		want: map[string]string{
			"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
			"gen_ai.response.finish_reasons": `["context_window"]`,
			"erradvisor.action":              "compact", "erradvisor.cause": "overflow", "erradvisor.compaction": "overflow",
			"error.type": "stop.context_window", "erradvisor.class": "overflow", "erradvisor.reason": "context_window",
			"erradvisor.rule": "stop.context_window",
		},
		status: codes.Unset,
	}}
	for _, tt := range tests {
		t.Run(tt.stop.String(), func(t *testing.T) {
			o := erradvisor.Outcome{Stop: tt.stop, Provider: "anthropic", Model: "claude-sonnet-4-5", CurrentModel: "claude-sonnet-4-5", Content: erradvisor.ContentNone}
			d := erradvisor.NewSession(erradvisor.Conservative()).Decide(o, now)
			tracer, rec := recorder()
			_, span := tracer.Start(context.Background(), "chat", trace.WithAttributes(advisor.OutcomeAttributes(o)...))
			advisor.RecordDecision(span, d)
			span.End()
			sp := rec.Ended()[0]
			if diff := cmp.Diff(tt.want, attrs(sp.Attributes())); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
			if sp.Status().Code != tt.status {
				t.Errorf("status %v, want %v", sp.Status().Code, tt.status)
			}
		})
	}
}

func TestRecordDecisionNoSpan(t *testing.T) {
	d := erradvisor.Decision{Action: erradvisor.Stop, Cause: erradvisor.CauseQuota}
	advisor.RecordDecision(nil, d)
	_, span := noop.NewTracerProvider().Tracer("t").Start(context.Background(), "x")
	advisor.RecordDecision(span, d)
	span.End()
}

func TestFinishReason(t *testing.T) {
	got := map[string]string{}
	for s := erradvisor.StopEndTurn; s <= erradvisor.StopUnknown+1; s++ {
		got[s.String()] = advisor.FinishReason(s)
	}
	want := map[string]string{
		"stop": "stop", "length": "length", "toolUse": "tool_call", "error": "error", "aborted": "aborted",
		"refused": "content_filter", "paused": "paused", "contextWindow": "context_window", "unknown": "unknown",
		erradvisor.StopReason(erradvisor.StopUnknown + 1).String(): "unknown",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FinishReason (-want +got):\n%s", diff)
	}
}

func TestClassificationAttributes(t *testing.T) {
	reset := time.Date(2026, 4, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		c    erradvisor.Classification
		want map[string]string
	}{
		{erradvisor.Classification{}, map[string]string{"error.type": "_OTHER", "erradvisor.class": "unknown"}},
		{erradvisor.Classification{Class: erradvisor.Transient, Reason: erradvisor.ReasonRateLimit, RetryAfter: 1500 * time.Millisecond},
			map[string]string{"error.type": "rate_limit", "erradvisor.class": "transient", "erradvisor.reason": "rate_limit", "erradvisor.retry_after_ms": "1500"}},
		{erradvisor.Classification{Class: erradvisor.Quota, Reason: erradvisor.ReasonUsageLimit, Rule: "codex.usage_limit", ResetAt: reset},
			map[string]string{"error.type": "codex.usage_limit", "erradvisor.class": "quota", "erradvisor.reason": "usage_limit",
				"erradvisor.rule": "codex.usage_limit", "erradvisor.reset_at": "2026-03-31T23:00:00Z"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, attrs(advisor.ClassificationAttributes(tt.c))); diff != "" {
			t.Errorf("ClassificationAttributes(%+v) (-want +got):\n%s", tt.c, diff)
		}
	}
}

func TestFailureAttributes(t *testing.T) {
	f := erradvisor.Failure{
		Provider: "amazon-bedrock", Model: "anthropic.claude-3-5-sonnet", Status: 429,
		Code: "ThrottlingException", Message: "Too many tokens, please wait before trying again.",
		Header: http.Header{"X-Amzn-Requestid": {"ca47a5ce-e260-4824-aa0e-2e62669d5d6e"}},
	}
	want := map[string]string{"gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": "anthropic.claude-3-5-sonnet", "http.response.status_code": "429"}
	if diff := cmp.Diff(want, attrs(advisor.FailureAttributes(f))); diff != "" {
		t.Errorf("FailureAttributes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{}, attrs(advisor.FailureAttributes(erradvisor.Failure{}))); diff != "" {
		t.Errorf("FailureAttributes of the zero Failure (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"gen_ai.system": "gcp.vertex_ai"}, attrs(advisor.LegacyAttributes("vertex"))); diff != "" {
		t.Errorf("LegacyAttributes (-want +got):\n%s", diff)
	}
	if got := advisor.LegacyAttributes(""); got != nil {
		t.Errorf("LegacyAttributes(\"\") = %v, want nil", got)
	}
}

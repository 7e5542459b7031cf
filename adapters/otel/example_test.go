package otel_test

import (
	"context"
	"fmt"
	"time"

	"github.com/erradvisor/erradvisor"
	advisor "github.com/erradvisor/erradvisor/adapters/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Record a decision on the span of the model call, and count it. Here the
// provider answered 529 overloaded_error; the Session decides a retry.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("my-agent")
	metrics, _ := advisor.NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))

	s := erradvisor.NewSession(erradvisor.Conservative())
	now := time.Now()
	o := erradvisor.Outcome{Stop: erradvisor.StopError, Failure: erradvisor.Failure{
		Provider: "anthropic", Model: "claude-sonnet-4-5", Status: 529,
		Message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	}}

	ctx, span := tracer.Start(context.Background(), "chat claude-sonnet-4-5",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(advisor.OutcomeAttributes(o)...))
	d := s.Decide(o, now)
	advisor.RecordDecision(span, d)
	metrics.Record(ctx, o, d)
	span.End()

	for _, kv := range rec.Ended()[0].Attributes() {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.Emit())
	}
	// Output:
	// gen_ai.provider.name=anthropic
	// gen_ai.request.model=claude-sonnet-4-5
	// http.response.status_code=529
	// gen_ai.response.finish_reasons=["error"]
	// erradvisor.action=retry
	// erradvisor.cause=retryable
	// erradvisor.retry.attempt=1
	// erradvisor.retry.max=3
	// erradvisor.retry.delay_ms=2000
	// error.type=transient.overloaded
	// erradvisor.class=transient
	// erradvisor.reason=overloaded
	// erradvisor.rule=transient.overloaded
}

// Spell a host's provider ids as gen_ai.provider.name does.
func ExampleProviderName() {
	for _, id := range []string{"amazon-bedrock", "vertex", "google", "azure", "xai", "mistral", "openrouter"} {
		fmt.Println(id, "→", advisor.ProviderName(id))
	}
	// Output:
	// amazon-bedrock → aws.bedrock
	// vertex → gcp.vertex_ai
	// google → gcp.gemini
	// azure → azure.ai.openai
	// xai → x_ai
	// mistral → mistral_ai
	// openrouter → openrouter
}

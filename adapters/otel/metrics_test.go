package otel_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/erradvisor/erradvisor"
	advisor "github.com/erradvisor/erradvisor/adapters/otel"
	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// series flattens the collected sums into "metric{k=v,...}" → value.
func series(t *testing.T, rm metricdata.ResourceMetrics) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != advisor.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, advisor.ScopeName)
		}
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Errorf("%s: data %T, want a Sum[int64]", m.Name, m.Data)
				continue
			}
			if !sum.IsMonotonic {
				t.Errorf("%s: not monotonic", m.Name)
			}
			for _, dp := range sum.DataPoints {
				var kv []string
				for _, a := range dp.Attributes.ToSlice() {
					kv = append(kv, string(a.Key)+"="+a.Value.Emit())
				}
				sort.Strings(kv)
				out[m.Name+"{"+strings.Join(kv, ",")+"}"] += dp.Value
			}
		}
	}
	return out
}

// TestMetrics runs a conversation through a Conservative session (the
// failure bodies are the API's, as in testdata/failures.yaml) and reads the
// counters back with a ManualReader.
func TestMetrics(t *testing.T) {
	const (
		// https://github.com/anthropics/anthropic-sdk-typescript/issues/616
		overloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
		// https://github.com/earendil-works/pi/issues/102
		tooLong = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`
		// https://github.com/anthropics/claude-code/issues/4684
		credits = `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	m, err := advisor.NewMetrics(mp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC)
	s := erradvisor.NewSession(erradvisor.Conservative())
	fail := func(status int, body string) erradvisor.Outcome {
		return erradvisor.Outcome{Stop: erradvisor.StopError, Model: "claude-sonnet-4-5", CurrentModel: "claude-sonnet-4-5",
			Failure: erradvisor.Failure{Provider: "anthropic", Status: status, Message: body}}
	}
	ok := func(stop erradvisor.StopReason) erradvisor.Outcome {
		return erradvisor.Outcome{Stop: stop, Provider: "anthropic", Model: "claude-sonnet-4-5", CurrentModel: "claude-sonnet-4-5", Content: erradvisor.ContentText}
	}
	tenant := attribute.String("tenant", "acme")
	// One user message per line.
	for _, turns := range [][]erradvisor.Outcome{
		{fail(529, overloaded), fail(529, overloaded), ok(erradvisor.StopEndTurn)}, // two retries, then success
		{fail(400, tooLong), ok(erradvisor.StopEndTurn)},                           // compact, then the fresh attempt
		{fail(400, credits)},         // stop: billing
		{ok(erradvisor.StopRefused)}, // stop: refused, not a failure
		{ok(erradvisor.StopToolUse), {Stop: erradvisor.StopAborted}}, // nothing to count
	} {
		s.UserMessage(now)
		for _, o := range turns {
			m.Record(ctx, o, s.Decide(o, now), tenant)
			now = now.Add(time.Minute)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	const target = "gen_ai.provider.name=anthropic,gen_ai.request.model=claude-sonnet-4-5,"
	want := map[string]int64{
		"erradvisor.failures{erradvisor.class=transient,erradvisor.reason=overloaded," + target + "tenant=acme}":     2,
		"erradvisor.failures{erradvisor.class=overflow,erradvisor.reason=context_window," + target + "tenant=acme}":  1,
		"erradvisor.failures{erradvisor.class=billing,erradvisor.reason=credits," + target + "tenant=acme}":          1,
		"erradvisor.retries{erradvisor.class=transient,erradvisor.reason=overloaded," + target + "tenant=acme}":      2,
		"erradvisor.compactions{erradvisor.cause=overflow,erradvisor.compaction=overflow," + target + "tenant=acme}": 1,
		"erradvisor.stops{erradvisor.cause=quota,erradvisor.class=billing," + target + "tenant=acme}":                1,
		"erradvisor.stops{erradvisor.cause=refused,erradvisor.class=permanent," + target + "tenant=acme}":            1,
	}
	if diff := cmp.Diff(want, series(t, rm)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestMetricsNil(t *testing.T) {
	m, err := advisor.NewMetrics(nil)
	if err != nil || m == nil {
		t.Fatalf("NewMetrics(nil) = %v, %v", m, err)
	}
	d := erradvisor.Decision{Action: erradvisor.Stop, Cause: erradvisor.CauseQuota}
	m.Record(context.Background(), erradvisor.Outcome{Stop: erradvisor.StopError}, d)
	var none *advisor.Metrics
	none.Record(context.Background(), erradvisor.Outcome{}, d)
}

package otel

import (
	"context"
	"errors"

	"github.com/erradvisor/erradvisor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the meter NewMetrics creates.
const ScopeName = "github.com/erradvisor/erradvisor/adapters/otel"

// DecisionEvent is the name of the span event RecordDecision adds.
const DecisionEvent = "erradvisor.decision"

// RecordDecision records d on span: it sets DecisionAttributes(d) on the
// span (so the span ends with the latest decision's attributes), adds an
// event named DecisionEvent with the same attributes (so a span that
// covers several attempts keeps each decision), and, for a Stop, sets the
// span's status to Error with d.Explain() as its description (Explain never
// quotes provider text). A nil or non-recording span is left alone.
//
// Call it after Session.Decide, on the span of the turn or of the model
// call; OutcomeAttributes adds the provider, the model and the finish
// reason.
func RecordDecision(span trace.Span, d erradvisor.Decision) {
	if span == nil || !span.IsRecording() {
		return
	}
	kv := DecisionAttributes(d)
	span.SetAttributes(kv...)
	span.AddEvent(DecisionEvent, trace.WithAttributes(kv...))
	if d.Action == erradvisor.Stop {
		span.SetStatus(codes.Error, d.Explain())
	}
}

// Metric names and units. Each counter's attributes are listed beside it;
// all of them also carry gen_ai.provider.name and gen_ai.request.model when
// the Outcome names them, and the attributes given to Record.
const (
	// FailuresMetric counts failed requests (Outcome.Stop is StopError),
	// by erradvisor.class and erradvisor.reason.
	FailuresMetric = "erradvisor.failures"
	// RetriesMetric counts Retry decisions, by erradvisor.class and
	// erradvisor.reason.
	RetriesMetric = "erradvisor.retries"
	// StopsMetric counts Stop decisions, by erradvisor.cause and
	// erradvisor.class.
	StopsMetric = "erradvisor.stops"
	// CompactionsMetric counts Compact decisions, by erradvisor.cause and
	// erradvisor.compaction.
	CompactionsMetric = "erradvisor.compactions"
)

// Metrics holds the counters of failures, retries, stops and compactions.
// Build it once with NewMetrics and share it: it is immutable and safe for
// concurrent use.
type Metrics struct {
	failures, retries, stops, compactions metric.Int64Counter
}

// NewMetrics creates the counters with a meter of mp named ScopeName. A nil
// mp gives Metrics that record nothing. The error joins the errors of the
// counters that could not be created; the others still work.
func NewMetrics(mp metric.MeterProvider) (*Metrics, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	m := &Metrics{}
	var errs []error
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil {
			errs = append(errs, err)
			c = noop.Int64Counter{}
		}
		*dst = c
	}
	counter(&m.failures, FailuresMetric, "{failure}", "Failed model requests, by erradvisor class and reason.")
	counter(&m.retries, RetriesMetric, "{retry}", "Retries decided after a failed model request, by erradvisor class and reason.")
	counter(&m.stops, StopsMetric, "{stop}", "Turns stopped instead of retried or continued, by erradvisor cause.")
	counter(&m.compactions, CompactionsMetric, "{compaction}", "Compactions decided after an overflow or an over-full turn, by erradvisor cause.")
	return m, errors.Join(errs...)
}

// Record counts the Decision d that Session.Decide gave for the Outcome o:
// a failure when o failed, and a retry, a stop or a compaction by d's
// Action. attrs are added to every measurement; keep them low-cardinality
// (a tenant, never a request id). A nil *Metrics records nothing.
//
// The metric attributes are a subset of the span's: no rule id, no reset
// time, no delay, so the number of series stays small.
func (m *Metrics) Record(ctx context.Context, o erradvisor.Outcome, d erradvisor.Decision, attrs ...attribute.KeyValue) {
	if m == nil {
		return
	}
	provider, model := o.Provider, o.Model
	if o.Failure.Provider != "" {
		provider = o.Failure.Provider
	}
	if o.Failure.Model != "" {
		model = o.Failure.Model
	}
	base := appendTarget(make([]attribute.KeyValue, 0, len(attrs)+5), provider, model, 0)
	base = append(base, attrs...)
	with := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		all := make([]attribute.KeyValue, 0, len(base)+len(kv))
		return metric.WithAttributes(append(append(all, base...), kv...)...)
	}
	c := d.Classification
	class := ClassKey.String(c.Class.String())
	verdict := []attribute.KeyValue{class}
	if c.Reason != "" {
		verdict = append(verdict, ReasonKey.String(string(c.Reason)))
	}
	if o.Stop == erradvisor.StopError {
		m.failures.Add(ctx, 1, with(verdict...))
	}
	switch d.Action {
	case erradvisor.Retry:
		m.retries.Add(ctx, 1, with(verdict...))
	case erradvisor.Stop:
		if hasVerdict(d) {
			m.stops.Add(ctx, 1, with(CauseKey.String(d.Cause.String()), class))
		} else {
			m.stops.Add(ctx, 1, with(CauseKey.String(d.Cause.String())))
		}
	case erradvisor.Compact:
		m.compactions.Add(ctx, 1, with(CauseKey.String(d.Cause.String()), CompactionKey.String(string(d.Compaction))))
	}
}

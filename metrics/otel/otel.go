// Package ratelimitotel exports the decisions of ratelimit limiters as OpenTelemetry
// metrics, through the limiters' [ratelimit.Observer], the same hook that
// package ratelimitprom (metrics/prometheus) uses.
//
// Its name is not OpenTelemetry's, so the two sit side by side:
//
//	import ratelimitotel "github.com/ratelimit-go/ratelimit/metrics/otel"
//
//	m, err := ratelimitotel.New(otel.GetMeterProvider())
//	if err != nil { ... }
//	api, err := ratelimit.New(store, ratelimit.PerMinute(100),
//		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
//
// It records, on the meter named [ScopeName]:
//
//	ratelimit.requests        counter    {request}  ratelimit.limiter, ratelimit.policy, ratelimit.result, ratelimit.source
//	ratelimit.store.duration  histogram  s          ratelimit.limiter
//	ratelimit.breaker.state   gauge      {state}    ratelimit.limiter
//	ratelimit.store.misconfigured  counter  {request}  ratelimit.limiter
//
// The names follow OpenTelemetry's semantic-convention style (a dotted
// namespace, units in UCUM, the count of a thing as its plural, as in
// ASP.NET Core's aspnetcore.rate_limiting.requests). ratelimit.result is
// "allowed", "denied", "dry_run_denied" or "error" ([ratelimit.Outcome]);
// ratelimit.source is what decided ([ratelimit.Source]); the breaker state
// is 0 closed, 1 open, 2 half-open ([ratelimit.BreakerState]).
//
// Attribute values are bounded, as in package metrics/prometheus: limiter
// and policy are names from configuration ([ratelimit.WithName],
// [ratelimit.Policy]), never request data, and no attribute holds a key, an
// address or anything else a client sends. A limiter makes at most
// policies × 4 results × 4 sources request series, 1 histogram, 1 gauge and
// 1 misconfiguration counter, which counts the decisions a misconfigured
// store failed ([ratelimit.ErrMisconfiguredStore]: an answer no retry can
// fix, such as MOVED from a single-node client).
package ratelimitotel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratelimit-go/ratelimit"
)

// ScopeName is the instrumentation scope (the meter's name) of the
// metrics.
const ScopeName = "github.com/ratelimit-go/ratelimit/metrics/otel"

// Attribute keys of the metrics.
const (
	LimiterKey = attribute.Key("ratelimit.limiter") // the limiter's name
	PolicyKey  = attribute.Key("ratelimit.policy")  // the policy's name
	ResultKey  = attribute.Key("ratelimit.result")  // a ratelimit.Outcome
	SourceKey  = attribute.Key("ratelimit.source")  // a ratelimit.Source
)

// StoreBuckets are the explicit bucket boundaries, in seconds, advised for
// ratelimit.store.duration: from 100 µs, a Redis round trip on a quiet LAN,
// to 250 ms, past the 100 ms default time budget
// (100 ms, the default of ratelimit.WithTimeout), as in package metrics/prometheus.
var StoreBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25}

// outcomes and sources bound the series made ahead for each limiter and
// policy; a value past them (from a newer core) is recorded as it comes.
const (
	outcomes = 4
	sources  = 4
)

// Metrics turns the decisions of limiters into OpenTelemetry metrics. Give
// each limiter its [Metrics.Observer]. A Metrics is safe for concurrent use
// by multiple goroutines.
type Metrics struct {
	requests metric.Int64Counter
	latency  metric.Float64Histogram
	breaker  metric.Int64Gauge
	misconf  metric.Int64Counter

	limiters sync.Map // limiter name -> *limiterSeries
}

// limiterSeries holds the prepared measurement options of one limiter, so
// that recording a decision builds no attribute set.
type limiterSeries struct {
	name     string
	latency  []metric.RecordOption
	misconf  []metric.AddOption
	policies sync.Map // policy name -> *policySeries
}

// policySeries holds the request options of one limiter and policy, by
// outcome and source.
type policySeries struct {
	limiter *limiterSeries
	policy  string
	add     [outcomes][sources][]metric.AddOption
}

// New returns Metrics that record on a meter of provider named
// [ScopeName]. Pass otel.GetMeterProvider() for the global provider. A nil
// provider is an error, and so is an instrument the meter refuses.
func New(provider metric.MeterProvider) (*Metrics, error) {
	if provider == nil {
		return nil, errors.New("ratelimit: metrics/otel: New: nil MeterProvider")
	}
	meter := provider.Meter(ScopeName)
	requests, err := meter.Int64Counter("ratelimit.requests",
		metric.WithUnit("{request}"),
		metric.WithDescription("Requests decided by a rate limiter, by limiter, policy, result and what decided."))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: metrics/otel: New: %w", err)
	}
	latency, err := meter.Float64Histogram("ratelimit.store.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time a rate limiter's decision spent in its store call, including calls that failed or ran out of time."),
		metric.WithExplicitBucketBoundaries(StoreBuckets...))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: metrics/otel: New: %w", err)
	}
	breaker, err := meter.Int64Gauge("ratelimit.breaker.state",
		metric.WithUnit("{state}"),
		metric.WithDescription("State of a rate limiter's circuit breaker: 0 closed, 1 open, 2 half-open."))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: metrics/otel: New: %w", err)
	}
	misconf, err := meter.Int64Counter("ratelimit.store.misconfigured",
		metric.WithUnit("{request}"),
		metric.WithDescription("Decisions a misconfigured store failed: answers no retry can fix, such as MOVED, NOAUTH or WRONGTYPE."))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: metrics/otel: New: %w", err)
	}
	return &Metrics{requests: requests, latency: latency, breaker: breaker, misconf: misconf}, nil
}

// Observer returns the observer to give a limiter with
// [ratelimit.WithObserver]. It never asks for keys ([ratelimit.Observer].Keys
// stays false). Each call returns an observer with its own cache of the
// series last used, so give each limiter its own call.
func (m *Metrics) Observer() ratelimit.Observer {
	var last atomic.Pointer[policySeries]
	return ratelimit.Observer{
		Decision: func(d ratelimit.Decision) {
			p := last.Load()
			if p == nil || p.limiter.name != d.Limiter || p.policy != d.Policy {
				p = m.series(d.Limiter, d.Policy)
				last.Store(p)
			}
			m.observe(p, d)
		},
		BreakerChange: m.breakerChange,
	}
}

// observe records d in the series p of its limiter and policy.
func (m *Metrics) observe(p *policySeries, d ratelimit.Decision) {
	ctx := context.Background()
	if d.Request != nil {
		ctx = d.Request.Context()
	}
	o, s := int(d.Outcome), int(d.Source)
	if o >= 0 && o < outcomes && s >= 0 && s < sources {
		m.requests.Add(ctx, 1, p.add[o][s]...)
	} else {
		m.requests.Add(ctx, 1, metric.WithAttributes(LimiterKey.String(d.Limiter),
			PolicyKey.String(d.Policy), ResultKey.String(d.Outcome.String()), SourceKey.String(d.Source.String())))
	}
	if d.First && (d.Latency > 0 || d.Source == ratelimit.FromStore) {
		m.latency.Record(ctx, d.Latency.Seconds(), p.limiter.latency...)
	}
	if d.Err != nil && errors.Is(d.Err, ratelimit.ErrMisconfiguredStore) {
		m.misconf.Add(ctx, 1, p.limiter.misconf...)
	}
}

// breakerChange records the breaker state of limiter.
func (m *Metrics) breakerChange(limiter string, state ratelimit.BreakerState) {
	m.breaker.Record(context.Background(), int64(state), metric.WithAttributes(LimiterKey.String(limiter)))
}

// series returns the prepared options of limiter and policy, making them
// on first use.
func (m *Metrics) series(limiter, policy string) *policySeries {
	v, ok := m.limiters.Load(limiter)
	if !ok {
		set := attribute.NewSet(LimiterKey.String(limiter))
		l := &limiterSeries{
			name:    limiter,
			latency: []metric.RecordOption{metric.WithAttributeSet(set)},
			misconf: []metric.AddOption{metric.WithAttributeSet(set)},
		}
		v, _ = m.limiters.LoadOrStore(limiter, l)
	}
	l := v.(*limiterSeries)
	v, ok = l.policies.Load(policy)
	if !ok {
		p := &policySeries{limiter: l, policy: policy}
		for o := range outcomes {
			for s := range sources {
				p.add[o][s] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
					LimiterKey.String(limiter), PolicyKey.String(policy),
					ResultKey.String(ratelimit.Outcome(o).String()),
					SourceKey.String(ratelimit.Source(s).String())))}
			}
		}
		v, _ = l.policies.LoadOrStore(policy, p)
	}
	return v.(*policySeries)
}

// Package ratelimitprom exports the decisions of ratelimit limiters as
// Prometheus metrics, through the limiters' [ratelimit.Observer].
//
// Its name is not client_golang's, so the two sit side by side:
//
//	import ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
//
//	m, err := ratelimitprom.New(prometheus.DefaultRegisterer)
//	if err != nil { ... }
//	api, err := ratelimit.New(store, ratelimit.PerMinute(100),
//		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
//
// It exports:
//
//	ratelimit_requests_total{limiter, policy, result}   counter
//	ratelimit_decisions_source_total{limiter, source}   counter
//	ratelimit_store_duration_seconds{limiter}           histogram
//	ratelimit_breaker_state{limiter}                    gauge
//	ratelimit_store_misconfigured_total{limiter}        counter
//
// result is "allowed", "denied", "dry_run_denied" or "error"
// ([ratelimit.Outcome]); source is "store", "deny_cache", "fallback" or
// "failure_policy" ([ratelimit.Source]); the breaker state is 0 closed, 1 open,
// 2 half-open ([ratelimit.BreakerState]).
//
// Label values are bounded: limiter and policy are the names given to
// limiters with [ratelimit.WithName], which come from configuration, never
// from requests ("default" for every limiter without a name, so name the
// ones to tell apart). No label holds a key, an address or anything else a
// client sends, and nothing is created per key, so the number of series is
// at most limiters × policies × 4 results, plus limiters × (4 sources +
// 1 histogram + 1 breaker gauge + 1 misconfiguration counter).
package ratelimitprom

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit"
)

// StoreBuckets are the upper bounds, in seconds, of the buckets of
// ratelimit_store_duration_seconds: from 100 µs, a Redis round trip on a
// quiet LAN, to 250 ms, past the 100 ms default time budget
// (100 ms, the default of ratelimit.WithTimeout), so calls that ran out of time fall in the
// last finite bucket (le="0.25") and stand apart from slow answers. Each
// New uses a copy of it.
var StoreBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25}

// Metrics turns the decisions of limiters into Prometheus metrics. Give
// each limiter its [Metrics.Observer]. A Metrics is safe for concurrent use
// by multiple goroutines.
type Metrics struct {
	requests *prometheus.CounterVec   // limiter, policy, result
	sources  *prometheus.CounterVec   // limiter, source
	latency  *prometheus.HistogramVec // limiter
	breaker  *prometheus.GaugeVec     // limiter
	// misconfigured counts the decisions a misconfigured store failed
	// (ratelimit.ErrMisconfiguredStore), by limiter.
	misconfigured *prometheus.CounterVec

	limiters sync.Map // limiter name -> *limiterSeries
}

// limiterSeries holds the label-resolved series of one limiter, made the
// first time it decides, so that a decision looks up nothing else.
type limiterSeries struct {
	name     string
	latency  prometheus.Observer
	sources  [4]prometheus.Counter // by ratelimit.Source
	policies sync.Map              // policy name -> *policySeries
}

// policySeries holds the result counters of one limiter and policy.
type policySeries struct {
	limiter *limiterSeries
	policy  string
	results [4]prometheus.Counter // by ratelimit.Outcome
}

// New returns Metrics whose collectors are registered with reg; pass
// prometheus.DefaultRegisterer to use the global registry. A nil reg is an
// error, and so is a collector on reg of one of these names that New cannot
// reuse (of another type, with other labels or help); then nothing New
// registered stays registered.
//
// A second New on the same registry reuses the collectors the first one
// registered, so both count into the same series: a limiter name seen by
// both is one set of series, not an error. Give limiters distinct names
// ([ratelimit.WithName]) to tell them apart.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("ratelimit: metrics/prometheus: New: nil Registerer")
	}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ratelimit_requests_total",
			Help: "Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).",
		}, []string{"limiter", "policy", "result"}),
		sources: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ratelimit_decisions_source_total",
			Help: "Requests decided by a rate limiter, by limiter and by what decided (store, deny_cache, fallback, failure_policy).",
		}, []string{"limiter", "source"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ratelimit_store_duration_seconds",
			Help:    "Time a rate limiter's decision spent in its store call, including calls that failed or ran out of time.",
			Buckets: slices.Clone(StoreBuckets),
		}, []string{"limiter"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ratelimit_breaker_state",
			Help: "State of a rate limiter's circuit breaker: 0 closed, 1 open, 2 half-open.",
		}, []string{"limiter"}),
		misconfigured: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ratelimit_store_misconfigured_total",
			Help: "Decisions a rate limiter's store failed because of its configuration (a cluster node behind a single-node client, a replica, authentication, a key of another type): fix it.",
		}, []string{"limiter"}),
	}
	var registered []prometheus.Collector
	undo := func() {
		for _, c := range registered {
			reg.Unregister(c)
		}
	}
	if err := register(reg, &m.requests, &registered); err != nil {
		undo()
		return nil, err
	}
	if err := register(reg, &m.sources, &registered); err != nil {
		undo()
		return nil, err
	}
	if err := register(reg, &m.latency, &registered); err != nil {
		undo()
		return nil, err
	}
	if err := register(reg, &m.breaker, &registered); err != nil {
		undo()
		return nil, err
	}
	if err := register(reg, &m.misconfigured, &registered); err != nil {
		undo()
		return nil, err
	}
	return m, nil
}

// register registers *c with reg, or points *c at the collector of the
// same kind already registered there; it appends to registered what it
// registered itself.
func register[C prometheus.Collector](reg prometheus.Registerer, c *C, registered *[]prometheus.Collector) error {
	err := reg.Register(*c)
	if err == nil {
		*registered = append(*registered, *c)
		return nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			*c = existing
			return nil
		}
	}
	return fmt.Errorf("ratelimit: metrics/prometheus: New: %w", err)
}

// Observer returns the observer to give a limiter with
// [ratelimit.WithObserver]. It never asks for keys ([ratelimit.Observer].Keys
// stays false). Each call returns an observer with its own small cache of
// the series last used, so give each limiter its own call: once a limiter
// has decided, its decisions allocate nothing.
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
	if o := int(d.Outcome); o >= 0 && o < len(p.results) {
		p.results[o].Inc()
	} else {
		m.requests.WithLabelValues(d.Limiter, d.Policy, d.Outcome.String()).Inc()
	}
	if !d.First {
		return // the request's sources and store latency are counted once
	}
	l := p.limiter
	if s := int(d.Source); s >= 0 && s < len(l.sources) {
		l.sources[s].Inc()
	} else {
		m.sources.WithLabelValues(d.Limiter, d.Source.String()).Inc()
	}
	if d.Latency > 0 || d.Source == ratelimit.FromStore {
		l.latency.Observe(d.Latency.Seconds())
	}
	if d.Err != nil && errors.Is(d.Err, ratelimit.ErrMisconfiguredStore) {
		m.misconfigured.WithLabelValues(d.Limiter).Inc()
	}
}

// breakerChange sets the breaker gauge of limiter to state.
func (m *Metrics) breakerChange(limiter string, state ratelimit.BreakerState) {
	m.breaker.WithLabelValues(limiter).Set(float64(state))
}

// series returns the series of limiter and policy, making them on first
// use: all four results and sources at zero, so that rate() sees a
// limiter's first denial as an increase.
func (m *Metrics) series(limiter, policy string) *policySeries {
	v, ok := m.limiters.Load(limiter)
	if !ok {
		l := &limiterSeries{name: limiter, latency: m.latency.WithLabelValues(limiter)}
		for s := range l.sources {
			l.sources[s] = m.sources.WithLabelValues(limiter, ratelimit.Source(s).String())
		}
		v, _ = m.limiters.LoadOrStore(limiter, l)
	}
	l := v.(*limiterSeries)
	v, ok = l.policies.Load(policy)
	if !ok {
		p := &policySeries{limiter: l, policy: policy}
		for o := range p.results {
			p.results[o] = m.requests.WithLabelValues(limiter, policy, ratelimit.Outcome(o).String())
		}
		v, _ = l.policies.LoadOrStore(policy, p)
	}
	return v.(*policySeries)
}

package ratelimitprom_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit"
	ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func benchMetrics(b *testing.B) *ratelimitprom.Metrics {
	b.Helper()
	m, err := ratelimitprom.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkDecision is the cost of recording one decision of a warmed
// limiter: the hot path, which must not allocate.
func BenchmarkDecision(b *testing.B) {
	o := benchMetrics(b).Observer()
	d := ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeAllowed, Source: ratelimit.FromStore, Latency: 300 * time.Microsecond}
	o.Decision(d)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		o.Decision(d)
	}
	if a := testing.AllocsPerRun(100, func() { o.Decision(d) }); a != 0 {
		b.Errorf("%v allocs per decision, want 0", a)
	}
}

// BenchmarkDecisionParallel records decisions of one limiter from all
// goroutines at once.
func BenchmarkDecisionParallel(b *testing.B) {
	o := benchMetrics(b).Observer()
	d := ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeAllowed, Source: ratelimit.FromStore, Latency: 300 * time.Microsecond}
	o.Decision(d)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o.Decision(d)
		}
	})
}

// BenchmarkDecisionSharedObserver alternates two limiters on one observer,
// so every decision misses the observer's cache and looks its series up.
func BenchmarkDecisionSharedObserver(b *testing.B) {
	o := benchMetrics(b).Observer()
	ds := []ratelimit.Decision{
		{Limiter: "a", Policy: "a", Outcome: ratelimit.OutcomeDenied, Source: ratelimit.FromDenyCache},
		{Limiter: "b", Policy: "b", Outcome: ratelimit.OutcomeAllowed, Source: ratelimit.FromStore, Latency: time.Millisecond},
	}
	for _, d := range ds {
		o.Decision(d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		o.Decision(ds[i&1])
		i++
	}
}

// BenchmarkMiddleware compares a request through a limiter on the memory
// store without and with the metrics observer.
func BenchmarkMiddleware(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts func(b *testing.B) []ratelimit.Option
	}{
		{"no observer", func(*testing.B) []ratelimit.Option { return nil }},
		{"metrics", func(b *testing.B) []ratelimit.Option {
			return []ratelimit.Option{ratelimit.WithObserver(benchMetrics(b).Observer())}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			store := memory.New()
			defer store.Close()
			opts := append(tc.opts(b), ratelimit.WithName("api"))
			l, err := ratelimit.New(store, ratelimit.PerSecond(1_000_000_000), opts...)
			if err != nil {
				b.Fatal(err)
			}
			h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

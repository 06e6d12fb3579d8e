package ratelimitprom_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratelimit-go/ratelimit"
	ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestNewWithNilRegistererFails(t *testing.T) {
	if _, err := ratelimitprom.New(nil); err == nil {
		t.Error("New(nil): no error")
	}
}

func TestSecondNewOnOneRegistryCountsIntoTheSameSeries(t *testing.T) {
	reg, first := newMetrics(t)
	second, err := ratelimitprom.New(reg)
	if err != nil {
		t.Fatalf("second New: %v", err)
	}
	store := memory.New()
	defer store.Close()
	a := newLimiter(t, store, ratelimit.PerMinute(10), ratelimit.WithName("api"), ratelimit.WithObserver(first.Observer()))
	b := newLimiter(t, store, ratelimit.PerMinute(10), ratelimit.WithName("api"), ratelimit.WithObserver(second.Observer()))
	serve(a, 3)
	serve(b, 4)
	const want = `
# HELP ratelimit_requests_total Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).
# TYPE ratelimit_requests_total counter
ratelimit_requests_total{limiter="api",policy="api",result="allowed"} 7
ratelimit_requests_total{limiter="api",policy="api",result="denied"} 0
ratelimit_requests_total{limiter="api",policy="api",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="api",policy="api",result="error"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_requests_total"); err != nil {
		t.Error(err)
	}
}

func TestNewFailsOnAForeignCollectorOfTheSameName(t *testing.T) {
	const help = "Requests decided by a rate limiter, by limiter and by what decided (store, deny_cache, fallback, failure_policy)."
	for _, tc := range []struct {
		name, help             string
		wrapsAlreadyRegistered bool
	}{
		{"a gauge of the same name, labels and help", help, true},
		{"a gauge of the same name and labels but another help", "Something else.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "ratelimit_decisions_source_total", Help: tc.help,
			}, []string{"limiter", "source"}))

			_, err := ratelimitprom.New(reg)
			if err == nil {
				t.Fatal("New: no error")
			}
			if got := errors.As(err, new(prometheus.AlreadyRegisteredError)); got != tc.wrapsAlreadyRegistered {
				t.Errorf("New: %v; wraps AlreadyRegisteredError: %v, want %v", err, got, tc.wrapsAlreadyRegistered)
			}
			// ratelimit_requests_total, registered before the failure, is
			// unregistered again: registering it anew is no conflict.
			requests := prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "ratelimit_requests_total",
				Help: "Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).",
			}, []string{"limiter", "policy", "result"})
			if err := reg.Register(requests); err != nil {
				t.Errorf("ratelimit_requests_total left registered after New failed: %v", err)
			}
		})
	}
}

func TestOneObserverSharedByTwoLimiters(t *testing.T) {
	reg, m := newMetrics(t)
	store := memory.New()
	defer store.Close()
	o := m.Observer()
	a := newLimiter(t, store, ratelimit.PerMinute(2), ratelimit.WithName("a"), ratelimit.WithObserver(o))
	b := newLimiter(t, store, ratelimit.PerMinute(2), ratelimit.WithName("b"), ratelimit.WithObserver(o))
	for range 3 {
		serve(a, 1)
		serve(b, 1)
	}
	const want = `
# HELP ratelimit_requests_total Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).
# TYPE ratelimit_requests_total counter
ratelimit_requests_total{limiter="a",policy="a",result="allowed"} 2
ratelimit_requests_total{limiter="a",policy="a",result="denied"} 1
ratelimit_requests_total{limiter="a",policy="a",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="a",policy="a",result="error"} 0
ratelimit_requests_total{limiter="b",policy="b",result="allowed"} 2
ratelimit_requests_total{limiter="b",policy="b",result="denied"} 1
ratelimit_requests_total{limiter="b",policy="b",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="b",policy="b",result="error"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_requests_total"); err != nil {
		t.Error(err)
	}
}

func TestConcurrentDecisions(t *testing.T) {
	reg, m := newMetrics(t)
	store := memory.New()
	defer store.Close()
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		name := []string{"a", "b"}[g%2]
		l := newLimiter(t, store, ratelimit.PerHour(1_000_000), ratelimit.WithName(name), ratelimit.WithObserver(m.Observer()))
		wg.Go(func() { serve(l, each) })
	}
	wg.Wait()
	const want = `
# HELP ratelimit_requests_total Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).
# TYPE ratelimit_requests_total counter
ratelimit_requests_total{limiter="a",policy="a",result="allowed"} 200
ratelimit_requests_total{limiter="a",policy="a",result="denied"} 0
ratelimit_requests_total{limiter="a",policy="a",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="a",policy="a",result="error"} 0
ratelimit_requests_total{limiter="b",policy="b",result="allowed"} 200
ratelimit_requests_total{limiter="b",policy="b",result="denied"} 0
ratelimit_requests_total{limiter="b",policy="b",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="b",policy="b",result="error"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_requests_total"); err != nil {
		t.Error(err)
	}
}

func TestAWarmedDecisionDoesNotAllocate(t *testing.T) {
	_, m := newMetrics(t)
	o := m.Observer()
	d := ratelimit.Decision{Limiter: "api", Policy: "api", Outcome: ratelimit.OutcomeDenied, Source: ratelimit.FromStore, Latency: time.Millisecond}
	o.Decision(d)
	if a := testing.AllocsPerRun(100, func() { o.Decision(d) }); a != 0 {
		t.Errorf("%v allocs per decision, want 0", a)
	}
}

// TestABadCostIsAnErrorNotTheStores: a cost above the capacity is checked
// before the store is asked, and counted as an error the limiter answered.
func TestABadCostIsAnErrorNotTheStores(t *testing.T) {
	reg, m := newMetrics(t)
	store := memory.New()
	defer store.Close()
	l := newLimiter(t, store, ratelimit.PerMinute(10),
		ratelimit.WithName("export"), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithCost(func(*http.Request) int { return 11 }), ratelimit.WithErrorHandler(quiet))
	wantCodes(t, "export", serve(l, 1), map[int]int{500: 1})
	const want = `
# HELP ratelimit_decisions_source_total Requests decided by a rate limiter, by limiter and by what decided (store, deny_cache, fallback, failure_policy).
# TYPE ratelimit_decisions_source_total counter
ratelimit_decisions_source_total{limiter="export",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="export",source="fallback"} 0
ratelimit_decisions_source_total{limiter="export",source="failure_policy"} 1
ratelimit_decisions_source_total{limiter="export",source="store"} 0
# HELP ratelimit_requests_total Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).
# TYPE ratelimit_requests_total counter
ratelimit_requests_total{limiter="export",policy="export",result="allowed"} 0
ratelimit_requests_total{limiter="export",policy="export",result="denied"} 0
ratelimit_requests_total{limiter="export",policy="export",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="export",policy="export",result="error"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"ratelimit_requests_total", "ratelimit_decisions_source_total"); err != nil {
		t.Error(err)
	}
}

// misconfiguredStore fails every call as a store whose configuration is
// wrong does, such as a single-node client on a Redis Cluster node.
type misconfiguredStore struct{}

func (misconfiguredStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, fmt.Errorf("%w: 10.0.0.1:6379 answered MOVED 1234 10.0.0.2:6379", ratelimit.ErrMisconfiguredStore)
}

// TestAMisconfiguredStoreIsCountedApart: its failures, and the open
// breaker's that they cause, count in ratelimit_store_misconfigured_total.
func TestAMisconfiguredStoreIsCountedApart(t *testing.T) {
	reg, m := newMetrics(t)
	l := newLimiter(t, misconfiguredStore{}, ratelimit.PerMinute(10),
		ratelimit.WithName("cluster"), ratelimit.WithObserver(m.Observer()), ratelimit.WithErrorHandler(quiet))
	wantCodes(t, "cluster", serve(l, 8), map[int]int{200: 8})
	const want = `
# HELP ratelimit_store_misconfigured_total Decisions a rate limiter's store failed because of its configuration (a cluster node behind a single-node client, a replica, authentication, a key of another type): fix it.
# TYPE ratelimit_store_misconfigured_total counter
ratelimit_store_misconfigured_total{limiter="cluster"} 8
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_store_misconfigured_total"); err != nil {
		t.Error(err)
	}
}

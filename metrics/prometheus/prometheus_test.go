package ratelimitprom_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestMetricsCountKnownTraffic(t *testing.T) {
	reg, m := newMetrics(t)
	clk := newClock()
	store := memory.New(memory.WithClock(clk.Now))
	defer store.Close()

	api := newLimiter(t, store, ratelimit.PerMinute(10),
		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()))
	shadow := newLimiter(t, store, ratelimit.PerMinute(10),
		ratelimit.WithName("shadow"), ratelimit.WithDryRun(), ratelimit.WithObserver(m.Observer()))
	flaky := &flakyStore{}
	flaky.down.Store(true)
	remote := newLimiter(t, flaky, ratelimit.PerMinute(10),
		ratelimit.WithName("remote"), ratelimit.WithFailOpen(), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithBreaker(ratelimit.NewBreaker(1, time.Hour)), ratelimit.WithErrorHandler(quiet))

	wantCodes(t, "api", serve(api, 15), map[int]int{200: 10, 429: 5})
	wantCodes(t, "shadow", serve(shadow, 15), map[int]int{200: 15})
	// The first request finds the store down and opens the breaker; the
	// next two do not call the store. All three fail open.
	wantCodes(t, "remote", serve(remote, 3), map[int]int{200: 3})

	const want = `
# HELP ratelimit_breaker_state State of a rate limiter's circuit breaker: 0 closed, 1 open, 2 half-open.
# TYPE ratelimit_breaker_state gauge
ratelimit_breaker_state{limiter="remote"} 1
# HELP ratelimit_decisions_source_total Requests decided by a rate limiter, by limiter and by what decided (store, deny_cache, fallback, failure_policy).
# TYPE ratelimit_decisions_source_total counter
ratelimit_decisions_source_total{limiter="api",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="api",source="fallback"} 0
ratelimit_decisions_source_total{limiter="api",source="failure_policy"} 0
ratelimit_decisions_source_total{limiter="api",source="store"} 15
ratelimit_decisions_source_total{limiter="remote",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="remote",source="fallback"} 0
ratelimit_decisions_source_total{limiter="remote",source="failure_policy"} 3
ratelimit_decisions_source_total{limiter="remote",source="store"} 0
ratelimit_decisions_source_total{limiter="shadow",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="shadow",source="fallback"} 0
ratelimit_decisions_source_total{limiter="shadow",source="failure_policy"} 0
ratelimit_decisions_source_total{limiter="shadow",source="store"} 15
# HELP ratelimit_requests_total Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).
# TYPE ratelimit_requests_total counter
ratelimit_requests_total{limiter="api",policy="api",result="allowed"} 10
ratelimit_requests_total{limiter="api",policy="api",result="denied"} 5
ratelimit_requests_total{limiter="api",policy="api",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="api",policy="api",result="error"} 0
ratelimit_requests_total{limiter="remote",policy="remote",result="allowed"} 0
ratelimit_requests_total{limiter="remote",policy="remote",result="denied"} 0
ratelimit_requests_total{limiter="remote",policy="remote",result="dry_run_denied"} 0
ratelimit_requests_total{limiter="remote",policy="remote",result="error"} 3
ratelimit_requests_total{limiter="shadow",policy="shadow",result="allowed"} 10
ratelimit_requests_total{limiter="shadow",policy="shadow",result="denied"} 0
ratelimit_requests_total{limiter="shadow",policy="shadow",result="dry_run_denied"} 5
ratelimit_requests_total{limiter="shadow",policy="shadow",result="error"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"ratelimit_requests_total", "ratelimit_decisions_source_total", "ratelimit_breaker_state"); err != nil {
		t.Error(err)
	}

	// Every decision that called a store is timed, the failed call too;
	// the two the open breaker answered called nothing.
	got := histogramCounts(t, reg)
	wantCounts := map[string]uint64{"api": 15, "shadow": 15, "remote": 1}
	if len(got) != len(wantCounts) {
		t.Errorf("store duration counts %v, want %v", got, wantCounts)
	}
	for limiter, n := range wantCounts {
		if got[limiter] != n {
			t.Errorf("ratelimit_store_duration_seconds_count{limiter=%q} = %d, want %d", limiter, got[limiter], n)
		}
	}
}

func TestBreakerGaugeFollowsTheBreaker(t *testing.T) {
	synctest.Test(t, testBreakerGaugeFollowsTheBreaker)
}

func testBreakerGaugeFollowsTheBreaker(t *testing.T) {
	reg, m := newMetrics(t)
	flaky := &flakyStore{}
	l := newLimiter(t, flaky, ratelimit.PerMinute(10),
		ratelimit.WithName("remote"), ratelimit.WithFailOpen(), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithBreaker(ratelimit.NewBreaker(1, time.Minute)), ratelimit.WithErrorHandler(quiet))

	gauge := func() string {
		t.Helper()
		var b strings.Builder
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("Gather: %v", err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "ratelimit_breaker_state" {
				for _, m := range mf.GetMetric() {
					b.WriteString(m.GetLabel()[0].GetValue())
					b.WriteString("=")
					b.WriteString(strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64))
				}
			}
		}
		return b.String()
	}

	serve(l, 1)
	if g := gauge(); g != "" {
		t.Errorf("breaker gauge before any change: %q, want none", g)
	}
	flaky.down.Store(true)
	// A failure counts against the breaker once the store has answered
	// nothing for a time budget (a store answering other calls fails in
	// part): in the bubble, that time passes at once.
	time.Sleep(time.Second)
	serve(l, 1)
	if g := gauge(); g != "remote=1" {
		t.Errorf("breaker gauge after a failure: %q, want remote=1 (open)", g)
	}
	// Once the cool-down ends the next request probes; it succeeds, so the
	// breaker goes half-open and then closed.
	flaky.down.Store(false)
	time.Sleep(time.Minute) // in the bubble: the cool-down ends at once
	serve(l, 1)
	if g := gauge(); g != "remote=0" {
		t.Errorf("breaker gauge after a successful probe: %q, want remote=0 (closed)", g)
	}
}

func TestHalfOpenIsTwo(t *testing.T) {
	reg, m := newMetrics(t)
	m.Observer().BreakerChange("remote", ratelimit.BreakerHalfOpen)
	const want = `
# HELP ratelimit_breaker_state State of a rate limiter's circuit breaker: 0 closed, 1 open, 2 half-open.
# TYPE ratelimit_breaker_state gauge
ratelimit_breaker_state{limiter="remote"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_breaker_state"); err != nil {
		t.Error(err)
	}
}

func TestFallbackDecisionsAreCountedBySource(t *testing.T) {
	reg, m := newMetrics(t)
	flaky := &flakyStore{}
	flaky.down.Store(true)
	local := memory.New()
	defer local.Close()
	l := newLimiter(t, flaky, ratelimit.PerMinute(10),
		ratelimit.WithName("remote"), ratelimit.WithFailOpen(), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithBreaker(nil), ratelimit.WithFallback(local, 1), ratelimit.WithErrorHandler(quiet))
	wantCodes(t, "remote", serve(l, 12), map[int]int{200: 10, 429: 2})

	const want = `
# HELP ratelimit_decisions_source_total Requests decided by a rate limiter, by limiter and by what decided (store, deny_cache, fallback, failure_policy).
# TYPE ratelimit_decisions_source_total counter
ratelimit_decisions_source_total{limiter="remote",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="remote",source="fallback"} 12
ratelimit_decisions_source_total{limiter="remote",source="failure_policy"} 0
ratelimit_decisions_source_total{limiter="remote",source="store"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_decisions_source_total"); err != nil {
		t.Error(err)
	}
	// The fallback decided, but each decision first paid a failed store call.
	if got := histogramCounts(t, reg)["remote"]; got != 12 {
		t.Errorf("store duration count = %d, want 12", got)
	}
}

func TestLabelsHoldNothingFromRequests(t *testing.T) {
	reg, m := newMetrics(t)
	store := memory.New()
	defer store.Close()
	l := newLimiter(t, store, ratelimit.PerMinute(10),
		ratelimit.WithName("api"), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")))
	h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i := range 100 {
		r := httptest.NewRequest(http.MethodGet, "/path/"+strings.Repeat("x", i), nil)
		r.Header.Set("X-API-Key", "key-"+strings.Repeat("k", i))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	n, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	// 4 results + 4 sources + 1 histogram, for 100 distinct keys and paths.
	if n != 9 {
		t.Errorf("%d series after 100 keys, want 9", n)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if strings.Contains(lp.GetValue(), "key-") || strings.Contains(lp.GetValue(), "/path") {
					t.Errorf("%s has label %s=%q from a request", mf.GetName(), lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

func TestObserverAsksForNoKeys(t *testing.T) {
	_, m := newMetrics(t)
	if m.Observer().Keys {
		t.Error("Observer().Keys = true, want false: keys are personal data")
	}
}

// TestOneSourceIncrementPerRequest: a request of a limiter with two
// policies, and a counted request (WithCountIf) whose cost is given back,
// each count once in ratelimit_decisions_source_total and once per policy
// in ratelimit_requests_total.
func TestOneSourceIncrementPerRequest(t *testing.T) {
	reg, m := newMetrics(t)
	store := memory.New()
	defer store.Close()
	l := newLimiter(t, store, ratelimit.PerMinute(10), ratelimit.WithName("two"), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(100)}))
	serve(l, 3)
	counted := newLimiter(t, store, ratelimit.PerMinute(10), ratelimit.WithName("login"), ratelimit.WithObserver(m.Observer()),
		ratelimit.WithCountIf(ratelimit.CountStatus(http.StatusUnauthorized)))
	serve(counted, 5)
	const want = `
# HELP ratelimit_decisions_source_total Requests decided by a rate limiter, by limiter and by what decided (store, deny_cache, fallback, failure_policy).
# TYPE ratelimit_decisions_source_total counter
ratelimit_decisions_source_total{limiter="login",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="login",source="fallback"} 0
ratelimit_decisions_source_total{limiter="login",source="failure_policy"} 0
ratelimit_decisions_source_total{limiter="login",source="store"} 5
ratelimit_decisions_source_total{limiter="two",source="deny_cache"} 0
ratelimit_decisions_source_total{limiter="two",source="fallback"} 0
ratelimit_decisions_source_total{limiter="two",source="failure_policy"} 0
ratelimit_decisions_source_total{limiter="two",source="store"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratelimit_decisions_source_total"); err != nil {
		t.Error(err)
	}
	var requests strings.Builder
	requests.WriteString(`
# HELP ratelimit_requests_total Requests decided by a rate limiter, by limiter, policy and result (allowed, denied, dry_run_denied, error).
# TYPE ratelimit_requests_total counter
`)
	for _, s := range []struct {
		limiter, policy string
		allowed         int
	}{{"login", "login", 5}, {"two", "hourly", 3}, {"two", "two", 3}} {
		for _, result := range []string{"allowed", "denied", "dry_run_denied", "error"} {
			n := 0
			if result == "allowed" {
				n = s.allowed
			}
			fmt.Fprintf(&requests, "ratelimit_requests_total{limiter=%q,policy=%q,result=%q} %d\n", s.limiter, s.policy, result, n)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(requests.String()), "ratelimit_requests_total"); err != nil {
		t.Error(err)
	}
}

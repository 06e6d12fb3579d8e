package ratelimitprom_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimit-go/ratelimit"
	ratelimitprom "github.com/ratelimit-go/ratelimit/metrics/prometheus"
)

var errDown = errors.New("store down")

// flakyStore fails while down is set, and allows everything otherwise. It is
// not Local, so limiters on it get a time budget, breaker and deny cache,
// as on Redis.
type flakyStore struct{ down atomic.Bool }

func (s *flakyStore) AllowN(_ context.Context, _ string, limit ratelimit.Limit, _ int) (ratelimit.Result, error) {
	if s.down.Load() {
		return ratelimit.Result{}, errDown
	}
	return ratelimit.Result{Allowed: true, Limit: limit, Remaining: limit.Rate - 1}, nil
}

// clock is a settable clock for stores and limiters.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func quiet(*http.Request, error) {}

func newMetrics(t *testing.T) (*prometheus.Registry, *ratelimitprom.Metrics) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := ratelimitprom.New(reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return reg, m
}

func newLimiter(t *testing.T, store ratelimit.Store, limit ratelimit.Limit, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(store, limit, opts...)
	if err != nil {
		t.Fatalf("ratelimit.New: %v", err)
	}
	return l
}

// serve sends n requests from one client through l and counts the answers
// by status code.
func serve(l *ratelimit.Limiter, n int) map[int]int {
	h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	codes := map[int]int{}
	for range n {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		codes[w.Code]++
	}
	return codes
}

func wantCodes(t *testing.T, name string, got, want map[int]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: answers %v, want %v", name, got, want)
		return
	}
	for code, n := range want {
		if got[code] != n {
			t.Errorf("%s: answers %v, want %v", name, got, want)
			return
		}
	}
}

// histogramCounts returns the sample count of ratelimit_store_duration_seconds
// by limiter.
func histogramCounts(t *testing.T, reg prometheus.Gatherer) map[string]uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	counts := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "ratelimit_store_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "limiter" {
					counts[lp.GetValue()] = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return counts
}

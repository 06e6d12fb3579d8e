package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestOutboundCallsTheStubWithinTheBudget(t *testing.T) {
	store := memory.New()
	defer store.Close()
	var out strings.Builder
	// 3 calls on a budget of 1 now and 1 every 50 ms: the last waits 100 ms.
	start := time.Now()
	if err := outbound(store, ratelimit.Limit{Rate: 20, Period: time.Second, Burst: 1}, 3, &out); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Fatalf("3 calls took %v, less than the budget allows (100ms)", took)
	}
	if n := strings.Count(out.String(), "200 OK"); n != 3 {
		t.Fatalf("%d calls answered 200, want 3:\n%s", n, out.String())
	}
}

// TestOutboundInstancesShareOneBudget runs two instances of the demo over
// one store, each with its stub API on a port of its own: they share the
// API's budget.
func TestOutboundInstancesShareOneBudget(t *testing.T) {
	store := memory.New()
	defer store.Close()
	limit := ratelimit.PerHour(2) // the next token in 30 minutes
	var stubs [2]*httptest.Server
	var seen [2]atomic.Int32
	var clients [2]*http.Client
	for i := range 2 {
		stubs[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen[i].Add(1) }))
		defer stubs[i].Close()
		c, err := outboundClient(store, limit)
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	call := func(i int) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", stubs[i].URL+"/v1/things", nil)
		resp, err := clients[i].Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for range 2 {
		if err := call(0); err != nil {
			t.Fatalf("instance 1 within the budget: %v", err)
		}
	}
	// The budget is spent: instance 2's call would wait 30 minutes, past
	// its deadline, and fails at once.
	if err := call(1); err == nil {
		t.Fatal("instance 2 called its stub with the shared budget spent")
	}
	if a, b := seen[0].Load(), seen[1].Load(); a != 2 || b != 0 {
		t.Fatalf("the stubs saw %d and %d calls, want 2 and 0", a, b)
	}
}

func TestReportRouteLimitsRunningReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := reportRoute(memory.New(memory.WithSweepInterval(0)), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		for range 2 {
			go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/report", nil).WithContext(ctx))
		}
		synctest.Wait() // both reports running
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/report", nil))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("X-Ratelimit-Limit") != "2" {
			t.Fatalf("a third report: %d %v; want 429 with X-Ratelimit-Limit 2", rec.Code, rec.Header())
		}
		cancel() // the clients go away: their slots come back
		synctest.Wait()
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/report", nil))
		if rec.Code != http.StatusOK || rec.Body.String() != "report ready\n" {
			t.Fatalf("a report after the others ended: %d %q", rec.Code, rec.Body.String())
		}
	})
}

// TestReportRouteDryRun: with -dry-run, a third report runs while two
// hold their slots; with -instances, the route still builds (an in-flight
// limit refuses WithInstances, so the app keeps it to the rate limits).
func TestReportRouteDryRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New(memory.WithSweepInterval(0))
		defer store.Close()
		s, err := app(config{store: store, dryRun: true, instances: 2})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for range 2 {
			go s.handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/report", nil).WithContext(ctx))
		}
		synctest.Wait() // both reports running
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/report", nil)) // 2s of the bubble's time
		if rec.Code != http.StatusOK || rec.Body.String() != "report ready\n" || rec.Header().Get("Retry-After") != "" {
			t.Fatalf("a third report in dry run: %d %q %v; want it served", rec.Code, rec.Body.String(), rec.Header())
		}
	})
}

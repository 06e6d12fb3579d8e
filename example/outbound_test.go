package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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
// hold their slots; with -redis's fallback store, the route still builds
// (an in-flight limit refuses WithFallback, so the app keeps it off).
func TestReportRouteDryRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New(memory.WithSweepInterval(0))
		defer store.Close()
		s, err := app(config{store: store, dryRun: true, fallback: memory.New(memory.WithSweepInterval(0)), instances: 2})
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

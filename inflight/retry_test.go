package inflight_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestInFlightRetryAfterIsHowLongRequestsRun: a request without a slot is
// told to come back in about the time the limit's requests run, and the
// observer is told of every request.
func TestInFlightRetryAfterIsHowLongRequestsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		outcomes := map[ratelimit.Outcome]int{}
		f := newExportLimit(t, memory.NewSlots(), inflight.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) {
			mu.Lock()
			outcomes[d.Outcome]++
			mu.Unlock()
			if d.Policy != "export" || d.Limiter != "export" {
				t.Errorf("observed %+v", d)
			}
		}}))
		h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			time.Sleep(5 * time.Second) // an export, in the bubble's time
		}))
		third := func() string {
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), keyed("a")) })
			}
			synctest.Wait() // both hold their slot
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, keyed("a"))
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("a third request: %d, want 429", rec.Code)
			}
			wg.Wait()
			return rec.Header().Get("Retry-After")
		}
		if got := third(); got != "1" {
			t.Fatalf("Retry-After %q before any request ran, want 1", got)
		}
		if got := third(); got != "5" {
			t.Fatalf("Retry-After %q after requests of 5s, want 5", got)
		}
		if outcomes[ratelimit.OutcomeAllowed] != 4 || outcomes[ratelimit.OutcomeDenied] != 2 {
			t.Fatalf("observed %v, want 4 allowed and 2 denied", outcomes)
		}
	})
}

package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestRequestDeadlinesNeverOpenTheBreaker: requests whose own deadline
// has passed (a per-request timeout in front of the limiter, slow
// uploads) are no failures of a healthy store: the breaker stays closed
// and an ordinary client is still limited.
func TestRequestDeadlinesNeverOpenTheBreaker(t *testing.T) {
	for _, failClosed := range []bool{false, true} {
		t.Run("fail closed "+strconv.FormatBool(failClosed), func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			store := &remoteStore{Store: mem}
			opts := []ratelimit.Option{ratelimit.WithErrorHandler(func(*http.Request, error) {})}
			if failClosed {
				opts = append(opts, ratelimit.WithFailClosed())
			}
			l, err := ratelimit.New(store, ratelimit.PerMinute(3), opts...)
			if err != nil {
				t.Fatal(err)
			}
			h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
			defer cancel()
			for i := range 8 {
				r := httptest.NewRequestWithContext(expired, http.MethodGet, "/", nil)
				r.RemoteAddr = "192.0.2." + strconv.Itoa(10+i) + ":1"
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
			if s := l.Breaker().State(); s != ratelimit.BreakerClosed {
				t.Fatalf("8 requests past their own deadline left the breaker %v, want closed", s)
			}
			codes := map[int]int{}
			for range 20 {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.RemoteAddr = "192.0.2.1:1"
				h.ServeHTTP(w, r)
				codes[w.Code]++
			}
			if codes[200] != 3 || codes[429] != 17 {
				t.Errorf("an ordinary client under 3 per minute got %v, want 3 × 200 and 17 × 429", codes)
			}
		})
	}
}

// TestAnInvalidRequestIsNoProbe: with the store down and the breaker
// half-open, a request whose cost exceeds the capacity is answered 500
// without reaching the store: it neither closes the breaker (as if the
// store had answered) nor takes the probe, and mixing such requests in
// does not keep real ones paying for calls to a dead store.
func TestAnInvalidRequestIsNoProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.New(memory.WithSweepInterval(0))
		store := &remoteStore{Store: mem}
		store.down.Store(true)
		l, err := ratelimit.New(store, ratelimit.PerMinute(10),
			ratelimit.WithBreaker(ratelimit.NewBreaker(1, time.Second)),
			ratelimit.WithCost(func(r *http.Request) int { n, _ := strconv.Atoi(r.Header.Get("Cost")); return max(n, 1) }),
			ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		do := func(cost int) int {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Cost", strconv.Itoa(cost))
			l.Admit(w, r)
			return w.Code
		}
		do(1) // the store fails: open
		if s := l.Breaker().State(); s != ratelimit.BreakerOpen {
			t.Fatalf("after a failure the breaker is %v, want open", s)
		}
		for round := range 10 {
			time.Sleep(time.Second) // the cool-down ends
			calls := store.calls.Load()
			if code := do(11); code != http.StatusInternalServerError {
				t.Fatalf("round %d: a request of cost 11 under a capacity of 10 got %d, want 500", round, code)
			}
			if store.calls.Load() != calls {
				t.Fatalf("round %d: a request invalid on its own reached the store", round)
			}
			if s := l.Breaker().State(); s == ratelimit.BreakerClosed {
				t.Fatalf("round %d: an invalid request closed the breaker while the store is down", round)
			}
			do(1) // the probe: it fails, the breaker opens again
			do(1) // within the new cool-down: the store is not called
			if got := store.calls.Load() - calls; got != 1 {
				t.Fatalf("round %d: %d store calls for two real requests after a cool-down, want 1 (the probe)", round, got)
			}
		}
	})
}

package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
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

func TestBreakerOpenErrorReachesTheErrorHandler(t *testing.T) {
	var errs []error
	l, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(1), ratelimit.WithBreaker(ratelimit.NewBreaker(1, time.Hour)),
		ratelimit.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
	if err != nil {
		t.Fatal(err)
	}
	l.Allow(context.Background(), "ip:192.0.2.1") // the store fails: the breaker opens
	for range 2 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		l.Admit(httptest.NewRecorder(), r)
	}
	if len(errs) != 3 || !errors.Is(errs[0], errDown) || !errors.Is(errs[1], ratelimit.ErrBreakerOpen) || !errors.Is(errs[2], ratelimit.ErrBreakerOpen) {
		t.Errorf("errors %v, want the store's, then ErrBreakerOpen once the breaker is open", errs)
	}
}

func TestBreakerCostsOneCallPerCoolDown(t *testing.T) {
	synctest.Test(t, testBreakerCostsOneCallPerCoolDown)
}

func testBreakerCostsOneCallPerCoolDown(t *testing.T) {
	store := &remoteStore{Store: memory.New(memory.WithSweepInterval(0))}
	store.down.Store(true)
	var changes []ratelimit.BreakerState
	l, err := ratelimit.New(store, ratelimit.PerMinute(1000), ratelimit.WithBreaker(ratelimit.NewBreaker(3, time.Second)),
		ratelimit.WithObserver(ratelimit.Observer{BreakerChange: func(_ string, s ratelimit.BreakerState) { changes = append(changes, s) }}),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if code := serveStatus(l, context.Background()); code != http.StatusOK {
			t.Fatalf("status %d, want 200 (fail open)", code)
		}
	}
	if got := store.calls.Load(); got != 3 {
		t.Fatalf("100 requests during an outage called the store %d times, want 3 (then the breaker opens)", got)
	}
	time.Sleep(999 * time.Millisecond)
	serveStatus(l, context.Background())
	if got := store.calls.Load(); got != 3 {
		t.Fatalf("the store was called during the cool-down (%d calls)", got)
	}
	time.Sleep(time.Millisecond)
	serveStatus(l, context.Background()) // the probe fails: open again
	serveStatus(l, context.Background())
	if got, state := store.calls.Load(), l.Breaker().State(); got != 4 || state != ratelimit.BreakerOpen {
		t.Fatalf("after the cool-down: %d calls, breaker %v; want 4 (one probe) and open", got, state)
	}
	store.down.Store(false)
	time.Sleep(time.Second)
	for range 10 {
		serveStatus(l, context.Background())
	}
	if got, state := store.calls.Load(), l.Breaker().State(); got != 14 || state != ratelimit.BreakerClosed {
		t.Fatalf("after recovery: %d calls, breaker %v; want 14 and closed", got, state)
	}
	want := []ratelimit.BreakerState{ratelimit.BreakerOpen, ratelimit.BreakerHalfOpen, ratelimit.BreakerOpen, ratelimit.BreakerHalfOpen, ratelimit.BreakerClosed}
	if !slices.Equal(changes, want) {
		t.Fatalf("state changes %v, want %v", changes, want)
	}
}

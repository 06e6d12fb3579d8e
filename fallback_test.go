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

// TestFallbackSharesKeepTheFleetWithinTheLimit: 4 app servers, the store
// down, 10 per minute: whatever the requests cost, the fleet admits at
// most 10 tokens from the fallback shares.
func TestFallbackSharesKeepTheFleetWithinTheLimit(t *testing.T) {
	for _, cost := range []int{1, 2, 3, 10} {
		t.Run("cost "+strconv.Itoa(cost), func(t *testing.T) {
			admitted := 0
			for range 4 {
				local := memory.New()
				defer local.Close()
				l, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(10), ratelimit.WithFallback(local, 4),
					ratelimit.WithCost(func(*http.Request) int { return cost }),
					ratelimit.WithErrorHandler(func(*http.Request, error) {}))
				if err != nil {
					t.Fatal(err)
				}
				for range 20 {
					w := httptest.NewRecorder()
					l.Admit(w, httptest.NewRequest(http.MethodGet, "/", nil))
					switch w.Code {
					case http.StatusOK:
						admitted += cost
					case http.StatusTooManyRequests:
						if w.Header().Get("Retry-After") == "" {
							t.Fatal("a fallback denial without Retry-After")
						}
					default:
						t.Fatalf("status %d, want 200 or 429", w.Code)
					}
				}
			}
			if admitted > 10 {
				t.Errorf("4 instances admitted %d tokens of cost %d during the outage, want at most the limit, 10", admitted, cost)
			}
			if cost == 1 && admitted < 8 {
				t.Errorf("4 instances admitted %d tokens of cost 1, want their shares, 4 × 2", admitted)
			}
		})
	}
}

// TestFallbackMustBeLocal: the fallback answers when the main store did
// not, with no time budget of its own: a remote one is refused.
func TestFallbackMustBeLocal(t *testing.T) {
	if _, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(1), ratelimit.WithFallback(failingStore{}, 2)); err == nil {
		t.Error("New accepted a fallback store that is not Local")
	}
}

func TestFallbackDecidesWithAShareOfTheLimit(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	local := memory.New(memory.WithClock(clock.Now))
	defer local.Close()
	tl := newTally()
	var told int
	l, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(20),
		ratelimit.WithFallback(local, 4),
		ratelimit.WithObserver(tl.observer(false)),
		ratelimit.WithErrorHandler(func(*http.Request, error) { told++ }))
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for range 7 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		w := httptest.NewRecorder()
		l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
		codes = append(codes, w.Code)
	}
	want := []int{200, 200, 200, 200, 200, 429, 429} // 20 per minute shared by 4: 5 each
	if !equalInts(codes, want) {
		t.Errorf("status codes %v, want %v", codes, want)
	}
	if tl.sources[ratelimit.FromFallback] != 7 {
		t.Errorf("sources %v, want 7 from the fallback", tl.sources)
	}
	if told != 7 {
		t.Errorf("the error handler was told %d times, want 7: the fallback decided, the store still failed", told)
	}
}

func TestFallbackRefusesBadArguments(t *testing.T) {
	for _, opt := range []ratelimit.Option{ratelimit.WithFallback(nil, 1), ratelimit.WithFallback(memory.New(), 0)} {
		if _, err := ratelimit.New(failingStore{}, ratelimit.PerMinute(1), opt); err == nil {
			t.Error("New accepted a bad fallback")
		}
	}
}

// TestAFlappingStoreDoesNotGiveTwoBudgets: a store that fails for 300 ms
// every 600 ms, a key asked 100 times a second for a minute under 60 per
// minute, by a fleet of app servers with fallbacks: their fallbacks'
// admissions are charged to the store once it answers again, so that the
// key gets at most the limit's budget (a capacity and a minute's refill)
// and one capacity in all from the shares, not the store's budget and the
// fallbacks' in turn.
func TestAFlappingStoreDoesNotGiveTwoBudgets(t *testing.T) {
	for _, instances := range []int{1, 4} {
		t.Run(strconv.Itoa(instances)+" instances", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &remoteStore{Store: memory.New(memory.WithSweepInterval(0))}
				limit := ratelimit.PerMinute(60)
				fleet := make([]*ratelimit.Limiter, instances)
				for i := range fleet {
					var err error
					fleet[i], err = ratelimit.New(store, limit, ratelimit.WithFallback(memory.New(memory.WithSweepInterval(0)), instances),
						ratelimit.WithErrorHandler(func(*http.Request, error) {}))
					if err != nil {
						t.Fatal(err)
					}
				}
				stop := make(chan struct{})
				go func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(300 * time.Millisecond):
							store.down.Store(!store.down.Load())
						}
					}
				}()
				admitted := 0
				for i := range 6000 { // a minute
					if res, _ := fleet[i%instances].Allow(context.Background(), "ip:192.0.2.1"); res.Allowed {
						admitted++
					}
					time.Sleep(10 * time.Millisecond)
				}
				close(stop)
				if most := 2*limit.Capacity() + limit.Rate; admitted > most {
					t.Errorf("a key was admitted %d times in a minute of flapping, want at most %d (the limit's budget and one capacity of shares)", admitted, most)
				}
				t.Logf("admitted %d in a minute (the limit's budget: %d)", admitted, limit.Capacity()+limit.Rate)
			})
		})
	}
}

// TestAFallbackOutlastsALongOutage: owing the store its admissions never
// stops a fallback from admitting at its share's rate, however long the
// store is down.
func TestAFallbackOutlastsALongOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &remoteStore{Store: memory.New(memory.WithSweepInterval(0))}
		store.down.Store(true)
		l, err := ratelimit.New(store, ratelimit.PerMinute(60), ratelimit.WithFallback(memory.New(memory.WithSweepInterval(0)), 2),
			ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		admitted := 0
		for range 6000 { // ten minutes, 10 a second
			if res, _ := l.Allow(context.Background(), "ip:192.0.2.1"); res.Allowed {
				admitted++
			}
			time.Sleep(100 * time.Millisecond)
		}
		// A share of 30 per minute, burst 30: 30 + 10 × 30.
		if admitted < 320 || admitted > 331 {
			t.Errorf("a fallback admitted %d in ten minutes of outage, want its share, 30 + 300", admitted)
		}
	})
}

// TestAFallbackDenialSaysWhenTheBudgetIsFull: a denial of the fallback's
// spent share (the store answered before, so the fallback's admissions are
// owed to it) carries a ResetAfter, so that X-RateLimit-Reset is not 0 on
// a 429 of an empty budget.
func TestAFallbackDenialSaysWhenTheBudgetIsFull(t *testing.T) {
	store := &remoteStore{Store: memory.New()}
	l, err := ratelimit.New(store, ratelimit.PerHour(3), ratelimit.WithName("fb"),
		ratelimit.WithFallback(memory.New(), 1), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if res, err := l.Allow(ctx, "ip:192.0.2.1"); err != nil || !res.Allowed {
		t.Fatalf("with the store up: %+v %v", res, err)
	}
	store.down.Store(true)
	var res ratelimit.Result
	for range 4 { // the share's 3, then a denial
		res, _ = l.Allow(ctx, "ip:192.0.2.1")
	}
	if res.Allowed || res.RetryAfter <= 0 || res.ResetAfter < res.RetryAfter || res.Limit != ratelimit.PerHour(3) {
		t.Fatalf("the share spent: %+v, want denied under 3 per hour with a wait and ResetAfter >= RetryAfter", res)
	}
	w := httptest.NewRecorder()
	l.Admit(w, httptest.NewRequest("GET", "/", nil)) // ip:192.0.2.1
	if got := w.Header().Get("X-RateLimit-Reset"); w.Code != http.StatusTooManyRequests || got == "" || got == "0" {
		t.Errorf("429 of an empty budget: status %d, X-RateLimit-Reset %q, want a time until full", w.Code, got)
	}
}

// TestADenialOwingTheFallbackTellsNothingLeft: once the store answers
// again after an outage, a request whose key owes what the fallback
// admitted is denied if the store cannot pay both, and its headers say
// what is left once the debt is paid, not the store's budget before it
// (X-RateLimit-Remaining 3 on a 429).
func TestADenialOwingTheFallbackTellsNothingLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &remoteStore{Store: memory.New(memory.WithSweepInterval(0))}
		l, err := ratelimit.New(store, ratelimit.PerMinute(5), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		serve := func() *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			return rec
		}
		for range 2 { // the store's: 3 left
			serve()
		}
		store.down.Store(true)
		for range 4 { // the fallback's, owed to the store
			if rec := serve(); rec.Code != http.StatusOK {
				t.Fatalf("the fallback's request: %d", rec.Code)
			}
		}
		store.down.Store(false) // 4 failures: the breaker stays closed
		rec := serve()          // 1 and the 4 owed: 5 of the 3 left
		// Full once the 3 left pay the 4 owed and 6 more refill: 72 s, where
		// the store's own bucket is full in 24.
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("X-RateLimit-Remaining") != "0" ||
			rec.Header().Get("X-RateLimit-Reset") != "72" {
			t.Fatalf("the request after the debt: %d, X-RateLimit-Remaining %q, Reset %q; want 429, 0 and 72",
				rec.Code, rec.Header().Get("X-RateLimit-Remaining"), rec.Header().Get("X-RateLimit-Reset"))
		}
	})
}

// TestAPaymentOfPartOfTheDebtTellsTheRest: the first request after an
// outage pays as much of the fallback's debt as fits with its cost; its
// result tells the budget less what is still owed, and the deny cache
// then waits for the next request's token and that rest: 24 s, where the
// store's bucket alone has a token in 12.
func TestAPaymentOfPartOfTheDebtTellsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &remoteStore{Store: memory.New(memory.WithSweepInterval(0))}
		l, err := ratelimit.New(store, ratelimit.PerMinute(5), ratelimit.WithPlainKeys(),
			ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		store.down.Store(true)
		for range 5 { // the fallback's whole share, owed
			if res, _ := l.Allow(ctx, "k"); !res.Allowed {
				t.Fatalf("the fallback's request: %+v", res)
			}
		}
		store.down.Store(false)
		time.Sleep(time.Second)       // 5 failures opened the breaker: its cool-down
		res, err := l.Allow(ctx, "k") // 1 and 4 of the 5 owed: the store's 5
		if err != nil || !res.Allowed || res.Remaining != 0 || res.ResetAfter != 72*time.Second {
			t.Fatalf("the request that pays: %+v, %v; want allowed, 0 left, full in 72 s (1 still owed)", res, err)
		}
		calls := store.calls.Load()
		res, _ = l.Allow(ctx, "k")
		if res.Allowed || res.RetryAfter < 23*time.Second || store.calls.Load() != calls {
			t.Fatalf("the next request: %+v after %d store calls; want denied by the deny cache for about 24 s",
				res, store.calls.Load()-calls)
		}
	})
}

package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestDenyCacheIsExact drives one limiter with a deny cache and one store
// without on the same random timeline (the oracle): every decision must be
// the same, the cached denials' Retry-After too, with far fewer store calls.
func TestDenyCacheIsExact(t *testing.T) {
	limits := []ratelimit.Limit{
		ratelimit.PerSecond(10).WithBurst(5),
		ratelimit.PerMinute(10),
		{Rate: 7, Period: time.Second, Algorithm: ratelimit.FixedWindow},
		{Rate: 7, Period: time.Second, Algorithm: ratelimit.SlidingWindow},
		{Rate: 7, Period: time.Second, Algorithm: ratelimit.SlidingLog},
	}
	for _, limit := range limits {
		t.Run(limit.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				oracle := memory.New(memory.WithSweepInterval(0))
				cached := &countingStore{Store: memory.New(memory.WithSweepInterval(0))}
				l, err := ratelimit.New(cached, limit, ratelimit.WithDenyCache(100))
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, uint64(limit.Rate)))
				step := limit.Period / time.Duration(limit.Rate) / 4
				const requests = 2000
				for i := range requests {
					time.Sleep(time.Duration(rng.Int64N(int64(step))))
					n := 1 + rng.IntN(min(3, limit.Capacity()))
					got, err := l.AllowN(context.Background(), "ip:192.0.2.1", n)
					if err != nil {
						t.Fatal(err)
					}
					want, _ := oracle.AllowN(context.Background(), "k", limit, n)
					if got.Allowed != want.Allowed || got.Allowed && got.Remaining != want.Remaining {
						t.Fatalf("request %d (cost %d): %+v, the oracle says %+v", i, n, got, want)
					}
					// A remembered wait may start up to 2 µs early (it is rounded
					// down so as never to outlast the true one), never late.
					if !got.Allowed && (got.RetryAfter-want.RetryAfter > time.Microsecond || want.RetryAfter-got.RetryAfter > 2*time.Microsecond) {
						t.Fatalf("request %d (cost %d): RetryAfter %v, the oracle says %v", i, n, got.RetryAfter, want.RetryAfter)
					}
				}
				if calls := cached.calls.Load(); calls > requests*3/4 {
					t.Errorf("%d of %d requests reached the store; the deny cache should answer most denials", calls, requests)
				}
				t.Logf("%d of %d requests reached the store", cached.calls.Load(), requests)
			})
		})
	}
}

func TestDenyCacheCostsTheStoreOneCallPerRetryAfter(t *testing.T) {
	synctest.Test(t, testDenyCacheCostsTheStoreOneCallPerRetryAfter)
}

func testDenyCacheCostsTheStoreOneCallPerRetryAfter(t *testing.T) {
	store := &countingStore{Store: memory.New(memory.WithSweepInterval(0))}
	l, err := ratelimit.New(store, ratelimit.PerMinute(10), ratelimit.WithDenyCache(100))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	denied := 0
	// 200 requests a second (2,000 with RATELIMIT_SLOW_TESTS) for 30 s
	// under 10 per minute.
	perSecond := sized(2000, 200)
	requests := 30 * perSecond
	for range requests {
		time.Sleep(time.Second / time.Duration(perSecond))
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:1"
		h.ServeHTTP(w, r)
		if w.Code == http.StatusTooManyRequests {
			denied++
			if w.Header().Get("Retry-After") == "" {
				t.Fatal("a cached denial has no Retry-After")
			}
		}
	}
	// 10 admitted in the first instant, then one token every 6 s: the
	// take that empties the bucket is remembered until the next token, so
	// the store is called once per token: 10 + 4.
	if calls := store.calls.Load(); calls != 14 {
		t.Errorf("a flood of %d requests cost the store %d calls, want one per token, 14", requests, calls)
	}
	if admitted := requests - denied; admitted != 10+4 {
		t.Errorf("%d admitted in 30 s, want 14 (10 at once, then one per 6 s)", admitted)
	}
}

func TestDenyCacheIsBounded(t *testing.T) {
	store := memory.New()
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerHour(1), ratelimit.WithDenyCache(256))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20_000 {
		l.Allow(context.Background(), strconv.Itoa(i/2)) // each key: one pass, one denial
	}
	if n := ratelimit.DenyCacheLen(l); n > 256 {
		t.Errorf("the deny cache holds %d keys, bound 256", n)
	}
}

// TestDenyCacheAnswersAnInvalidRequestAsTheStoreDoes: a request whose cost
// exceeds the capacity gets 500 whether or not the deny cache holds its
// key, never a 429 from the cache.
func TestDenyCacheAnswersAnInvalidRequestAsTheStoreDoes(t *testing.T) {
	for _, keys := range []int{0, 100} {
		t.Run("deny cache of "+strconv.Itoa(keys), func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			l, err := ratelimit.New(&remoteStore{Store: mem}, ratelimit.PerMinute(1), ratelimit.WithDenyCache(keys),
				ratelimit.WithCost(func(r *http.Request) int { n, _ := strconv.Atoi(r.Header.Get("Cost")); return n }),
				ratelimit.WithErrorHandler(func(*http.Request, error) {}))
			if err != nil {
				t.Fatal(err)
			}
			var codes []int
			for _, cost := range []string{"1", "2", "1"} {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.Header.Set("Cost", cost)
				l.Admit(w, r)
				codes = append(codes, w.Code)
			}
			if want := []int{200, 500, 429}; !equalInts(codes, want) {
				t.Errorf("costs 1, 2, 1 under 1 per minute: %v, want %v", codes, want)
			}
		})
	}
}

// TestDenyCacheRetryAfterIsTheLongestWait: under 1 per minute and 1 per
// hour, the second request waits an hour, with the deny cache or without.
func TestDenyCacheRetryAfterIsTheLongestWait(t *testing.T) {
	for _, keys := range []int{0, 100} {
		t.Run("deny cache of "+strconv.Itoa(keys), func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			l, err := ratelimit.New(&remoteStore{Store: mem}, ratelimit.PerMinute(1), ratelimit.WithDenyCache(keys),
				ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(1)}))
			if err != nil {
				t.Fatal(err)
			}
			var retry []string
			for range 3 {
				w := httptest.NewRecorder()
				l.Admit(w, httptest.NewRequest(http.MethodGet, "/", nil))
				retry = append(retry, w.Header().Get("Retry-After"))
			}
			if retry[0] != "" || retry[1] != "3600" || retry[2] != "3600" {
				t.Errorf("Retry-After of three requests: %q, want none, then 3600 twice", retry)
			}
		})
	}
}

// TestDenyCacheRetryAfterNeverEndsEarly: the wait the deny cache tells is
// counted from when the store's answer came, not from when the call was
// sent: on a store that decides 20 ms after it is asked, a client told the
// cache's Retry-After and coming back then finds its token there (the
// store's own wait, 980 ms here, not 960).
func TestDenyCacheRetryAfterNeverEndsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.New()
		defer mem.Close()
		l, err := ratelimit.New(remoteLateStore{lateStore{mem}}, ratelimit.PerSecond(1), ratelimit.WithPlainKeys())
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		l.Allow(ctx, "k") // decided at 20 ms: the next token at 1.02 s
		if res, _ := l.Allow(ctx, "k"); res.Allowed {
			t.Fatal("a second token of a burst of 1")
		}
		start := time.Now() // 40 ms
		res, _ := l.Allow(ctx, "k")
		if took := time.Since(start); res.Allowed || took != 0 {
			t.Fatalf("%+v after %v; want the deny cache's denial, at once", res, took)
		}
		if res.RetryAfter < 980*time.Millisecond || res.RetryAfter > time.Second {
			t.Fatalf("the cache's RetryAfter %v, want 980ms to 1s: the token comes 980ms later", res.RetryAfter)
		}
		time.Sleep(res.RetryAfter)
		if res, _ := l.Allow(ctx, "k"); !res.Allowed {
			t.Fatalf("after the cache's RetryAfter: %+v, want allowed", res)
		}
	})
}

package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// plainStore hides every capability of the store it wraps but Store: the
// shaping fallback's store.
type plainStore struct{ ratelimit.Store }

func (plainStore) Local() bool { return true }

// shapeRun sends k requests at once through a limiter of 10 per second,
// burst 1, shaping up to 250 ms, over store, and returns when each was
// served (sorted) and how many were denied.
func shapeRun(t *testing.T, store ratelimit.Store, k int) (served []time.Duration, denied int) {
	l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(1),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), ratelimit.WithMaxDelay(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var mu sync.Mutex
	h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, time.Since(start))
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("X-Key", "k")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code == http.StatusTooManyRequests {
				mu.Lock()
				denied++
				mu.Unlock()
				if rec.Header().Get("Retry-After") == "" {
					t.Error("a denial without Retry-After")
				}
			}
		})
	}
	wg.Wait()
	sort.Slice(served, func(i, j int) bool { return served[i] < served[j] })
	return served, denied
}

func TestShapingDelaysWithinTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		defer store.Close()
		served, denied := shapeRun(t, store, 4)
		want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}
		if denied != 1 || len(served) != 3 || served[0] != want[0] || served[1] != want[1] || served[2] != want[2] {
			t.Fatalf("served at %v and %d denied; want %v and 1 denied (it would wait 300ms)", served, denied, want)
		}
	})
}

func TestShapingFallbackWaitsAndDecidesAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		defer store.Close()
		served, denied := shapeRun(t, plainStore{store}, 2)
		if denied != 0 || len(served) != 2 || served[0] != 0 || served[1] != 100*time.Millisecond {
			t.Fatalf("served at %v and %d denied; want [0 100ms] and none", served, denied)
		}
	})
}

func TestShapingEndsWithTheRequestsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		defer store.Close()
		l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(1), ratelimit.WithMaxDelay(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		servedAt := []time.Duration{}
		start := time.Now()
		h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			servedAt = append(servedAt, time.Since(start))
		}))
		do := func(ctx context.Context) {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		}
		do(context.Background()) // the burst
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		do(ctx) // booked for 100ms, gone at 50ms: not served, booking given back
		do(context.Background())
		if len(servedAt) != 2 || servedAt[1] != 100*time.Millisecond {
			t.Fatalf("served at %v, want [0 100ms]: the gone request's token came back", servedAt)
		}
	})
}

func TestWithMaxDelayRefusesBadBounds(t *testing.T) {
	store := memory.New()
	defer store.Close()
	for _, d := range []time.Duration{-time.Second, ratelimit.MaxPeriod + 1} {
		if _, err := ratelimit.New(store, ratelimit.PerSecond(1), ratelimit.WithMaxDelay(d)); err == nil {
			t.Errorf("WithMaxDelay(%v) accepted", d)
		}
	}
}

func ExampleWithMaxDelay() {
	store := memory.New()
	defer store.Close()
	// Smooth bursts: a request up to 500 ms over its budget waits, as
	// nginx's limit_req delay does; one further over is refused.
	l, _ := ratelimit.New(store, ratelimit.PerSecond(20), ratelimit.WithMaxDelay(500*time.Millisecond))
	smooth := l.Handler(http.NotFoundHandler()) // mount it as any middleware
	_ = smooth
	fmt.Println(l)
	// Output: default: 20 per 1s
}

// Every way in shapes alike: AllowN, AdmitKey and Admit wait for a token
// that comes within WithMaxDelay; a report (AllowN of 0) never waits.
func TestShapingIsTheSameForEveryEntry(t *testing.T) {
	entries := []struct {
		name  string
		admit func(l *ratelimit.Limiter) bool
	}{
		{"AllowN", func(l *ratelimit.Limiter) bool {
			res, err := l.AllowN(context.Background(), "ip:192.0.2.1", 1)
			return err == nil && res.Allowed
		}},
		{"AdmitKey", func(l *ratelimit.Limiter) bool {
			ok, _ := l.AdmitKey(context.Background(), "ip:192.0.2.1", http.Header{})
			return ok
		}},
		{"Admit", func(l *ratelimit.Limiter) bool {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			return l.Admit(httptest.NewRecorder(), r)
		}},
	}
	for _, e := range entries {
		t.Run(e.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memory.New()
				defer store.Close()
				l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(1), ratelimit.WithMaxDelay(150*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var at []time.Duration
				for range 3 {
					if e.admit(l) {
						at = append(at, time.Since(start))
					}
				}
				if fmt.Sprint(at) != fmt.Sprint([]time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}) {
					t.Fatalf("admitted at %v, want [0s 100ms 200ms]", at)
				}
				res, err := l.AllowN(context.Background(), "ip:192.0.2.1", 0)
				if err != nil || time.Since(start) != 200*time.Millisecond {
					t.Fatalf("a report: %+v, %v, waited until %v; want no wait", res, err, time.Since(start))
				}
			})
		})
	}
}

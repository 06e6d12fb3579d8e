package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// The shaping tests of requests whose deadline is short: of the wait, of
// the store's round trip, of a second decision's budget.

// deadlineDo returns a function that sends h a GET with X-Key k and a
// deadline, and reports its answer and how long it took.
func deadlineDo(h http.Handler) func(deadline time.Duration) (*httptest.ResponseRecorder, time.Duration) {
	return func(deadline time.Duration) (*httptest.ResponseRecorder, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		r.Header.Set("X-Key", "k")
		start := time.Now()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w, time.Since(start)
	}
}

// TestShapingDeniesAtOnceWhatItsDeadlineCannotWaitFor: a request whose
// deadline comes before its tokens is denied at once (429, Retry-After),
// whether the limiter books (one token bucket on a Reserver), waits and
// decides again (a store that cannot book) or has two policies; nothing
// is told to the error handler; a request whose deadline leaves time
// for the wait is served once its tokens come.
func TestShapingDeniesAtOnceWhatItsDeadlineCannotWaitFor(t *testing.T) {
	tests := []struct {
		name  string
		store func(ratelimit.Store) ratelimit.Store
		opts  []ratelimit.Option
	}{
		{"booking", func(s ratelimit.Store) ratelimit.Store { return s }, nil},
		{"waiting and deciding again", func(s ratelimit.Store) ratelimit.Store { return plainStore{s} }, nil},
		{"two policies", func(s ratelimit.Store) ratelimit.Store { return s },
			[]ratelimit.Option{ratelimit.WithPolicy(ratelimit.Policy{Name: "hour", Limit: ratelimit.PerHour(100)})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := memory.New()
				defer mem.Close()
				var told []error
				opts := append([]ratelimit.Option{ratelimit.WithMaxDelay(time.Second),
					ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) })}, tt.opts...)
				l, err := ratelimit.New(tt.store(mem), ratelimit.PerSecond(10).WithBurst(1), opts...)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var servedAt []time.Duration
				h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
					servedAt = append(servedAt, time.Since(start))
				}))
				do := deadlineDo(h)
				do(time.Hour) // the burst
				w, _ := do(50 * time.Millisecond)
				if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" || time.Since(start) != 0 {
					t.Fatalf("a request whose deadline is 50ms before its token: %d Retry-After %q after %v; want 429, 1, at once",
						w.Code, w.Header().Get("Retry-After"), time.Since(start))
				}
				if w, _ := do(200 * time.Millisecond); w.Code != http.StatusOK {
					t.Fatalf("a request whose deadline leaves the wait: %d", w.Code)
				}
				if want := []time.Duration{0, 100 * time.Millisecond}; fmt.Sprint(servedAt) != fmt.Sprint(want) || len(told) != 0 {
					t.Fatalf("served at %v, error handler told %v; want %v and nothing", servedAt, told, want)
				}
			})
		})
	}
}

// lateStore answers as the memory store does, 20 ms later (synctest time).
type lateStore struct{ *memory.Store }

func (s lateStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Store.AllowN(ctx, key, l, n)
}

func (s lateStore) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	time.Sleep(20 * time.Millisecond)
	return s.Store.AllowAll(ctx, takes, results)
}

func (s lateStore) ReserveN(ctx context.Context, key string, l ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Store.ReserveN(ctx, key, l, n, maxWait)
}

// TestShapingCountsTheStoresTimeAgainstTheDeadline: on a store that
// answers 20 ms after it is asked, a request whose deadline comes just
// before its token, or before the store could decide it again after the
// wait, is denied as soon as the store answers (429) or served, never held
// to its deadline and refused 503, nor the error handler told, on every
// path; one whose deadline leaves the wait and the calls is served.
func TestShapingCountsTheStoresTimeAgainstTheDeadline(t *testing.T) {
	tests := []struct {
		name  string
		store func(*memory.Store) ratelimit.Store
		opts  []ratelimit.Option
	}{
		{"booking", func(s *memory.Store) ratelimit.Store { return lateStore{s} }, nil},
		{"waiting and deciding again", func(s *memory.Store) ratelimit.Store { return plainStore{lateStore{s}} }, nil},
		{"two policies", func(s *memory.Store) ratelimit.Store { return lateStore{s} },
			[]ratelimit.Option{ratelimit.WithPolicy(ratelimit.Policy{Name: "hour", Limit: ratelimit.PerHour(100)})}},
	}
	for _, tt := range tests {
		// 990 ms: the deadline comes before the token; 1010 ms: after it,
		// but before a second decision of the store could follow the wait
		// (served where the limiter books); 1500 ms: after both.
		for _, deadline := range []time.Duration{990 * time.Millisecond, 1010 * time.Millisecond, 1500 * time.Millisecond} {
			t.Run(fmt.Sprint(tt.name, "/", deadline), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					mem := memory.New()
					defer mem.Close()
					var told []error
					opts := append([]ratelimit.Option{ratelimit.WithMaxDelay(2 * time.Second),
						ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) })}, tt.opts...)
					l, err := ratelimit.New(tt.store(mem), ratelimit.PerSecond(1), opts...)
					if err != nil {
						t.Fatal(err)
					}
					h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
					do := deadlineDo(h)
					do(time.Hour) // the burst, decided 20 ms in: the next token 1 s later
					w, took := do(deadline)
					denied := w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") != "" && took <= 40*time.Millisecond
					if !denied && w.Code != http.StatusOK || len(told) != 0 || deadline == 1500*time.Millisecond && w.Code != http.StatusOK {
						t.Fatalf("%d Retry-After %q after %v, error handler told %v; want 429 once the store answered or 200 (200 for 1.5 s), nothing told",
							w.Code, w.Header().Get("Retry-After"), took, told)
					}
				})
			})
		}
	}
}

// remoteLateStore is lateStore as a shared store (not Local): the limiter
// gives it a time budget and a deny cache.
type remoteLateStore struct{ lateStore }

func (remoteLateStore) Local() bool { return false }

// TestShapingLeavesTheSecondCallItsBudget: where a request is decided
// again after its wait (two policies), and its first decision came from
// the deny cache at no cost, a wait that leaves the second store call less
// than the time budget before the deadline is not begun: the request is
// denied at once (429), not held and refused 503 when the store's answer
// comes after its deadline.
func TestShapingLeavesTheSecondCallItsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.New()
		defer mem.Close()
		var told []error
		l, err := ratelimit.New(remoteLateStore{lateStore{mem}}, ratelimit.PerSecond(1), ratelimit.WithPlainKeys(),
			ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Key")), ratelimit.WithMaxDelay(2*time.Second),
			ratelimit.WithPolicy(ratelimit.Policy{Name: "hour", Limit: ratelimit.PerHour(100)}),
			ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) }))
		if err != nil {
			t.Fatal(err)
		}
		h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		do := deadlineDo(h)
		do(time.Hour)                  // the burst: the next token 1 s after the store decided it
		do(10 * time.Millisecond)      // denied by the store (its wait is past the deadline): the deny cache holds it
		w, took := do(1 * time.Second) // the cache's wait is 960 ms: 40 ms left, less than the 100 ms budget
		if w.Code != http.StatusTooManyRequests || took != 0 || len(told) != 0 {
			t.Fatalf("%d after %v, error handler told %v; want 429 at once, nothing told", w.Code, took, told)
		}
	})
}

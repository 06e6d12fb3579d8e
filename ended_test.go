package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestRequestDeadlineIsNotServed: the server's deadline on the request
// runs out while the store is called. Whatever the failure policy, the
// request is not served (fail open would serve a key out of budget, the
// fallback would spend a budget of its own): 503 from Admit and AdmitKey,
// each told to the error handler, and the breaker, which counts the
// store's failures only, stays closed.
func TestRequestDeadlineIsNotServed(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
	}{
		{"fail open", nil},
		{"fail closed", []ratelimit.Option{ratelimit.WithFailClosed()}},
		{"local fallback", []ratelimit.Option{ratelimit.WithFallback(memory.New(), 1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := &blockingStore{release: make(chan struct{})}
			defer close(store.release)
			var told []error
			b := ratelimit.NewBreaker(1, time.Minute)
			l, err := ratelimit.New(store, ratelimit.PerMinute(10), append(tt.opts, ratelimit.WithTimeout(time.Minute), ratelimit.WithBreaker(b),
				ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) }))...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			if code := serveStatus(l, ctx); code != http.StatusServiceUnavailable {
				t.Errorf("status %d, want 503", code)
			}
			// AdmitKey (a gRPC call's entry) answers as Admit does
			ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel2()
			if ok, code := l.AdmitKey(ctx2, "ip:192.0.2.1", http.Header{}); ok || code != http.StatusServiceUnavailable {
				t.Errorf("AdmitKey: %v, %d; want false, 503", ok, code)
			}
			if len(told) != 2 || !errors.Is(told[0], context.DeadlineExceeded) || !errors.Is(told[1], context.DeadlineExceeded) {
				t.Errorf("error handler told %v, want two DeadlineExceeded", told)
			}
			if b.State() != ratelimit.BreakerClosed {
				t.Errorf("breaker %v, want closed", b.State())
			}
		})
	}
}

// TestEndedRequestGetsNoBudget: a key out of budget on the memory store,
// asked by requests whose own deadline has passed, under the default
// failure policy (fail open): AllowN is not Allowed and returns the
// context's error, Wait returns it, the middleware answers 503 without
// running the handler, and the key's budget is untouched.
func TestEndedRequestGetsNoBudget(t *testing.T) {
	store := memory.New()
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerHour(2), ratelimit.WithKeyFunc(func(*http.Request) (string, error) { return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	for range 2 {
		if res, err := l.AllowN(bg, "k", 1); err != nil || !res.Allowed {
			t.Fatalf("spending the budget: %+v, %v", res, err)
		}
	}
	ended, cancel := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel()
	if res, err := l.AllowN(ended, "k", 1); res.Allowed || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AllowN past its deadline: %+v, %v; want not allowed, DeadlineExceeded", res, err)
	}
	if err := l.Wait(ended, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait past its deadline: %v, want DeadlineExceeded", err)
	}
	served := false
	w := httptest.NewRecorder()
	l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true })).
		ServeHTTP(w, httptest.NewRequestWithContext(ended, http.MethodGet, "/", nil))
	if served || w.Code != http.StatusServiceUnavailable {
		t.Errorf("middleware past the deadline: served %v, status %d; want not served, 503", served, w.Code)
	}
	if res, _ := l.AllowN(bg, "k", 0); res.Remaining != 0 {
		t.Errorf("the key's budget after: %d left, want 0", res.Remaining)
	}
}

// lateContext is past its deadline, but not yet marked done: as a
// context is in the instant between its deadline and its timer.
type lateContext struct{ context.Context }

func (lateContext) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestStoreFailureAtTheRequestDeadlineIsNotTheStores: a store client that
// holds its socket to the request's deadline fails with an i/o timeout at
// that instant, possibly before the context is marked done. The breaker
// (threshold 1) does not count it: a client that makes its requests reach
// the limiter at their deadline cannot push every request to the failure
// policy.
func TestStoreFailureAtTheRequestDeadlineIsNotTheStores(t *testing.T) {
	store := &countingStore{Store: failingStore{}}
	b := ratelimit.NewBreaker(1, time.Minute)
	l, err := ratelimit.New(store, ratelimit.PerMinute(10), ratelimit.WithBreaker(b), ratelimit.WithTimeout(0), ratelimit.WithPlainKeys())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res, err := l.AllowN(lateContext{context.Background()}, "k", 1); res.Allowed || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errDown) {
			t.Fatalf("AllowN at its deadline: %+v, %v; want not allowed, DeadlineExceeded and the store's error", res, err)
		}
	}
	if b.State() != ratelimit.BreakerClosed || store.calls.Load() != 3 {
		t.Errorf("breaker %v after %d calls, want closed after 3", b.State(), store.calls.Load())
	}
}

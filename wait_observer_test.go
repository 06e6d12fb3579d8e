package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// delays records the Delay of every decision an observer is told of.
type delays struct {
	mu sync.Mutex
	d  []time.Duration
}

func (r *delays) observer() ratelimit.Option {
	return ratelimit.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) {
		r.mu.Lock()
		r.d = append(r.d, d.Delay)
		r.mu.Unlock()
	}})
}

// TestWaitIsObserved: the observer is told of each Wait's booking, with
// the wait it asked for.
func TestWaitIsObserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		defer store.Close()
		var seen delays
		l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(1), seen.observer())
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := l.Wait(context.Background(), "k"); err != nil {
				t.Fatal(err)
			}
		}
		want := []time.Duration{0, 100 * time.Millisecond, 100 * time.Millisecond}
		if len(seen.d) != 3 || seen.d[0] != want[0] || seen.d[1] != want[1] || seen.d[2] != want[2] {
			t.Fatalf("observed delays %v, want %v", seen.d, want)
		}
	})
}

// TestShapingIsObserved: a shaped request is observed with its delay.
func TestShapingIsObserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.New()
		defer mem.Close()
		for _, store := range []ratelimit.Store{mem, plainStore{mem}} {
			var seen delays
			l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(1), seen.observer(),
				ratelimit.WithMaxDelay(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			h := l.Handler(hello)
			for range 2 {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			}
			if len(seen.d) != 2 || seen.d[0] != 0 || seen.d[1] != 100*time.Millisecond {
				t.Fatalf("%T: observed delays %v, want [0 100ms]", store, seen.d)
			}
			time.Sleep(time.Second) // in the bubble: the bucket is full again

		}
	})
}

// TestWaitBehindOpenBreaker: without a fallback (WithFailOpen), once the
// breaker opens, Wait fails at once without calling the store, and tells
// the error handler.
func TestWaitBehindOpenBreaker(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	flaky := &switchStore{Store: mem}
	var told []error
	l, err := ratelimit.New(flaky, ratelimit.PerSecond(10), ratelimit.WithPlainKeys(), ratelimit.WithFailOpen(),
		ratelimit.WithBreaker(ratelimit.NewBreaker(2, time.Hour)),
		ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) }))
	if err != nil {
		t.Fatal(err)
	}
	flaky.down.Store(true)
	for range 2 {
		if err := l.Wait(context.Background(), "k"); !errors.Is(err, errDown) {
			t.Fatalf("Wait on a failing store = %v, want its error", err)
		}
	}
	calls := flaky.calls.Load()
	if err := l.Wait(context.Background(), "k"); err == nil {
		t.Fatal("Wait behind an open breaker succeeded")
	}
	if flaky.calls.Load() != calls {
		t.Fatal("Wait called the store behind an open breaker")
	}
	if len(told) != 3 {
		t.Fatalf("the error handler was told %d errors, want 3", len(told))
	}
}

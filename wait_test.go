package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// x/time/rate's TestWaitSimple, TestWaitCancel and TestWaitTimeout on a
// Limiter over the memory store (a Reserver), in a synctest bubble: 10 per
// second, burst 3.
func TestWaitLikeXTimeRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		defer store.Close()
		l, err := ratelimit.New(store, ratelimit.PerSecond(10).WithBurst(3), ratelimit.WithName("out"))
		if err != nil {
			t.Fatal(err)
		}
		bg := context.Background()

		cancelled, cancel := context.WithCancel(bg)
		cancel()
		if err := l.Wait(cancelled, "k"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait on a cancelled context = %v, want context.Canceled", err)
		}
		if err := l.WaitN(bg, "k", 4); !errors.Is(err, ratelimit.ErrCostExceedsCapacity) {
			t.Fatalf("WaitN above the burst = %v, want ErrCostExceedsCapacity", err)
		}
		start := time.Now()
		if err := l.WaitN(bg, "k", 3); err != nil || time.Since(start) != 0 {
			t.Fatalf("WaitN(3) on a full bucket = %v after %v, want at once", err, time.Since(start))
		}

		// Cancelled while waiting: the tokens are given back.
		ctx, cancel := context.WithCancel(bg)
		time.AfterFunc(100*time.Millisecond, cancel)
		if err := l.WaitN(ctx, "k", 3); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitN cancelled while waiting = %v", err)
		}
		start = time.Now()
		if err := l.WaitN(bg, "k", 3); err != nil || time.Since(start) != 200*time.Millisecond {
			t.Fatalf("WaitN(3) after a refund = %v after %v, want 200ms (one token refilled, two to come)", err, time.Since(start))
		}

		// A deadline before the tokens: an error at once, nothing booked.
		ctx, cancel = context.WithTimeout(bg, 100*time.Millisecond)
		defer cancel()
		start = time.Now()
		if err := l.WaitN(ctx, "k", 3); err == nil || time.Since(start) != 0 {
			t.Fatalf("WaitN past the deadline = %v after %v, want an error at once", err, time.Since(start))
		}
		start = time.Now()
		if err := l.Wait(bg, "k"); err != nil || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("Wait after a refused booking = %v after %v, want 100ms", err, time.Since(start))
		}
	})
}

func ExampleLimiter_Wait() {
	store := memory.New()
	defer store.Close()
	// A third-party API allows 5 calls a second: call it no faster.
	api, _ := ratelimit.New(store, ratelimit.PerSecond(5), ratelimit.WithName("partner-api"))
	for range 3 {
		if err := api.Wait(context.Background(), "calls"); err != nil {
			return
		}
		// call the API
	}
	fmt.Println("3 calls within the budget")
	// Output: 3 calls within the budget
}

// TestWaitCountsTheStoresTimeAgainstTheDeadline: on a store that answers
// 20 ms after it is asked, WaitN whose deadline comes just before its
// token fails as soon as the store answers, as one whose deadline comes
// well before it does, and gives its booking back: the token is there
// when it comes.
func TestWaitCountsTheStoresTimeAgainstTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memory.New()
		defer mem.Close()
		l, err := ratelimit.New(lateStore{mem}, ratelimit.PerSecond(1))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		l.Allow(ctx, "k") // the burst, decided 20 ms in: the next token 1 s later
		start := time.Now()
		wctx, cancel := context.WithTimeout(ctx, 990*time.Millisecond)
		defer cancel()
		err = l.Wait(wctx, "k")
		if err == nil || errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 40*time.Millisecond {
			t.Fatalf("Wait with a deadline just before the token: %v after %v; want its error at once", err, time.Since(start))
		}
		time.Sleep(time.Until(start.Add(time.Second)))
		if res, _ := l.Allow(ctx, "k"); !res.Allowed {
			t.Fatalf("the token, once it came: %+v, want it there (the booking given back)", res)
		}
	})
}

// TestWaitWaitsForTheFallbackInAnOutage: while a store that books is down,
// WaitN's tries are the fallback's decisions, and a denial of the
// fallback's is waited out as its RetryAfter says, within the deadline:
// WaitN takes a token every half second of PerSecond(2), as the
// middleware on the same limit admits. It failed at once, as if the store
// had refused a booking past the deadline.
func TestWaitWaitsForTheFallbackInAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &flakyReserver{Store: memory.New()} // down throughout
		defer s.Close()
		s.down.Store(true)
		l, err := ratelimit.New(s, ratelimit.PerSecond(2), ratelimit.WithPlainKeys(),
			ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for i := range 6 {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := l.Wait(ctx, "k")
			cancel()
			if err != nil {
				t.Fatalf("Wait %d at %v: %v; want a token of the fallback's", i, time.Since(start), err)
			}
		}
		// 2 at once (the burst), then one every 0.5 s, give or take the
		// breaker's first failures' time budgets
		if took := time.Since(start); took < 2*time.Second || took > 2500*time.Millisecond {
			t.Fatalf("6 Waits took %v, want about 2 s", took)
		}
	})
}

// flakyReserver is a memory store that books, seen as a remote one (not
// Local: a limiter gives it a fallback), that fails while down.
type flakyReserver struct {
	*memory.Store
	down atomic.Bool
}

func (*flakyReserver) Local() bool { return false }

func (s *flakyReserver) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if s.down.Load() {
		return ratelimit.Result{}, errDown
	}
	return s.Store.AllowN(ctx, key, l, n)
}

func (s *flakyReserver) ReserveN(ctx context.Context, key string, l ratelimit.Limit, n int, maxWait time.Duration) (ratelimit.Reservation, error) {
	if s.down.Load() {
		return ratelimit.Reservation{}, errDown
	}
	return s.Store.ReserveN(ctx, key, l, n, maxWait)
}

// TestWaitPaysWhatTheFallbackAdmitted: what the fallback admitted to
// WaitN while the store was down is owed to the store, and the first
// WaitN once it answers books the debt's tokens with its own, as a take
// pays it: it waits for them. Bookings paid nothing, and WaitN and the
// Transport had the store's budget and the fallback's in turn.
func TestWaitPaysWhatTheFallbackAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &flakyReserver{Store: memory.New()}
		defer s.Close()
		l, err := ratelimit.New(s, ratelimit.PerSecond(2).WithBurst(10), ratelimit.WithPlainKeys(),
			ratelimit.WithBreaker(nil), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		wait := func() time.Duration {
			start := time.Now()
			if err := l.Wait(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		for range 10 { // the store's burst
			wait()
		}
		s.down.Store(true)
		for range 10 { // the fallback's share, owed to the store
			if d := wait(); d != 0 {
				t.Fatalf("the fallback's burst waited %v", d)
			}
		}
		s.down.Store(false)
		// 1 token and the 9 owed that fit with it, 2 a second: 5 s
		if d := wait(); d < 4900*time.Millisecond {
			t.Fatalf("the first Wait after the outage waited %v, want about 5 s: its own token and the debt", d)
		}
	})
}

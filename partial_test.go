package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// partStore is a shared store of which a part fails: the keys holding
// "down" (as a Redis Cluster master that hangs or refuses serves some
// slots), while it answers the others.
type partStore struct{ mem *memory.Store }

func (partStore) Local() bool { return false }

func (s partStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if strings.Contains(key, "down") {
		return ratelimit.Result{}, errDown
	}
	return s.mem.AllowN(ctx, key, l, n)
}

// TestBreakerOpensOnTheStoresOutageNotAPart: while the store answers some
// keys, failures of the others, any number in a row, leave the breaker
// closed: the failure policy answers those keys, the store the rest (an
// open breaker would send every key to the fallback). Once the store has
// answered nothing for a time budget, failures count, and the breaker
// opens after its threshold.
func TestBreakerOpensOnTheStoresOutageNotAPart(t *testing.T) {
	const budget = 50 * time.Millisecond
	mem := memory.New()
	defer mem.Close()
	b := ratelimit.NewBreaker(3, time.Hour)
	l, clock := breakerLimiter(t, partStore{mem}, ratelimit.PerMinute(1000), budget, b)
	ctx := context.Background()
	for i := range 20 {
		if res, err := l.Allow(ctx, "up"); err != nil || !res.Allowed {
			t.Fatalf("round %d: a key the store serves: %+v, %v", i, res, err)
		}
		for range 10 { // ten failures in a row, each round
			if _, err := l.Allow(ctx, "down"); err == nil {
				t.Fatal("a key the store fails: no error")
			}
		}
		if b.State() != ratelimit.BreakerClosed {
			t.Fatalf("round %d: breaker %v while the store answers other keys, want closed", i, b.State())
		}
		clock.Add(budget / 4)
	}
	clock.Add(budget + time.Millisecond) // the store has answered nothing for a budget
	for range 3 {
		l.Allow(ctx, "down")
	}
	if b.State() != ratelimit.BreakerOpen {
		t.Fatalf("breaker %v after 3 failures of a store silent for a budget, want open", b.State())
	}
}

// shedStore sheds every decision (ErrNotSent), as a group commit does
// while its queue is full: it never answers.
type shedStore struct{}

func (shedStore) Local() bool { return false }

func (shedStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, fmt.Errorf("queue full: %w", ratelimit.ErrNotSent)
}

// TestColdStartShedsOpenTheBreakerABudgetLater: a store that has never
// answered and sheds decisions (the first burst of a cold start, while
// connections are dialled) leaves the breaker closed for a time budget
// from the first decision it shed, then opens it: a store that never
// answers is still found out.
func TestColdStartShedsOpenTheBreakerABudgetLater(t *testing.T) {
	const budget = 50 * time.Millisecond
	b := ratelimit.NewBreaker(1, time.Hour)
	l, clock := breakerLimiter(t, shedStore{}, ratelimit.PerMinute(10), budget, b)
	ctx := context.Background()
	for range 10 {
		l.Allow(ctx, "k")
		clock.Add(budget / 10)
	}
	if b.State() != ratelimit.BreakerClosed {
		t.Fatalf("breaker %v within a budget of the first shed decision, want closed", b.State())
	}
	clock.Add(budget/10 + time.Millisecond)
	l.Allow(ctx, "k")
	if b.State() != ratelimit.BreakerOpen {
		t.Fatalf("breaker %v a budget after the first shed decision of a store that never answered, want open", b.State())
	}
}

// slowStore answers after a delay, as a store across a network does.
type slowStore struct {
	ratelimit.Store
	delay time.Duration
	down  atomic.Bool
}

func (*slowStore) Local() bool { return false }

func (s *slowStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	down := s.down.Load()
	time.Sleep(s.delay) // the store's answer takes this long, whatever ctx says
	if down {
		return ratelimit.Result{}, errDown
	}
	return s.Store.AllowN(ctx, key, l, n)
}

// TestAShortDeadlineProbeStillClosesTheBreaker: the probe of a half-open
// breaker is a request whose own deadline (1 ms) passes before the store
// (healthy again, 5 ms a call) answers. The probe's call runs to the time
// budget all the same and closes the breaker, so that a flood of requests
// with short deadlines cannot hold it half-open; the request itself is
// not served past its deadline.
func TestAShortDeadlineProbeStillClosesTheBreaker(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	store := &slowStore{Store: mem, delay: 5 * time.Millisecond}
	b := ratelimit.NewBreaker(1, time.Minute)
	l, clock := breakerLimiter(t, store, ratelimit.PerMinute(100), time.Second, b)
	ctx := context.Background()
	store.down.Store(true)
	l.Allow(ctx, "k")
	if b.State() != ratelimit.BreakerOpen {
		t.Fatalf("breaker %v after a failure of a store that never answered, want open", b.State())
	}
	store.down.Store(false)
	clock.Add(time.Minute) // the cool-down is over: the next request probes
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if res, err := l.Allow(short, "k"); res.Allowed || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the probe's request, answered past its deadline: %+v, %v; want not allowed, DeadlineExceeded", res, err)
	}
	if b.State() != ratelimit.BreakerClosed {
		t.Fatalf("breaker %v after a probe the store answered past its request's deadline, want closed", b.State())
	}
}

// breakerLimiter is a limiter of limit over store with the time budget and
// breaker b, quiet, on a clock of its own.
func breakerLimiter(t *testing.T, store ratelimit.Store, limit ratelimit.Limit, budget time.Duration, b *ratelimit.Breaker) (*ratelimit.Limiter, *fakeClock) {
	t.Helper()
	l, err := ratelimit.New(store, limit, ratelimit.WithPlainKeys(), ratelimit.WithTimeout(budget),
		ratelimit.WithBreaker(b), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ratelimit.SetClock(l, clock.Now)
	return l, clock
}

// TestAShortDeadlineProbeOfAStoreStillDownIsNotServed: the probe's request
// (its own deadline 1 ms) ends while its call runs on to find the store
// still down: the breaker opens again, and the request is not served
// (fail open would serve it, past its end), with its context's error.
func TestAShortDeadlineProbeOfAStoreStillDownIsNotServed(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	store := &slowStore{Store: mem, delay: 5 * time.Millisecond}
	store.down.Store(true)
	b := ratelimit.NewBreaker(1, time.Minute)
	l, clock := breakerLimiter(t, store, ratelimit.PerMinute(100), time.Second, b)
	ctx := context.Background()
	l.Allow(ctx, "k")
	if b.State() != ratelimit.BreakerOpen {
		t.Fatalf("breaker %v after a failure of a store that never answered, want open", b.State())
	}
	clock.Add(time.Minute)
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if res, err := l.Allow(short, "k"); res.Allowed || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the probe's request, its store still down: %+v, %v; want not allowed, DeadlineExceeded", res, err)
	}
	if b.State() != ratelimit.BreakerOpen {
		t.Fatalf("breaker %v after a failed probe, want open", b.State())
	}
}

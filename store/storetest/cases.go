package storetest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The cases of the suite that any store passes on its own clock.

// slow is a token-bucket limit that refills nothing noticeable during a
// test.
func slow(burst int) ratelimit.Limit { return ratelimit.PerHour(1).WithBurst(burst) }

// slowLimit is a limit of e's algorithm with the given capacity that
// refills nothing during a test: a token an hour, or windows of a day.
func (e *env) slowLimit(capacity int) ratelimit.Limit {
	if e.algo == ratelimit.TokenBucket {
		return slow(capacity)
	}
	return ratelimit.Limit{Rate: capacity, Period: 24 * time.Hour, Algorithm: e.algo}
}

func startsFull(e *env) {
	l := e.slowLimit(5)
	for i := 4; i >= 0; i-- {
		e.expect("k", l, 1, true, i)
	}
	res := e.expect("k", l, 1, false, 0)
	full := 5 * time.Hour // the token bucket's
	if e.algo != ratelimit.TokenBucket {
		full = 48 * time.Hour // at most the end of the next window
	}
	if res.RetryAfter > full || res.ResetAfter > full || res.ResetAfter < res.RetryAfter {
		e.t.Fatalf("RetryAfter = %v, ResetAfter = %v; want 0 < RetryAfter <= ResetAfter <= %v", res.RetryAfter, res.ResetAfter, full)
	}
}

func burstDefaultsToRate(e *env) {
	l := ratelimit.PerHour(3)
	e.expect("k", l, 1, true, 2)
	e.expect("k", l, 2, true, 0)
	e.expect("k", l, 1, false, 0)
}

func costs(e *env) {
	l := e.slowLimit(5)
	e.expect("k", l, 3, true, 2)
	e.expect("k", l, 3, false, 2)
	e.expect("k", l, 2, true, 0)
	e.expect("k", l, 1, false, 0)
}

func reportsOnly(e *env) {
	l := e.slowLimit(3)
	e.expect("k", l, 0, true, 3) // a new key, not created
	e.expect("k", l, 1, true, 2)
	e.expect("k", l, 0, true, 2)
	e.expect("k", l, 0, true, 2)
	e.expect("k", l, 2, true, 0)
	res := e.expect("k", l, 0, true, 0)
	if res.ResetAfter <= 0 {
		e.t.Fatalf("ResetAfter of an empty key = %v, want > 0", res.ResetAfter)
	}
}

func keysIndependent(e *env) {
	l := e.slowLimit(2)
	e.expect("a", l, 2, true, 0)
	e.expect("a", l, 1, false, 0)
	e.expect("b", l, 1, true, 1)
	e.expect("a:b", l, 1, true, 1)
}

func badInput(e *env) {
	ok := ratelimit.PerSecond(10)
	tests := []struct {
		name  string
		key   string
		limit ratelimit.Limit
		n     int
		want  error
	}{
		{"zero rate", "k", ratelimit.Limit{Period: time.Second}, 1, ratelimit.ErrInvalidLimit},
		{"negative rate", "k", ratelimit.Limit{Rate: -1, Period: time.Second}, 1, ratelimit.ErrInvalidLimit},
		{"zero period", "k", ratelimit.Limit{Rate: 1}, 1, ratelimit.ErrInvalidLimit},
		{"negative period", "k", ratelimit.Limit{Rate: 1, Period: -time.Second}, 1, ratelimit.ErrInvalidLimit},
		{"negative burst", "k", ok.WithBurst(-1), 1, ratelimit.ErrInvalidLimit},
		{"unknown algorithm", "k", ok.WithAlgorithm(ratelimit.SlidingLog + 1), 1, ratelimit.ErrInvalidLimit},
		{"negative algorithm", "k", ok.WithAlgorithm(-1), 1, ratelimit.ErrInvalidLimit},
		{"sliding log rate above its bound", "k", ratelimit.Limit{Rate: ratelimit.MaxSlidingLogRate + 1, Period: time.Hour, Algorithm: ratelimit.SlidingLog}, 1, ratelimit.ErrInvalidLimit},
		{"cost above a window's rate", "k", ok.WithBurst(50).WithAlgorithm(ratelimit.FixedWindow), 11, ratelimit.ErrCostExceedsCapacity},
		{"negative cost", "k", ok, -1, ratelimit.ErrInvalidCost},
		{"cost above burst", "k", ok.WithBurst(3), 4, ratelimit.ErrCostExceedsCapacity},
		{"cost above rate", "k", ok, 11, ratelimit.ErrCostExceedsCapacity},
		{"empty key", "", ok, 1, ratelimit.ErrEmptyKey},
	}
	for _, tt := range tests {
		_, err := e.store.AllowN(context.Background(), tt.key, tt.limit, tt.n)
		if !errors.Is(err, tt.want) {
			e.t.Errorf("%s: AllowN(%q, %+v, %d) error = %v, want %v", tt.name, tt.key, tt.limit, tt.n, err, tt.want)
		}
	}
	// Nothing was taken by the refused calls.
	e.expect("k", ok, 10, true, 0)
}

func doneContext(e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.store.AllowN(ctx, "k", e.slowLimit(1), 1); !errors.Is(err, context.Canceled) {
		e.t.Fatalf("AllowN with a cancelled context: error = %v, want context.Canceled", err)
	}
	e.expect("k", e.slowLimit(1), 1, true, 0) // the cancelled call took nothing
}

func concurrentCapacity(e *env) {
	const workers, calls, burst = 16, 20, 50
	l := e.slowLimit(burst)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, failures := 0, []error{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				res, err := e.store.AllowN(context.Background(), "k", l, 1)
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				} else if res.Allowed {
					admitted++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		e.t.Fatalf("%d calls failed, first: %v", len(failures), failures[0])
	}
	if admitted != burst {
		e.t.Fatalf("%d concurrent calls admitted %d, want exactly the burst, %d", workers*calls, admitted, burst)
	}
}

func passesAfterRetry(e *env) {
	l := ratelimit.PerSecond(4).WithBurst(1) // a token every 250 ms
	res := e.allow("k", l, 1)
	for i := 0; res.Allowed && i < 5; i++ { // more than a refill passed between two calls
		res = e.allow("k", l, 1)
	}
	if res.Allowed {
		e.t.Fatalf("a key at burst 1 admitted 6 calls in a row")
	}
	if res.RetryAfter > 250*time.Millisecond {
		e.t.Fatalf("RetryAfter = %v, want at most one token's refill, 250ms", res.RetryAfter)
	}
	e.wait(res.RetryAfter)
	e.expect("k", l, 1, true, 0)
}

// loweredLimit: a key that used more than a lowered limit (a plan
// downgraded, a LimitFunc's smaller answer) allows has none left,
// never fewer: Remaining is 0, not negative, for a report and for a take;
// the windows and the log deny the take until the use leaves them.
func loweredLimit(e *env) {
	high, low := e.slowLimit(10), e.slowLimit(2)
	for range 4 {
		e.allow("k", high, 1)
	}
	for _, n := range []int{0, 1} {
		res := e.allow("k", low, n)
		if res.Remaining < 0 || res.Remaining > 2 {
			e.t.Fatalf("n %d under a limit of 2 after 4 of 10 used: Remaining %d, want 0 to 2", n, res.Remaining)
		}
		if e.algo != ratelimit.TokenBucket && n == 1 && (res.Allowed || res.Remaining != 0) {
			e.t.Fatalf("a take under a limit of 2 after 4 of 10 used: %+v, want denied with none left", res)
		}
	}
}

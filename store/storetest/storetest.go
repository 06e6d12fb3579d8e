// Package storetest is the conformance suite of [ratelimit.Store]: every
// store of this module passes it, and a store of your own can run it too:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) ratelimit.Store { return mystore.New() })
//	}
//
// [Run] needs nothing but the store and runs its timing cases in real time
// (a few seconds). [RunWithClock] takes a store whose clock the suite sets,
// and checks every decision exactly, including a differential test against
// golang.org/x/time/rate on random timelines. A store that implements
// [ratelimit.MultiStore] also runs the cases of AllowAll: all or nothing,
// mixed algorithms, validation, concurrency and, with the clock, several
// token buckets taken together against one x/time/rate Limiter each.
package storetest

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// env is what a case gets: a fresh store, and a way to let time pass.
type env struct {
	t     *testing.T
	store ratelimit.Store
	// wait lets d pass: it advances the controlled clock, or sleeps in real
	// time.
	wait func(d time.Duration)
	// exact is true under a controlled clock: durations can be checked to
	// the millisecond and time stands still between calls.
	exact bool
	// algo is the algorithm of a case that runs once for each.
	algo ratelimit.Algorithm
}

// allow calls AllowN with a background context and fails the test on error.
func (e *env) allow(key string, l ratelimit.Limit, n int) ratelimit.Result {
	e.t.Helper()
	res, err := e.store.AllowN(context.Background(), key, l, n)
	if err != nil {
		e.t.Fatalf("AllowN(%q, %v, %d): %v", key, l, n, err)
	}
	return res
}

// expect checks the decision and Remaining of one call.
func (e *env) expect(key string, l ratelimit.Limit, n int, allowed bool, remaining int) ratelimit.Result {
	e.t.Helper()
	res := e.allow(key, l, n)
	if res.Allowed != allowed || res.Remaining != remaining {
		e.t.Fatalf("AllowN(%q, %v, %d) = allowed %v, remaining %d; want allowed %v, remaining %d",
			key, l, n, res.Allowed, res.Remaining, allowed, remaining)
	}
	if res.Limit != l {
		e.t.Fatalf("Result.Limit = %v, want %v", res.Limit, l)
	}
	if res.Allowed && res.RetryAfter != 0 {
		e.t.Fatalf("allowed request has RetryAfter %v, want 0", res.RetryAfter)
	}
	if !res.Allowed && res.RetryAfter <= 0 {
		e.t.Fatalf("denied request has RetryAfter %v, want > 0", res.RetryAfter)
	}
	if res.Remaining < 0 || res.ResetAfter < 0 {
		e.t.Fatalf("negative Remaining %d or ResetAfter %v", res.Remaining, res.ResetAfter)
	}
	return res
}

// near fails unless got is within 1 ms of want.
func near(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if !within(got, want, time.Millisecond) {
		t.Fatalf("%s = %v, want %v (±1ms)", what, got, want)
	}
}

type testCase struct {
	name string
	// clock is set for cases that need a controlled clock, realTime for
	// those that measure the store's own clock.
	clock, realTime bool
	// everyAlgorithm runs the case once per algorithm, with env.algo set.
	everyAlgorithm bool
	run            func(e *env)
}

var algorithms = []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.FixedWindow, ratelimit.SlidingWindow, ratelimit.SlidingLog}

// runCase runs c in t, once per algorithm if it asks for that; newEnv
// makes the env of one run. Each run has a store of its own, so runs go
// in parallel, but for the real-time cases, whose timing a loaded machine
// would disturb.
func runCase(t *testing.T, c testCase, newEnv func(t *testing.T) *env) {
	if !c.everyAlgorithm {
		t.Run(c.name, func(t *testing.T) {
			if !c.realTime {
				t.Parallel()
			}
			c.run(newEnv(t))
		})
		return
	}
	for _, a := range algorithms {
		t.Run(a.String()+"/"+c.name, func(t *testing.T) {
			if !c.realTime {
				t.Parallel()
			}
			e := newEnv(t)
			e.algo = a
			c.run(e)
		})
	}
}

// Run runs the conformance suite against stores made by newStore, each case
// with a new store, on the store's own clock: the timing cases wait in real
// time, on limits loose enough for a loaded machine.
func Run(t *testing.T, newStore func(t *testing.T) ratelimit.Store) {
	all := cases()
	if isMulti(newStore(t)) {
		all = append(all, multiCases()...)
	}
	for _, c := range all {
		if c.clock {
			continue
		}
		runCase(t, c, func(t *testing.T) *env {
			return &env{t: t, store: newStore(t), wait: time.Sleep}
		})
	}
}

// RunWithClock runs the whole conformance suite, each case with a new store
// from newStore. newStore returns the store and a function that sets the
// store's clock (time.Time values with microsecond precision are enough);
// the suite sets it before the first call and moves it only forward, except
// in the case that checks a clock going back.
//
// Options adjust the run; see [Timelines].
func RunWithClock(t *testing.T, newStore func(t *testing.T) (ratelimit.Store, func(time.Time)), opts ...Option) {
	cfg := config{timelines: 10}
	for _, o := range opts {
		o(&cfg)
	}
	// A minute into the next hour: the window cases start well inside a
	// window, and on a whole second.
	start := time.Now().Truncate(time.Hour).Add(time.Hour + time.Minute)
	all := cases()
	probe, _ := newStore(t)
	multi := isMulti(probe)
	if multi {
		all = append(all, multiCases()...)
	}
	for _, c := range all {
		if c.realTime {
			continue
		}
		runCase(t, c, func(t *testing.T) *env {
			store, set := newStore(t)
			var mu sync.Mutex
			now := start
			set(now)
			return &env{t: t, store: store, exact: true, wait: func(d time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(d)
				set(now)
			}}
		})
	}
	t.Run("token bucket/decisions equal golang.org/x/time/rate", func(t *testing.T) {
		t.Parallel()
		store, set := newStore(t)
		n := differential(t, store, set, start, cfg.timelines, 1000)
		t.Logf("compared %d decisions", n)
	})
	for _, a := range algorithms[1:] {
		t.Run(a.String()+"/decisions equal a brute-force model", func(t *testing.T) {
			t.Parallel()
			store, set := newStore(t)
			n := windowOracle(t, store, set, start, a, cfg.timelines, 500)
			t.Logf("compared %d decisions", n)
		})
	}
	if multi {
		t.Run("AllowAll/token buckets together equal golang.org/x/time/rate", func(t *testing.T) {
			t.Parallel()
			store, set := newStore(t)
			n := multiOracle(t, store, set, start, max(1, cfg.timelines*6/10), 300)
			t.Logf("compared %d batches", n)
		})
	}
}

// Option adjusts a run of [RunWithClock].
type Option func(*config)

type config struct {
	timelines int
}

// Timelines sets how many random timelines each exact comparison replays:
// 10 by default, of 500 to 1,000 decisions each. Fewer suit a store that
// is slow to call under the race detector, such as miniredis, whose Lua
// interpreter runs in the test process; the cases stay the same.
func Timelines(n int) Option {
	return func(c *config) { c.timelines = max(n, 1) }
}

func cases() []testCase {
	return []testCase{
		{name: "a new key starts full and denies past its capacity", everyAlgorithm: true, run: startsFull},
		{name: "burst 0 means rate", run: burstDefaultsToRate},
		{name: "a cost above one takes that many and a denied request takes nothing", everyAlgorithm: true, run: costs},
		{name: "n zero reports without taking", everyAlgorithm: true, run: reportsOnly},
		{name: "keys are independent", everyAlgorithm: true, run: keysIndependent},
		{name: "algorithms keep separate budgets for one key", run: algorithmsSeparate},
		{name: "bad input is an error", run: badInput},
		{name: "a done context is an error", everyAlgorithm: true, run: doneContext},
		{name: "concurrent callers never take more than the capacity", everyAlgorithm: true, run: concurrentCapacity},
		{name: "the fixed window admits twice its rate across a window edge, the others do not", clock: true, run: boundaryBurst},
		{name: "a window refills when it has passed", clock: true, everyAlgorithm: true, run: windowRefill},
		{name: "a denied request passes after RetryAfter", run: passesAfterRetry},
		{name: "32 goroutines on one key admit the burst plus the refill", realTime: true, run: hammer},
		{name: "a client calling faster than the refill is not starved", realTime: true, run: frequentCaller},
		{name: "RetryAfter and ResetAfter are exact", clock: true, run: exactDurations},
		{name: "refill keeps fractions of a token", clock: true, run: fractionalRefill},
		{name: "a clock going back refills nothing", clock: true, run: clockBack},
		{name: "limits at the bounds of Validate neither wrap nor go negative", clock: true, run: extremeLimits},
	}
}

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

func exactDurations(e *env) {
	l := ratelimit.PerMinute(60).WithBurst(5) // a token a second
	e.expect("k", l, 2, true, 3)
	res := e.expect("k", l, 0, true, 3)
	near(e.t, "ResetAfter after taking 2", res.ResetAfter, 2*time.Second)
	e.expect("k", l, 3, true, 0)
	res = e.expect("k", l, 2, false, 0)
	near(e.t, "RetryAfter for 2 tokens", res.RetryAfter, 2*time.Second)
	near(e.t, "ResetAfter when empty", res.ResetAfter, 5*time.Second)
	e.wait(2*time.Second - time.Millisecond)
	e.expect("k", l, 2, false, 1)
	e.wait(time.Millisecond)
	e.expect("k", l, 2, true, 0)
	e.wait(5 * time.Second)
	res = e.expect("k", l, 0, true, 5)
	if res.ResetAfter != 0 {
		e.t.Fatalf("ResetAfter of a full key = %v, want 0", res.ResetAfter)
	}
}

func fractionalRefill(e *env) {
	// One token a second, a call every 0.6 s: the 2 tokens of the burst plus
	// the 59.4 that 59.4 s refill make 61 calls. A store that dropped the
	// fraction on each call (floor the refill, move the timestamp to now)
	// would admit the burst and then nothing.
	l := ratelimit.PerMinute(60).WithBurst(2)
	admitted := 0
	for range 100 {
		if e.allow("k", l, 1).Allowed {
			admitted++
		}
		e.wait(600 * time.Millisecond)
	}
	if admitted != 61 {
		e.t.Fatalf("admitted %d of 100 calls 0.6 s apart at 1/s, burst 2, want 61", admitted)
	}
}

func clockBack(e *env) {
	l := ratelimit.PerMinute(60).WithBurst(2)
	e.expect("k", l, 2, true, 0)
	e.wait(-10 * time.Second)
	e.expect("k", l, 1, false, 0)
	e.wait(10 * time.Second)
	e.expect("k", l, 1, false, 0) // back where it was: still empty
	e.wait(time.Second)
	e.expect("k", l, 1, true, 0)
}

// hammer: 32 goroutines on one key for 2 s at 50/s, burst 10, admit
// 10 + 50·t, within 2, where t is the time from the first decision to the
// last. The decisions happen somewhere inside their calls, so t lies between
// (last start − first end) and (last end − first start): the bound takes
// both ends.
func hammer(e *env) {
	const workers = 32
	l := ratelimit.PerSecond(50).WithBurst(10)
	var admitted, failed atomic.Int64
	var mu sync.Mutex
	var firstStart, firstEnd, lastStart, lastEnd time.Time
	var wg sync.WaitGroup
	stop := time.Now().Add(2 * time.Second)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				begin := time.Now()
				res, err := e.store.AllowN(context.Background(), "k", l, 1)
				end := time.Now()
				mu.Lock()
				if firstStart.IsZero() || begin.Before(firstStart) {
					firstStart = begin
				}
				if firstEnd.IsZero() || end.Before(firstEnd) {
					firstEnd = end
				}
				if begin.After(lastStart) {
					lastStart = begin
				}
				if end.After(lastEnd) {
					lastEnd = end
				}
				mu.Unlock()
				switch {
				case err != nil:
					failed.Add(1)
				case res.Allowed:
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		e.t.Fatalf("%d calls failed", f)
	}
	low := 10 + 50*lastStart.Sub(firstEnd).Seconds()
	high := 10 + 50*lastEnd.Sub(firstStart).Seconds()
	if got := float64(admitted.Load()); got < math.Floor(low)-2 || got > high+2 {
		e.t.Fatalf("admitted %v, want 10 + 50·t ± 2 with t between %v and %v: %.1f to %.1f",
			got, lastStart.Sub(firstEnd), lastEnd.Sub(firstStart), low-2, high+2)
	}
}

// frequentCaller: a call every 5 ms at 10/s, burst 10, for 2 s admits
// 10 + 10·t: a store that drops fractions of a token on every call would
// admit the burst and then nothing.
func frequentCaller(e *env) {
	l := ratelimit.PerSecond(10)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	admitted := 0
	start := time.Now()
	for time.Since(start) < 2*time.Second {
		<-tick.C
		if e.allow("k", l, 1).Allowed {
			admitted++
		}
	}
	elapsed := time.Since(start).Seconds()
	want := 10 + 10*elapsed
	if got := float64(admitted); math.Abs(got-want) > 2 {
		e.t.Fatalf("admitted %v in %.3fs, want 10 + 10·t = %.1f ± 2", got, elapsed, want)
	}
}

func algorithmsSeparate(e *env) {
	for _, a := range algorithms {
		e.algo = a
		e.expect("shared", e.slowLimit(1), 1, true, 0)
	}
}

// boundaryBurst: 10 per second taken just before a window edge and again
// just after it.
func boundaryBurst(e *env) {
	limits := []struct {
		l           ratelimit.Limit
		secondBurst bool
	}{
		{ratelimit.Limit{Rate: 10, Period: time.Second, Algorithm: ratelimit.FixedWindow}, true},
		{ratelimit.Limit{Rate: 10, Period: time.Second, Algorithm: ratelimit.SlidingWindow}, false},
		{ratelimit.Limit{Rate: 10, Period: time.Second, Algorithm: ratelimit.SlidingLog}, false},
		{ratelimit.PerSecond(10), false},
	}
	// The suite's clock starts on a whole second: move to 1 ms before the next.
	e.wait(999 * time.Millisecond)
	for _, tt := range limits {
		e.expect(tt.l.Algorithm.String(), tt.l, 10, true, 0)
	}
	e.wait(time.Millisecond) // the window edge
	for _, tt := range limits {
		if got := e.allow(tt.l.Algorithm.String(), tt.l, 10).Allowed; got != tt.secondBurst {
			e.t.Errorf("%v: a second burst of 10 within 2 ms admitted = %v, want %v", tt.l, got, tt.secondBurst)
		}
	}
}

// windowRefill: a spent key waits RetryAfter and passes again; a full
// period later it is back to its whole budget.
func windowRefill(e *env) {
	l := ratelimit.Limit{Rate: 3, Period: time.Minute, Algorithm: e.algo}
	e.expect("k", l, 3, true, 0)
	res := e.expect("k", l, 1, false, 0)
	e.wait(res.RetryAfter)
	if !e.allow("k", l, 1).Allowed {
		e.t.Fatalf("denied once RetryAfter %v had passed", res.RetryAfter)
	}
	e.wait(2 * time.Minute)
	if res := e.expect("k", l, 0, true, 3); res.ResetAfter != 0 {
		e.t.Fatalf("ResetAfter of a key two periods idle = %v, want 0", res.ResetAfter)
	}
}

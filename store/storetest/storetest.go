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
// token buckets taken together against one x/time/rate Limiter each. A
// store that implements [ratelimit.Reserver] runs x/time/rate's own
// Reserve and Cancel tests, and with the clock a differential of bookings,
// cancellations and AllowN against it. A store that implements
// [ratelimit.Refunder] runs the cases of refunds: a refund restores what a
// take took, never more. Every store runs the cases of API
// products: a key's budget across a change of plan, and a Limiter's
// blocks and charges seen by every app server that shares the store.
// [RunSlots] is the suite of an in-flight store,
// [github.com/ratelimit-go/ratelimit/inflight.Store].
package storetest

import (
	"context"
	"sync"
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
	// step is the reservation cases' clock, in steps of d since the start.
	step int
	// clock reads the controlled clock; nil in real time.
	clock func() time.Time
	// neverRewinds is NeverRewinds: a clock gone back decides a bucket as
	// of its last update.
	neverRewinds bool
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
	probe := newStore(t)
	if isMulti(probe) {
		all = append(all, multiCases()...)
	}
	if isReserver(probe) {
		all = append(all, reserveCases()...)
	}
	if isCalendars(probe) {
		all = append(all, calendarCases()...)
	}
	if isResetter(probe) {
		all = append(all, resetCases()...)
	}
	if isRefunder(probe) {
		all = append(all, refundCases()...)
	}
	all = append(all, productCases()...)
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
		if o == nil {
			continue // a nil Option is none
		}
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
	reserver := isReserver(probe)
	if reserver {
		all = append(all, reserveCases()...)
	}
	calendars := isCalendars(probe)
	if calendars {
		all = append(all, calendarCases()...)
	}
	if isResetter(probe) {
		all = append(all, resetCases()...)
	}
	if isRefunder(probe) {
		all = append(all, refundCases()...)
	}
	all = append(all, productCases()...)
	for _, c := range all {
		if c.realTime {
			continue
		}
		runCase(t, c, func(t *testing.T) *env {
			store, set := newStore(t)
			var mu sync.Mutex
			now := start
			set(now)
			return &env{t: t, store: store, exact: true, neverRewinds: cfg.neverRewinds, wait: func(d time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(d)
				set(now)
			}, clock: func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return now
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
	for _, c := range []ratelimit.Calendar{ratelimit.CalendarDay, ratelimit.CalendarMonth} {
		if !calendars {
			break
		}
		t.Run("calendar/"+c.String()+" quotas equal a brute-force model", func(t *testing.T) {
			t.Parallel()
			store, set := newStore(t)
			n := calendarOracle(t, store, set, start, c, max(1, cfg.timelines/2), 200)
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
	if reserver {
		t.Run("Reserve/bookings and cancellations equal golang.org/x/time/rate", func(t *testing.T) {
			t.Parallel()
			store, set := newStore(t)
			n := reserveDifferential(t, store, set, start, max(1, cfg.timelines*6/10), 300)
			t.Logf("compared %d decisions", n)
		})
	}
}

// Option adjusts a run of [RunWithClock].
// A nil Option is ignored.
type Option func(*config)

type config struct {
	timelines    int
	neverRewinds bool
}

// Timelines sets how many random timelines each exact comparison replays:
// 10 by default, of 500 to 1,000 decisions each. Fewer suit a store that
// is slow to call under the race detector, such as miniredis, whose Lua
// interpreter runs in the test process; the cases stay the same.
func Timelines(n int) Option {
	return func(c *config) { c.timelines = max(n, 1) }
}

// NeverRewinds says the store decides a token bucket never before its last
// update: a call whose clock is behind it is decided as of that update, as
// store/redis does with the app servers' clocks (WithAppClock), where
// servers whose clocks differ would otherwise refill a bucket by their
// difference on every turn. x/time/rate's cases of a clock gone back then
// expect that store's answers, stricter than x/time/rate's by the time
// the clock went back; every other case is the same.
func NeverRewinds() Option {
	return func(c *config) { c.neverRewinds = true }
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
		{name: "a key over a lowered limit has none left, never fewer", everyAlgorithm: true, run: loweredLimit},
	}
}

package storetest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The cases of [ratelimit.Refunder], run for stores that implement it: a
// refund gives back what a take took, never more than the budget would be
// had the take never been made: never above the capacity, never another
// window's take, the oldest possible entry of a sliding log.

func isRefunder(probe ratelimit.Store) bool {
	_, ok := probe.(ratelimit.Refunder)
	return ok
}

func refundCases() []testCase {
	return []testCase{
		{name: "Refund/a take then a refund restores the budget", everyAlgorithm: true, run: refundRestores},
		{name: "Refund/a refund never lifts a key above its capacity", everyAlgorithm: true, run: refundCapped},
		{name: "Refund/concurrent takes and refunds leave the budget whole", everyAlgorithm: true, run: refundConcurrent},
		{name: "Refund/a refund never undoes another window's take", clock: true, run: refundOtherWindow},
		{name: "Refund/the sliding log gives back its oldest entries no older than the age", clock: true, run: refundLogEntries},
		{name: "Refund/a bucket booked below empty climbs back by n", clock: true, run: refundBelowEmpty},
		{name: "Refund/bad input is an error and gives nothing back", run: refundBadInput},
	}
}

// now is the time on the suite's clock, or the wall's in real time: the
// instant a caller measures a refund's age from.
func (e *env) now() time.Time {
	if e.clock != nil {
		return e.clock()
	}
	return time.Now()
}

// since is the age of a refund's take made after t0, as a caller measures
// it. In real time a store reads its clock after the call's trip to it,
// longer than the caller's age on a loaded machine, so the suite adds a
// margin (a larger age only ever gives back less): an hour to a sliding
// log, whose entries all fall in it, 10 ms to the windows, which it must
// not carry across a window's edge (a smaller age only matters there).
func (e *env) since(t0 time.Time) time.Duration {
	switch {
	case e.exact:
		return e.clock().Sub(t0)
	case e.algo == ratelimit.SlidingLog:
		return time.Since(t0) + time.Hour
	}
	return time.Since(t0) + 10*time.Millisecond
}

// refund calls RefundN with a background context and checks the report's
// Remaining; it fails the test on error.
func (e *env) refund(key string, l ratelimit.Limit, n int, age time.Duration, remaining int) ratelimit.Result {
	e.t.Helper()
	res, err := e.store.(ratelimit.Refunder).RefundN(context.Background(), key, l, n, age)
	if err != nil {
		e.t.Fatalf("RefundN(%q, %v, %d, %v): %v", key, l, n, age, err)
	}
	if !res.Allowed || res.Remaining != remaining || res.Limit != l || res.RetryAfter != 0 || res.ResetAfter < 0 {
		e.t.Fatalf("RefundN(%q, %v, %d, %v) = %+v; want allowed, remaining %d, no RetryAfter", key, l, n, age, res, remaining)
	}
	return res
}

// refundRestores: a refund of what a take took makes the budget what it
// was, in steps; the whole capacity passes again.
func refundRestores(e *env) {
	l := e.slowLimit(5)
	begin := e.now()
	for _, step := range []struct {
		take, refund, remaining int
	}{
		{take: 3, refund: 3, remaining: 5},
		{take: 5, refund: 2, remaining: 2},
		{take: 2, refund: 1, remaining: 1},
		{take: 1, refund: 1, remaining: 1},
	} {
		t0 := e.now()
		e.expect("k", l, step.take, true, step.remaining-step.refund)
		e.refund("k", l, step.refund, e.since(t0), step.remaining)
	}
	e.refund("k", l, 4, e.since(begin), 5) // the rest of the takes since the start
	if res := e.expect("k", l, 0, true, 5); res.ResetAfter != 0 {
		e.t.Fatalf("a budget restored whole reports ResetAfter %v, want 0", res.ResetAfter)
	}
	e.expect("k", l, 5, true, 0)
	e.expect("k", l, 1, false, 0)
}

// refundCapped: a refund on a full key, a key never seen, or twice for
// one take, leaves the budget at its capacity, never above it.
func refundCapped(e *env) {
	l := e.slowLimit(3)
	if res := e.refund("never", l, 3, time.Hour, 3); res.ResetAfter != 0 {
		e.t.Fatalf("a refund on a key never seen reports ResetAfter %v, want 0", res.ResetAfter)
	}
	e.expect("never", l, 3, true, 0)
	e.expect("never", l, 1, false, 0)

	t0 := e.now()
	e.expect("k", l, 2, true, 1)
	e.refund("k", l, 2, e.since(t0), 3)
	e.refund("k", l, 2, e.since(t0), 3) // the same take's, twice
	e.refund("k", l, 3, time.Hour, 3)
	e.expect("k", l, 3, true, 0)
	e.expect("k", l, 1, false, 0)
}

// refundConcurrent: goroutines that each take and give back concurrently
// leave the budget whole, and none sees it above its capacity.
func refundConcurrent(e *env) {
	const workers, calls, capacity = 8, 10, 4
	l := e.slowLimit(capacity)
	rf := e.store.(ratelimit.Refunder)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, s)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				t0 := e.now()
				res, err := e.store.AllowN(context.Background(), "k", l, 1)
				if err != nil || !res.Allowed {
					if err != nil {
						fail(err.Error())
					}
					continue
				}
				res, err = rf.RefundN(context.Background(), "k", l, 1, e.since(t0))
				if err != nil {
					fail(err.Error())
				} else if res.Remaining > capacity {
					fail("a refund reported more than the capacity")
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		e.t.Fatalf("%d failures, first: %s", len(failures), failures[0])
	}
	e.expect("k", l, 0, true, capacity)
	e.expect("k", l, capacity, true, 0)
	e.expect("k", l, 1, false, 0)
}

// refundOtherWindow: a take in one window, another in the next, and a
// refund whose age reaches back to the first window: the refund gives back
// nothing of the next window's count (the sliding window: from the
// previous window's count only). An age that stays in the window gives
// back from it, exactly to the window's start.
func refundOtherWindow(e *env) {
	for _, c := range []struct {
		name string
		l    ratelimit.Limit
	}{
		{"fixed window", ratelimit.Limit{Rate: 5, Period: time.Minute, Algorithm: ratelimit.FixedWindow}},
		{"calendar day", ratelimit.PerDay(5, nil)},
		{"sliding window", ratelimit.Limit{Rate: 5, Period: time.Minute, Algorithm: ratelimit.SlidingWindow}},
	} {
		if c.l.Calendar != ratelimit.NoCalendar && !isCalendars(e.store) {
			continue
		}
		key := c.name
		_, end := c.l.Window(e.now())
		e.setTo(end.Add(-10 * time.Second)) // 10 s before the window's end
		e.expect(key, c.l, 2, true, 3)
		e.setTo(end.Add(20 * time.Second)) // 20 s into the next window
		// The sliding window weighs the window before's 2 by 2/3.
		remaining := 2
		if c.l.Algorithm == ratelimit.SlidingWindow {
			remaining = 0
		}
		e.expect(key, c.l, 3, true, remaining)
		// Older than the window before: nothing.
		e.refund(key, c.l, 2, 20*time.Second+c.l.Period+time.Microsecond, remaining)
		// Back to the first take: the next window's 3 stay (the sliding
		// window gives back the window before's 2).
		e.refund(key, c.l, 2, 30*time.Second, 2)
		e.refund(key, c.l, 3, 20*time.Second+time.Microsecond, 2) // a hair before the window
		e.refund(key, c.l, 1, 20*time.Second, 3)                  // at the window's start: in it
		// Two windows later, an age that reaches back gives nothing.
		e.setTo(end.Add(20*time.Second + 2*c.l.Period))
		e.expect(key, c.l, 5, true, 0)
		e.refund(key, c.l, 5, 20*time.Second+c.l.Period, 0)
		e.refund(key, c.l, 5, 2*c.l.Period+time.Second, 0)
	}
}

// refundLogEntries: a sliding log gives back the oldest of its entries no
// older than the age, in part if an entry holds more tokens than are left
// to give: when each remaining entry leaves the window shows which went.
func refundLogEntries(e *env) {
	l := ratelimit.Limit{Rate: 10, Period: time.Minute, Algorithm: ratelimit.SlidingLog}
	t0 := e.now()
	e.expect("log", l, 1, true, 9) // t0: a, 1 token
	e.wait(10 * time.Second)
	e.expect("log", l, 3, true, 6) // t0+10s: b, 3 tokens
	e.wait(10 * time.Second)
	e.expect("log", l, 2, true, 4) // t0+20s: c, 2 tokens
	e.wait(5 * time.Second)
	e.refund("log", l, 1, 4*time.Second, 4)         // no entry is that recent
	res := e.refund("log", l, 2, 16*time.Second, 6) // b or c may be the take: b, the oldest, gives 2
	near(e.t, "ResetAfter after the refunds", res.ResetAfter, 55*time.Second)
	for _, at := range []struct {
		after     time.Duration
		remaining int
	}{
		{60 * time.Second, 7},  // a has left: b's 1 and c's 2
		{70 * time.Second, 8},  // b has left: c's 2
		{80 * time.Second, 10}, // c has left
	} {
		e.setTo(t0.Add(at.after))
		e.expect("log", l, 0, true, at.remaining)
	}
	// An entry given back whole leaves the log: the newest goes, the
	// budget is whole, the key is as new.
	e.expect("log", l, 4, true, 6)
	e.refund("log", l, 4, 0, 10)
	if res := e.expect("log", l, 0, true, 10); res.ResetAfter != 0 {
		e.t.Fatalf("an emptied log reports ResetAfter %v, want 0", res.ResetAfter)
	}
}

// refundBelowEmpty: a bucket booked two tokens below empty climbs back by
// each refund's n, and stops at its burst.
func refundBelowEmpty(e *env) {
	rs, ok := e.store.(ratelimit.Reserver)
	if !ok {
		return
	}
	l := slow(2) // a token an hour, burst 2
	for range 2 {
		if r, err := rs.ReserveN(context.Background(), "booked", l, 2, forever); err != nil || !r.Allowed {
			e.t.Fatalf("ReserveN = %+v, %v; want booked", r, err)
		}
	}
	for _, step := range []struct {
		n, remaining int
		reset        time.Duration
	}{
		{1, 0, 3 * time.Hour}, // -2 -> -1
		{2, 1, time.Hour},     // -1 -> 1
		{2, 2, 0},             // 1 -> 2, not 3
	} {
		res := e.refund("booked", l, step.n, 0, step.remaining)
		near(e.t, "ResetAfter", res.ResetAfter, step.reset)
	}
	e.expect("booked", l, 2, true, 0)
}

func refundBadInput(e *env) {
	rf := e.store.(ratelimit.Refunder)
	ok := slow(10) // a token an hour: nothing refills during the case
	done, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	e.expect("k", ok, 4, true, 6)
	for _, c := range []struct {
		name  string
		ctx   context.Context
		key   string
		limit ratelimit.Limit
		n     int
		age   time.Duration
		want  error
	}{
		{"negative age", bg, "k", ok, 1, -time.Nanosecond, ratelimit.ErrInvalidAge},
		{"n above the capacity", bg, "k", ok, 11, 0, ratelimit.ErrCostExceedsCapacity},
		{"negative n", bg, "k", ok, -1, 0, ratelimit.ErrInvalidCost},
		{"an invalid limit", bg, "k", ratelimit.Limit{Rate: 10}, 1, 0, ratelimit.ErrInvalidLimit},
		{"an unknown algorithm", bg, "k", ok.WithAlgorithm(ratelimit.SlidingLog + 1), 1, 0, ratelimit.ErrInvalidLimit},
		{"an empty key", bg, "", ok, 1, 0, ratelimit.ErrEmptyKey},
		{"a done context", done, "k", ok, 1, time.Hour, context.Canceled},
	} {
		if res, err := rf.RefundN(c.ctx, c.key, c.limit, c.n, c.age); !errors.Is(err, c.want) {
			e.t.Errorf("%s: RefundN = %+v, %v; want error %v", c.name, res, err, c.want)
		}
	}
	e.expect("k", ok, 0, true, 6) // nothing was given back
}

package storetest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
)

// The cases of [ratelimit.Reserver], run for stores that implement it:
// golang.org/x/time/rate's own Reserve and Cancel tests (rate_test.go),
// replayed on the store under a controlled clock, with its limit of 10 per
// second (a token every 100 ms, d) and burst 2, then a differential test
// of random reservations, cancellations and AllowN against x/time/rate.

// isReserver reports whether probe implements ratelimit.Reserver.
func isReserver(probe ratelimit.Store) bool {
	_, ok := probe.(ratelimit.Reserver)
	return ok
}

func reserveCases() []testCase {
	return []testCase{
		{name: "Reserve/x/time/rate's TestSimpleReserve", clock: true, run: reserveSimple},
		{name: "Reserve/x/time/rate's TestMix: a booking is seen by AllowN", clock: true, run: reserveMix},
		{name: "Reserve/x/time/rate's TestCancelInvalid", clock: true, run: reserveCancelInvalid},
		{name: "Reserve/x/time/rate's TestCancelLast", clock: true, run: reserveCancelLast},
		{name: "Reserve/x/time/rate's TestCancelTooLate", clock: true, run: reserveCancelTooLate},
		{name: "Reserve/x/time/rate's TestCancel0Tokens", clock: true, run: reserveCancel0Tokens},
		{name: "Reserve/x/time/rate's TestCancel1Token", clock: true, run: reserveCancel1Token},
		{name: "Reserve/x/time/rate's TestCancelMulti", clock: true, run: reserveCancelMulti},
		{name: "Reserve/x/time/rate's TestReserveJumpBack", clock: true, run: reserveJumpBack},
		{name: "Reserve/x/time/rate's TestReserveJumpBackCancel", clock: true, run: reserveJumpBackCancel},
		{name: "Reserve/x/time/rate's TestReserveMax", clock: true, run: reserveMax},
		{name: "Reserve/bad input is an error and books nothing", run: reserveBadInput},
		{name: "Reserve/concurrent bookings never overbook", run: reserveConcurrent},
	}
}

// d is x/time/rate's test step: one token of rt.
const d = 100 * time.Millisecond

// rt is the limit of x/time/rate's tests, NewLimiter(10, 2).
var rt = ratelimit.PerSecond(10).WithBurst(2)

// at moves the controlled clock to t0 + k·d; e.t0 counts the steps taken.
func (e *env) at(k int) {
	e.wait(time.Duration(k-e.step) * d)
	e.step = k
}

// reserve books n tokens of key "r" under l at step k, expecting ok and,
// if ok, a delay of act − k steps (within a microsecond, the resolution
// of a Redis clock).
func (e *env) reserve(l ratelimit.Limit, k, n, act int, ok bool, maxWait time.Duration) ratelimit.Reservation {
	e.t.Helper()
	e.at(k)
	r, err := e.store.(ratelimit.Reserver).ReserveN(context.Background(), "r", l, n, maxWait)
	if err != nil {
		e.t.Fatalf("step %d: ReserveN(%d): %v", k, n, err)
	}
	if r.Allowed != ok {
		e.t.Fatalf("step %d: ReserveN(%d) booked %v, want %v", k, n, r.Allowed, ok)
	}
	if ok {
		want := time.Duration(act-k) * d
		if !within(r.Delay, want, time.Microsecond) || r.Tokens != n {
			e.t.Fatalf("step %d: ReserveN(%d) = %d tokens after %v, want %d after %v", k, n, r.Tokens, r.Delay, n, want)
		}
	} else if r.Tokens != 0 || r.Delay != 0 || r.RetryAfter <= 0 {
		e.t.Fatalf("step %d: ReserveN(%d) not booked: %d tokens, delay %v, RetryAfter %v", k, n, r.Tokens, r.Delay, r.RetryAfter)
	}
	return r
}

// forever is a bound no wait of these limits reaches.
const forever = 24 * time.Hour

// cancel cancels r at step k.
func (e *env) cancel(k int, r ratelimit.Reservation) {
	e.t.Helper()
	e.at(k)
	if err := e.store.(ratelimit.Reserver).CancelReservation(context.Background(), "r", rt, r); err != nil {
		e.t.Fatalf("step %d: CancelReservation: %v", k, err)
	}
}

func reserveSimple(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	e.reserve(rt, 0, 2, 2, true, forever)
	e.reserve(rt, 3, 2, 4, true, forever)
}

func reserveMix(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	e.at(1)
	e.expect("r", rt, 2, false, 1) // not enough tokens
	e.reserve(rt, 1, 2, 2, true, forever)
	e.expect("r", rt, 1, false, 0) // negative tokens
	e.at(3)
	e.expect("r", rt, 1, true, 0)
}

func reserveCancelInvalid(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	r := e.reserve(rt, 0, 2, 0, false, d) // the wait, 2d, is past the bound
	e.cancel(0, r)                        // no effect
	e.reserve(rt, 0, 2, 2, true, forever) // no extra tokens
}

func reserveCancelLast(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	r := e.reserve(rt, 0, 2, 2, true, forever)
	e.cancel(1, r) // two tokens back
	e.reserve(rt, 1, 2, 2, true, forever)
}

func reserveCancelTooLate(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	r := e.reserve(rt, 0, 2, 2, true, forever)
	e.cancel(3, r) // too late: no effect
	e.reserve(rt, 3, 2, 4, true, forever)
}

func reserveCancel0Tokens(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	r := e.reserve(rt, 0, 1, 1, true, forever)
	e.reserve(rt, 0, 1, 2, true, forever)
	e.cancel(0, r) // nothing back: a later booking depends on it
	e.reserve(rt, 0, 1, 3, true, forever)
}

func reserveCancel1Token(e *env) {
	e.reserve(rt, 0, 2, 0, true, forever)
	r := e.reserve(rt, 0, 2, 2, true, forever)
	e.reserve(rt, 0, 1, 3, true, forever)
	e.cancel(2, r) // one token back
	e.reserve(rt, 2, 2, 4, true, forever)
}

func reserveCancelMulti(e *env) {
	l := ratelimit.PerSecond(10).WithBurst(4)
	e.reserve(l, 0, 4, 0, true, forever)
	rA := e.reserve(l, 0, 3, 3, true, forever)
	e.reserve(l, 0, 1, 4, true, forever)
	rC := e.reserve(l, 0, 1, 5, true, forever)
	cancel := func(r ratelimit.Reservation) {
		if err := e.store.(ratelimit.Reserver).CancelReservation(context.Background(), "r", l, r); err != nil {
			e.t.Fatal(err)
		}
	}
	e.at(1)
	cancel(rC) // one token back
	cancel(rA) // two back, as C was cancelled
	e.reserve(l, 1, 3, 5, true, forever)
}

// The jump-back cases' last instants: x/time/rate's, and a store's that
// never rewinds (NeverRewinds), which decides the calls at t0 as of t1 and
// so refills nothing twice.
func (e *env) jumpedBack(xrate, never int) int {
	if e.neverRewinds {
		return never
	}
	return xrate
}

func reserveJumpBack(e *env) {
	e.reserve(rt, 1, 2, 1, true, forever) // start at t1
	e.reserve(rt, 0, 1, 1, true, forever) // a clock gone back refills nothing
	e.reserve(rt, 2, 2, e.jumpedBack(3, 4), true, forever)
}

func reserveJumpBackCancel(e *env) {
	e.reserve(rt, 1, 2, 1, true, forever) // start at t1
	r := e.reserve(rt, 1, 2, 3, true, forever)
	e.reserve(rt, 1, 1, 4, true, forever)
	e.cancel(0, r)                                         // at t0: one token back
	e.reserve(rt, 1, 2, e.jumpedBack(4, 5), true, forever) // should violate Limit, Burst
}

func reserveMax(e *env) {
	e.reserve(rt, 0, 2, 0, true, d)
	e.reserve(rt, 0, 1, 1, true, d)  // close enough
	e.reserve(rt, 0, 1, 2, false, d) // too far ahead
}

func reserveBadInput(e *env) {
	rs := e.store.(ratelimit.Reserver)
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		name     string
		ctx      context.Context
		key      string
		limit    ratelimit.Limit
		n        int
		maxWait  time.Duration
		want     error
		cancelOK bool // CancelReservation has no bound to refuse
	}{
		{"empty key", ctx, "", rt, 1, 0, ratelimit.ErrEmptyKey, false},
		{"negative n", ctx, "r", rt, -1, 0, ratelimit.ErrInvalidCost, false},
		{"n above the burst", ctx, "r", rt, 3, forever, ratelimit.ErrCostExceedsCapacity, false},
		{"a window", ctx, "r", rt.WithAlgorithm(ratelimit.FixedWindow), 1, 0, ratelimit.ErrNotTokenBucket, false},
		{"an invalid limit", ctx, "r", ratelimit.Limit{}, 1, 0, ratelimit.ErrInvalidLimit, false},
		{"a negative bound", ctx, "r", rt, 1, -time.Second, ratelimit.ErrInvalidWait, true},
		{"a done context", done, "r", rt, 1, 0, context.Canceled, false},
	} {
		r, err := rs.ReserveN(c.ctx, c.key, c.limit, c.n, c.maxWait)
		if !errors.Is(err, c.want) {
			e.t.Fatalf("%s: ReserveN = %+v, %v; want error %v", c.name, r, err, c.want)
		}
		booked := ratelimit.Reservation{Result: ratelimit.Result{Allowed: true, Limit: c.limit}, Tokens: c.n, At: time.Now()}
		if err := rs.CancelReservation(c.ctx, c.key, c.limit, booked); (err == nil) != c.cancelOK {
			e.t.Fatalf("%s: CancelReservation = %v", c.name, err)
		}
	}
	e.expect("r", rt, 2, true, 0) // nothing was booked
}

func reserveConcurrent(e *env) {
	// 20 goroutines book 1 token each within 1 s on a bucket of 10 per
	// second, burst 5: at most 5 now plus 10 within the second, whatever
	// the order.
	l := ratelimit.PerSecond(10).WithBurst(5)
	rs := e.store.(ratelimit.Reserver)
	booked := make(chan bool, 20)
	begin := time.Now()
	for range 20 {
		go func() {
			r, err := rs.ReserveN(context.Background(), "c", l, 1, time.Second)
			if err != nil {
				e.t.Error(err)
			}
			booked <- r.Allowed
		}()
	}
	n := 0
	for range 20 {
		if <-booked {
			n++
		}
	}
	// Each 100 ms the calls take may refill one token more.
	if most := 15 + int(time.Since(begin)/(100*time.Millisecond)) + 1; n < 15 || n > most {
		e.t.Fatalf("%d of 20 booked, want 15 to %d", n, most)
	}
}

// reserveDifferential replays random timelines of ReserveN with random
// bounds (none, or 0: x/time/rate's AllowN), AllowN and cancellations on the store and on x/time/rate, and
// fails on the first decision or delay that differs, to the nanosecond.
func reserveDifferential(t *testing.T, store ratelimit.Store, set func(time.Time), start time.Time, timelines, steps int) int {
	t.Helper()
	rs := store.(ratelimit.Reserver)
	rng := newRand(t)
	ctx := context.Background()
	now, compared := start, 0
	for i := range timelines {
		l := ratelimit.Limit{Rate: 1 + rng.IntN(20), Period: periods[rng.IntN(len(periods))], Burst: rng.IntN(11)}
		capacity := l.Capacity()
		ref := rate.NewLimiter(rate.Limit(l.PerSecondRate()), capacity)
		key := "reserve-" + strconv.Itoa(i)
		oneToken := time.Duration(float64(time.Second) / l.PerSecondRate())
		type booking struct {
			got  ratelimit.Reservation
			want *rate.Reservation
		}
		var open []booking
		for step := range steps {
			now = now.Add(logUniform(rng, time.Millisecond, 2*oneToken).Truncate(time.Millisecond))
			set(now)
			n := 1 + rng.IntN(capacity)
			switch op := rng.IntN(5); {
			case op <= 1:
				// Unbounded, as x/time/rate's ReserveN books.
				got, err := rs.ReserveN(ctx, key, l, n, ratelimit.MaxPeriod)
				if err != nil {
					t.Fatalf("timeline %d step %d: ReserveN: %v", i, step, err)
				}
				want := ref.ReserveN(now, n)
				if !got.Allowed || got.Delay != want.DelayFrom(now) {
					t.Fatalf("timeline %d step %d (limit %v, n %d): booked %v after %v; x/time/rate after %v",
						i, step, l, n, got.Allowed, got.Delay, want.DelayFrom(now))
				}
				open = append(open, booking{got, want})
			case op == 3:
				// Bound 0: x/time/rate's AllowN is its reserveN with bound 0.
				got, err := rs.ReserveN(ctx, key, l, n, 0)
				if err != nil {
					t.Fatalf("timeline %d step %d: ReserveN: %v", i, step, err)
				}
				if want := ref.AllowN(now, n); got.Allowed != want || got.Delay != 0 {
					t.Fatalf("timeline %d step %d (limit %v, n %d): ReserveN bound 0 booked %v after %v; x/time/rate %v",
						i, step, l, n, got.Allowed, got.Delay, want)
				}
			case op == 2 && len(open) > 0:
				j := rng.IntN(len(open))
				b := open[j]
				open = append(open[:j], open[j+1:]...)
				if err := rs.CancelReservation(ctx, key, l, b.got); err != nil {
					t.Fatalf("timeline %d step %d: CancelReservation: %v", i, step, err)
				}
				b.want.CancelAt(now)
			default:
				got, err := store.AllowN(ctx, key, l, n)
				if err != nil {
					t.Fatalf("timeline %d step %d: AllowN: %v", i, step, err)
				}
				if want := ref.AllowN(now, n); got.Allowed != want {
					t.Fatalf("timeline %d step %d (limit %v, n %d): AllowN %v, x/time/rate %v", i, step, l, n, got.Allowed, want)
				}
			}
			compared++
		}
	}
	return compared
}

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WithMaxDelay shapes traffic instead of refusing it: a request over its
// budget that would pass within d waits until then and is served, as nginx's
// limit_req with delay and Traefik's maxDelay do; only one that would wait
// longer is denied, with a Retry-After of the rest. The wait honours the
// request's context: a request whose deadline comes before its tokens (or,
// where it is decided again after the wait, before that second answer
// could come, counted as the time budget of [WithTimeout]) is denied as
// soon as the store answers, as one that would wait longer than d; a
// client that goes away while it waits ends the wait, and the request is
// not served. 0, the default, refuses at once.
//
// On a limiter of one token-bucket policy over a [Reserver] store, the
// request books its tokens in its one store call, and waiters are served
// in order. Otherwise a denied request whose RetryAfter is at most d
// waits that long and is decided once more: the budget holds, but the
// second decision may deny it again.
func WithMaxDelay(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || d > MaxPeriod {
			return fmt.Errorf("ratelimit: WithMaxDelay(%v): want 0 to %v", d, MaxPeriod)
		}
		c.maxDelay = d
		return nil
	}
}

// booker returns the store to book in for a limiter with policies over
// store, or nil if it cannot book: a [Reserver] store and one token-bucket
// policy without blocks (a booking would pass a block by).
func booker(store Store, policies []policy, blocks bool) Reserver {
	rs, ok := store.(Reserver)
	if !ok || blocks || len(policies) != 1 || policies[0].limit.Algorithm != TokenBucket || policies[0].plans != nil || policies[0].limitFunc != nil {
		return nil
	}
	return rs
}

// reserve is the store call of a booking (op book): the one take of p
// booked within p.maxWait and ctx's deadline, within the time budget.
func (l *Limiter) reserve(ctx context.Context, p *pass) error {
	t := &p.takes[0]
	r, err := reserveWithin(ctx, l.budget, l.booker, t.Key, t.Limit, t.N, l.waitBound(ctx, p.maxWait))
	p.results[0], p.booking, p.booked = r.Result, r, true
	return err
}

// runShaped is the pass of Admit, AdmitKey and AllowN: run, then for a shaping limiter the wait
// its decision asks for. A request whose context ends while it waits is
// not served (end gone), and its booking is given back.
func (l *Limiter) runShaped(ctx context.Context, n int, p *pass) *outcome {
	shapes := l.maxDelay > 0 && n > 0 && !l.dryRun // a report (n = 0) never waits
	if !shapes {
		return l.run(ctx, n, p)
	}
	if l.booker != nil {
		p.op, p.maxWait = book, l.maxDelay
	}
	start := time.Now()
	o := l.run(ctx, n, p)
	if o.end != decided {
		return o
	}
	if p.op == book {
		if d := p.booking.Delay; o.res.Allowed && d > 0 {
			// The store bounded the wait by the deadline as it was sent;
			// its answer took some of that time.
			if left := l.waitBound(ctx, d); left < d {
				l.cancelBooking(ctx, p)
				return l.deniedWait(p, o, d-left)
			}
			if err := sleep(ctx, d); err != nil || ownEnd(ctx) { // guard.go: a deadline at the wait's end
				l.cancelBooking(ctx, p)
				if err == nil {
					err = context.DeadlineExceeded
				}
				return l.endedWaiting(p, err)
			}
			o.delay = d
		}
		return o
	}
	// The request waits, then is decided once more: a wait that leaves no
	// time for that second call is not begun. The call may take the time
	// budget (the first one may have been the deny cache's, at no cost),
	// and at least as long as the first took.
	second := time.Since(start)
	if l.budget != nil {
		second = max(second, l.budget.d)
	}
	if d := o.res.RetryAfter; !o.res.Allowed && d <= l.waitBound(ctx, l.maxDelay)-second {
		if err := sleep(ctx, d); err != nil {
			return l.endedWaiting(p, err)
		}
		o = l.run(ctx, n, p)
		o.delay = d
	}
	return o
}

// deniedWait makes o, the booking of p's one take, a denial: its tokens
// come retry later than the request's deadline lets it wait.
func (l *Limiter) deniedWait(p *pass, o *outcome, retry time.Duration) *outcome {
	r := &p.results[0]
	r.Allowed, r.Remaining, r.RetryAfter = false, 0, retry
	l.summarize(p, o) // pass_record.go
	return o
}

// endedWaiting answers p, whose request's context ended with err while it
// waited for its tokens: not served, as a request that ended before the
// store answered (pass_record.go), and not the store's failure.
func (l *Limiter) endedWaiting(p *pass, err error) *outcome {
	return p.answer(outcome{end: gone, err: fmt.Errorf("%w: %w", errWaitEnded, err)})
}

// errWaitEnded is the error of a request whose own context ended while it
// waited for its tokens.
var errWaitEnded = errors.New("ratelimit: the request ended while it waited for its tokens")

// waitBound is how long a request of ctx may wait for its tokens: d, or
// less if ctx's deadline comes first. A request whose tokens come later is
// denied at once, with the wait it would need, rather than held until its
// deadline and refused then.
func (l *Limiter) waitBound(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		d = max(min(d, dl.Sub(l.now())), 0)
	}
	return d
}

// cancelBooking gives back the booking of p, whose caller will not use
// it: all its tokens on a [Refunder] store (settle.go), else what
// [Reserver.CancelReservation] gives back.
func (l *Limiter) cancelBooking(ctx context.Context, p *pass) {
	ctx = context.WithoutCancel(ctx)
	if _, ok := l.store.(Refunder); ok {
		l.refund(ctx, nil, p)
		return
	}
	t := &p.takes[0]
	l.booker.CancelReservation(ctx, t.Key, t.Limit, p.booking)
}

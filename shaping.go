package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// WithMaxDelay shapes traffic instead of refusing it: a request over its
// budget that would pass within d waits until then and is served, as nginx's
// limit_req with delay and Traefik's maxDelay do; only one that would wait
// longer is denied, with a Retry-After of the rest. The wait honours the
// request's context: a client that goes away or a deadline that comes
// first ends it, and the request is not served. 0, the default, refuses at
// once.
//
// On a limiter of one token-bucket policy over a [Reserver] store, the
// request books its tokens in its one store call, and waiters are served
// in order. Otherwise a denied request whose RetryAfter is at most d
// waits that long and is decided once more: the budget holds, but the
// second decision may deny it again.
func WithMaxDelay(d time.Duration) Option {
	return func(c *config) error {
		c.given.add(optMaxDelay)
		if d < 0 || d > MaxPeriod {
			return fmt.Errorf("ratelimit: WithMaxDelay(%v): want 0 to %v", d, MaxPeriod)
		}
		c.maxDelay = d
		return nil
	}
}

// shaper is what a shaping limiter keeps: the bound, and the store to book
// in when the limiter's one policy can book.
type shaper struct {
	maxDelay time.Duration
	reserver Reserver // nil: the fallback, a wait and a second decision
}

// newShaper returns the shaper of a limiter with policies over store, or
// nil if maxDelay is 0.
func newShaper(store Store, policies []policy, maxDelay time.Duration) *shaper {
	if maxDelay <= 0 {
		return nil
	}
	s := &shaper{maxDelay: maxDelay}
	if rs, ok := store.(Reserver); ok && len(policies) == 1 && policies[0].limit.Algorithm == TokenBucket {
		s.reserver = rs
	}
	return s
}

// reserve is the store call of a shaping limiter that books: the one take
// of p booked within the bound and ctx's deadline, within the time budget.
func (l *Limiter) reserve(ctx context.Context, p *pass) error {
	t := &p.takes[0]
	maxWait := l.shaper.maxDelay
	if d, ok := ctx.Deadline(); ok {
		maxWait = max(min(maxWait, d.Sub(l.now())), 0)
	}
	r, err := reserveWithin(ctx, l.budget, l.shaper.reserver, t.Key, t.Limit, t.N, maxWait)
	p.results[0], p.booking = r.Result, r
	return err
}

// runShaped is the pass of Admit: run, then for a shaping limiter the wait
// its decision asks for. A request whose context ends while it waits is
// not served (end gone), and its booking is given back.
func (l *Limiter) runShaped(ctx context.Context, n int, p *pass) outcome {
	o := l.run(ctx, n, p)
	if l.shaper == nil || o.end != decided || l.dryRun {
		return o
	}
	if l.shaper.reserver != nil {
		if d := p.booking.Delay; o.res.Allowed && d > 0 {
			if err := sleep(ctx, d); err != nil {
				t := &p.takes[0]
				l.shaper.reserver.CancelReservation(context.WithoutCancel(ctx), t.Key, t.Limit, p.booking)
				return outcome{end: gone, err: err}
			}
			o.delay = d
		}
		return o
	}
	if d := o.res.RetryAfter; !o.res.Allowed && d <= l.shaper.maxDelay {
		if err := sleep(ctx, d); err != nil {
			return outcome{end: gone, err: err}
		}
		o = l.run(ctx, n, p)
		o.delay = d
	}
	return o
}

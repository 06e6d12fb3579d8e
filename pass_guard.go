package ratelimit

// The pass's checks before the store: the cost against every policy, the
// deny cache, and the debts the fallback's admissions left; the breaker
// is the guard's (guard.go).

import (
	"fmt"
	"time"
)

// setCost sets the cost of each of p's takes: n, checked against every
// policy; a charge takes at most each policy's capacity.
func (l *Limiter) setCost(n int, p *pass) error {
	if p.op == refund || p.op == reset {
		return nil // the cost and the takes are the pass's own, as taken
	}
	p.clearBooking()
	if p.own { // each take's cost is its own, checked by AllowTakes (takes.go)
		return nil
	}
	if p.op == charge {
		if n < 0 {
			return fmt.Errorf("%w: n = %d is negative", ErrInvalidCost, n)
		}
	} else if err := l.checkCost(n); err != nil {
		return err
	}
	p.n = n
	for i := range p.takes {
		p.takes[i].N, p.owed[i] = n, 0
		if p.op == charge {
			p.takes[i].N = min(n, p.takes[i].Limit.Capacity())
		}
	}
	return nil
}

// checkCost checks a request's cost n against the limiter's policies.
func (l *Limiter) checkCost(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: n = %d is negative", ErrInvalidCost, n)
	}
	if n > l.maxCost {
		return fmt.Errorf("%w: n = %d, capacity %d", ErrCostExceedsCapacity, n, l.maxCost)
	}
	return nil
}

// cachedDenial reports whether the deny cache denies a take of p at now,
// and writes the results: the cached denials, and for the other policies a
// full budget, untouched and unknown. The headers so describe the longest
// wait of the policies the cache denies.
func (l *Limiter) cachedDenial(p *pass, now time.Time) bool {
	return l.denied(p, now, false)
}

// heldDenial is cachedDenial while the store fails: denials held to their
// RetryAfter, whatever their age (denyCache.lookup).
func (l *Limiter) heldDenial(p *pass, now time.Time) bool {
	return l.denied(p, now, true)
}

// denied is cachedDenial, of denials whole (heldDenial) or not.
func (l *Limiter) denied(p *pass, now time.Time, whole bool) bool {
	denied := false
	for i, t := range p.takes {
		if res, ok := l.denies.lookup(t.Key, t.Limit, t.N, now, whole); ok {
			p.results[i], denied = res, true
		} else {
			p.results[i] = Result{Allowed: true, Limit: t.Limit, Remaining: t.Limit.Capacity()}
		}
	}
	return denied
}

// owedLeft makes each take's result tell what its key has once its debt
// to the fallback is paid: a denied take's whole debt (the store could
// not pay both, and left its budget as it was), or what an allowed take
// could not pay with its cost, comes off Remaining and, for a token
// bucket, adds its refill to ResetAfter. Else the headers told the client
// of tokens the next request must pay the debt with (3 left, and 429),
// and the deny cache waited for one token where it needs the debt's too.
func (l *Limiter) owedLeft(p *pass) {
	for i := range p.takes {
		debt := l.debts.owed(p.takes[i].Key)
		res := &p.results[i]
		if res.Allowed {
			debt -= p.owed[i] // paid now (record tells the ledger)
		}
		if debt <= 0 {
			continue
		}
		res.Remaining = max(0, res.Remaining-debt)
		if res.Limit.Algorithm == TokenBucket {
			res.ResetAfter += res.Limit.refillTime(debt, roundUp)
		}
	}
}

// chargeDebts adds to each take what its key owes for the fallback's
// admissions, as much as the take can hold: the store answers for the
// fallback's tokens too, and they are paid once it allows them.
func (l *Limiter) chargeDebts(p *pass) {
	for i := range p.takes {
		t := &p.takes[i]
		if owed := min(l.debts.owed(t.Key), t.Limit.Capacity()-t.N); owed > 0 {
			t.N += owed
			p.owed[i] = owed
		}
	}
}

package ratelimit

// The pass's store call, within the time budget (timeout.go), as the
// pass's op asks: take, book, charge, refund or reset.

import "context"

// call asks the store within the time budget: AllowN for one take, AllowAll
// for several, ReserveN for a booking, a charge per take.
func (l *Limiter) call(ctx context.Context, p *pass) error {
	switch p.op {
	case book:
		return l.reserve(ctx, p) // shaping.go
	case charge:
		return l.takeDebts(ctx, p) // charge.go
	case refund:
		return l.giveBack(ctx, p) // settle.go
	case reset:
		return l.resetAll(ctx, p) // reset.go
	case each:
		return l.takeEach(ctx, p) // takes.go
	}
	if len(p.all) == 1 {
		t := &p.all[0]
		if t.Key == "" { // the store joins it (pass_keys.go)
			return l.joiner.AllowJoinedTo(ctx, l.policies[0].prefix, p.client, &t.Limit, t.N, &p.results[0])
		}
		return allowWithin(ctx, l.budget, l.store, t.Key, t.Limit, t.N, &p.results[0])
	}
	return allowAllWithin(ctx, l.budget, l.store, p.all, p.allRes)
}

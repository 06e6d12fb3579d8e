package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Reserve, then settle: a request whose cost is known only after its
// handler (a counted response, WithCountIf) takes its cost before the
// handler, as every decision does, and settles after it: the cost is kept,
// or given back with one store call (Refunder).

// Admission is a request that [Limiter.Begin] admitted and whose cost is
// settled once its handler is done: call Done with the response's status.
// A nil *Admission is valid: its Done does nothing.
type Admission struct {
	l        *Limiter
	p        *pass
	ctx      context.Context
	r        *http.Request // nil for BeginKey
	fallback bool          // the fallback store admitted it, not the store
}

// Begin decides on r as [Limiter.Admit] does and reports whether the
// caller should go on to serve r. When the limiter counts only some
// responses ([WithCountIf]), it also returns the Admission to settle once
// the handler is done, with the response's status:
//
//	a, ok := l.Begin(w, r)
//	if !ok {
//		return
//	}
//	defer func() { a.Done(status) }()
//
// Otherwise the Admission is nil, and its Done does nothing. Adapters for
// other frameworks call it (or [Limiter.BeginWithKeyFunc]) around their
// handler; [Limiter.Handler] does it itself.
func (l *Limiter) Begin(w http.ResponseWriter, r *http.Request) (*Admission, bool) {
	return l.BeginWithKeyFunc(w, r, l.keyFunc)
}

// Done settles the admission with the status of its response: the cost
// is kept if the limiter counts status, or if status is 0 (unknown, such
// as a hijacked connection), and given back otherwise. The give-back is
// one store call within the time budget, through the breaker, with the
// request's context values but not its cancellation; a store that fails
// or cannot give back ([Refunder]) keeps the cost. Call Done once: the
// Admission is reused afterwards.
func (a *Admission) Done(status int) {
	if a == nil || a.l == nil {
		return
	}
	l, p, ctx, r, fallback := a.l, a.p, a.ctx, a.r, a.fallback
	*a = Admission{}
	switch {
	case status == 0 || l.countIf(status):
	case fallback:
		l.refundFallback(ctx, p)
	default:
		l.refund(uncancelled(ctx, l.store), r, p)
	}
	passes.Put(p)
}

// uncancelled returns ctx without its cancellation, for a settle that
// must be made whether the client stays or not. A Local store, which
// answers at once, is given ctx itself while it is not done: that spares
// an allocation per request.
func uncancelled(ctx context.Context, store Store) context.Context {
	if ctx.Done() == nil || ctx.Err() == nil && isLocal(store) {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// admission returns the Admission of a request whose pass p ended with o,
// if the request may go on and its cost is to be settled after its
// handler: the store or the fallback took it (not a dry run's denial, not
// the failure policy). Otherwise p goes back to the pool and the
// Admission is nil.
func (l *Limiter) admission(ctx context.Context, r *http.Request, p *pass, o *outcome, ok bool) (*Admission, bool) {
	if ok && l.countIf != nil && o.end == decided && (o.source == FromStore || o.source == FromFallback) && o.res.Allowed && p.n > 0 {
		p.adm = Admission{l: l, p: p, ctx: ctx, r: r, fallback: o.source == FromFallback}
		return &p.adm, true
	}
	passes.Put(p)
	return nil, ok
}

// refund gives back the request's cost of every take of p, which the
// store allowed p.sent ago: a pass of op refund (the time budget, the
// breaker). An open breaker, a failing store or one that cannot refund
// keep the cost: the request stays counted, which errs on the side of the
// limit. A failure goes to the error handler.
func (l *Limiter) refund(ctx context.Context, r *http.Request, p *pass) {
	if _, ok := l.store.(Refunder); !ok {
		return
	}
	p.op = refund
	if o := l.run(ctx, p.n, p); o.end != decided && !errors.Is(o.err, ErrBreakerOpen) {
		l.onError(r, o.err)
	}
}

// refundFallback gives back the cost of every take of p, which the
// fallback store admitted p.sent ago (its share's takes, p.shared): to the
// fallback, and out of what the store is owed for it (debt.go), so that a
// response that does not count is charged nowhere once the store answers.
func (l *Limiter) refundFallback(ctx context.Context, p *pass) {
	rf, ok := l.fallback.(Refunder)
	age := time.Since(p.sent) + refundSlack
	for _, t := range p.shared {
		if ok {
			rf.RefundN(ctx, t.Key, t.Limit, t.N, age) // local: it fails only on arguments the take passed
		}
		if l.debts != nil {
			l.debts.paid(t.Key, t.N)
		}
	}
}

// giveBack is the store call of a refund: each take's cost, one call per
// take within the time budget.
func (l *Limiter) giveBack(ctx context.Context, p *pass) error {
	rf := l.store.(Refunder)
	age := time.Since(p.sent) + refundSlack
	if l.budget != nil {
		age += l.budget.d // the store reads its clock within the budget
	}
	for i := range p.takes {
		t := &p.takes[i]
		if _, err := refundWithin(ctx, l.budget, rf, t.Key, t.Limit, p.n, age); err != nil {
			return err
		}
	}
	return nil
}

// refundSlack is added to the age of a refund's take: the store reads its
// clock after the limiter measured the age (scheduling, the wire), and an
// age too short could give back another request's tokens, while one too
// long gives back less (a window's take in its first moments stays
// counted). Refunder's contract says how each algorithm errs.
const refundSlack = 100 * time.Millisecond

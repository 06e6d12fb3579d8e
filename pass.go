package ratelimit

import (
	"context"
	"sync"
	"time"
)

// The one pass every way to the store takes (Admit, Begin, AdmitKey,
// AllowN, WaitN, Charge, Reset, a settle after the handler, a Transport's
// pause), for one policy or several, in this order:
//
//	keys                  pass_keys.go    the store key and limit of each policy
//	cost, deny cache      pass_guard.go   checks that spare the store a call
//	breaker               guard.go        with the time budget (timeout.go)
//	store call            pass_call.go    take, book, charge, refund or reset
//	record                pass_record.go  blocks, deny cache, debts; one outcome
//	failure policy        fallback.go     when the store did not answer
//
// The entry then answers from the outcome: headers.go, deny.go,
// observer.go (middleware.go, decide.go, settle.go, wait.go, charge.go).

// end is how a decision's pass ended.
type end int

const (
	decided   end = iota // the store, the deny cache or the fallback decided
	badKey               // the KeyFunc failed: a client error, never a decision
	badCost              // the cost or the KeyFunc's configuration is invalid: a programming error
	gone                 // the request's own context ended first: neither served nor reported (ended)
	undecided            // nothing decided: the failure policy answers
)

// outcome is the result of one decision's pass.
type outcome struct {
	end     end
	res     Result // decided: the result the headers describe, Allowed for the request
	best    int    // the policy res is of
	source  Source
	err     error         // the KeyFunc's, the cost's or the store's (also when the fallback decided)
	latency time.Duration // of the store call; 0 if there was none
	delay   time.Duration // how long the request waited for its tokens (shaping.go, wait.go)
	plan    string        // the request's plan, with several policies and plans
	// policyList is RateLimit-Policy's list of every policy, with a
	// LimitFunc policy among several (limitfunc.go).
	policyList []string
}

// pass holds a decision's takes and results, one per policy; passes are
// pooled so that a decision allocates nothing.
type pass struct {
	takes   []Take   // one per policy: all[:len(policies)]
	results []Result // allRes[:len(policies)]
	all     []Take   // the takes, then with WithBlock each policy's block (block.go)
	allRes  []Result
	shared  []Take // the fallback's
	owed    []int  // the debt each take pays the store (debt.go)
	n       int    // the request's cost

	op      op            // what the pass asks of the store
	maxWait time.Duration // a booking's longest wait (op book)
	booking Reservation   // the booking of op book (shaping.go, wait.go)
	booked  bool          // booking is set: clearBooking zeroes it
	plan    string        // the plan the request's context names, with plans
	sent    time.Time     // when the store call was sent, to settle it (settle.go)
	adm     Admission     // the request's, while it is settled after its handler (settle.go)
	own     bool          // the takes are the caller's, each with its own cost (takes.go)
	out     outcome       // the pass's outcome: run and its stages answer &out
	done    int           // op each: the takes the store counted before it failed (takes.go)
	client  string        // the client key of a take the store joins (pass_keys.go)
}

// op is what a pass asks of the store for its takes.
type op int

const (
	take   op = iota // take the cost now, if every take holds it
	book             // book the cost for the earliest instant within maxWait (Reserver)
	charge           // take the cost even past the budget, as a bounded debt (charge.go)
	refund           // give back the cost that the pass took p.sent ago (settle.go)
	reset            // make the keys' budgets full again (reset.go)
	each             // take each take on its own, a denied window filled (takes.go)
)

var passes = sync.Pool{New: func() any { return new(pass) }}

func (l *Limiter) getPass() *pass {
	p := passes.Get().(*pass)
	n, m := len(l.policies), len(l.policies)
	if l.blockFor > 0 {
		m = 2 * n
	}
	p.all, p.allRes = sized(p.all, m), sized(p.allRes, m)
	p.takes, p.results = p.all[:n], p.allRes[:n]
	p.shared, p.owed = sized(p.shared, n), sized(p.owed, n)
	p.op, p.maxWait, p.own, p.done = take, 0, false, 0
	return p
}

// answer makes o the outcome of p, and returns it. The outcome stays in
// the pass rather than being returned by value: it is 176 bytes, and the
// copies up the pass's stages cost a decision about 15 ns.
func (p *pass) answer(o outcome) *outcome {
	p.out = o
	return &p.out
}

// clearBooking zeroes p's booking before a pass, if a booking was made:
// zeroing a Reservation on every pass cost a decision about 10 ns (it
// holds a pointer, the time's location, so the write is the collector's
// business too).
func (p *pass) clearBooking() {
	if p.booked {
		p.booking, p.booked = Reservation{}, false
	}
}

// sized returns s with length n, reusing its array if it is large enough.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// run decides n tokens of each of p's takes, keyed already, as p.op asks,
// and returns the outcome, which p keeps (answer): it is read before p
// runs again or goes back to the pool.
func (l *Limiter) run(ctx context.Context, n int, p *pass) *outcome {
	if l.joiner != nil {
		l.joinKey(p) // pass_keys.go
	}
	if err := l.setCost(n, p); err != nil {
		return p.answer(outcome{end: badCost, source: FromFailurePolicy, err: err})
	}
	var now time.Time
	if l.denies != nil || l.breaker != nil {
		now = l.now()
		if p.op == take && l.denies != nil && l.cachedDenial(p, now) {
			o := p.answer(outcome{source: FromDenyCache})
			l.summarize(p, o)
			return o
		}
	}
	if ctx.Err() != nil { // the request ended before the store was asked
		return l.ended(ctx, p, nil)
	}
	probe, err := l.enterAt(now) // guard.go: the breaker; now is read when there is one
	if err != nil {
		return l.fallBack(ctx, p, err, 0)
	}
	if l.debts != nil && (p.op == take || p.op == each || p.op == book) {
		l.chargeDebts(p) // a booking pays by waiting for the debt's tokens too
	}
	var start time.Time
	if l.observer.Decision != nil {
		start = time.Now()
	}
	if l.countIf != nil && p.op == take || p.op == book {
		p.sent = time.Now()
	}
	callCtx := callContext(ctx, probe) // guard.go
	err = l.call(callCtx, p)
	var latency time.Duration
	if l.observer.Decision != nil {
		latency = time.Since(start)
	}
	switch l.settle(ctx, err, probe) {
	case answered:
		return l.record(ctx, p, now, latency)
	case refused:
		return p.answer(outcome{end: badCost, err: err, latency: latency})
	case requestEnded:
		return l.ended(ctx, p, err)
	}
	return l.fallBack(ctx, p, err, latency)
}

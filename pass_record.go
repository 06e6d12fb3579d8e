package ratelimit

// The pass's last stage: what the store answered recorded (blocks, the
// deny cache, debts paid) and summed up into one outcome; a request whose
// own context ended.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// record completes the outcome of p, which the store answered: blocks,
// the deny cache, the debts paid.
func (l *Limiter) record(ctx context.Context, p *pass, now time.Time, latency time.Duration) *outcome {
	if p.op == reset {
		l.forgetAll(ctx, p) // reset.go
		return p.answer(outcome{end: decided, latency: latency})
	}
	if p.op == charge || p.op == refund { // the key's waits have changed: ask the store next time
		for _, t := range p.takes {
			if l.denies != nil {
				l.denies.forget(t.Key)
			}
		}
		return p.answer(outcome{end: decided, latency: latency})
	}
	if l.debts != nil {
		l.owedLeft(p) // pass_guard.go
	}
	if l.blockFor > 0 {
		l.applyBlocks(ctx, p) // block.go
	}
	switch {
	case l.denies != nil && l.blockFor > 0:
		l.recordBlocked(p, asked{now, l.now()})
	case l.denies != nil && p.op == take: // each take of op each is recorded as the store answers it (takes.go)
		at := asked{now, l.now()}
		for i, t := range p.takes {
			l.denies.record(t.Key, t.N, at, p.results[i])
		}
	}
	o := p.answer(outcome{latency: latency})
	l.summarize(p, o)
	if l.debts != nil { // settle noted when the store answered
		for i, t := range p.takes {
			// paid by the request's takes if it passed; by each take
			// allowed on its own if they count each (takes.go)
			if o.res.Allowed || p.op == each && p.results[i].Allowed {
				l.debts.paid(t.Key, p.owed[i])
			}
		}
	}
	return o
}

// summarize completes o with p's results: the request passes if all
// allowed, and the headers describe the most constraining.
func (l *Limiter) summarize(p *pass, o *outcome) {
	o.end = decided
	o.plan = p.plan
	if l.funcPolicies && l.allNames != nil && (l.headers == HeadersIETF || l.headers == HeadersBoth) {
		o.policyList = l.funcPolicyList(p)
	}
	o.best = mostConstraining(p.results)
	o.res = p.results[o.best]
	for i := range p.results {
		if !p.results[i].Allowed {
			o.res.Allowed = false
		}
	}
	if o.res.Allowed {
		o.res.RetryAfter = 0
	}
}

// violated returns the names of the policies that denied p, as
// RateLimit-Policy names them: "policy.plan" for a policy with plans.
func (l *Limiter) violated(p *pass) []string {
	var names []string
	for i, r := range p.results {
		if r.Allowed {
			continue
		}
		alone := l.policies[i].alone
		if pl := l.policies[i].planned(r.Limit, p.plan); pl != nil {
			alone = pl.alone
		}
		if names == nil && i == len(p.results)-1 {
			return alone
		}
		names = append(names, alone[0])
	}
	return names
}

// ended answers a request whose own context ended before the store
// answered (the client went away, or the request's own deadline passed):
// it is not served, whatever the failure policy, and the store is not
// blamed. Nothing vouches for it: the store has not decided, and neither
// the failure policy (fail open would serve a key out of budget) nor the
// fallback (a budget of its own) is for a request that its own caller has
// given up on. The entries answer it as their context's end: AllowN and
// Wait with its error, the middleware with 503 for a deadline and nothing
// for a client that left.
//
// Its error is errEnded and the context's own (context.Canceled or
// DeadlineExceeded), with the store's where the call failed at that end (a
// client holding its socket to the deadline fails with an i/o timeout).
func (l *Limiter) ended(ctx context.Context, p *pass, err error) *outcome {
	own := ctx.Err()
	if own == nil { // past its deadline, before its timer marked it done (ownEnd)
		own = context.DeadlineExceeded
	}
	if err == nil || errors.Is(err, own) {
		err = fmt.Errorf("%w: %w", errEnded, own)
	} else {
		err = fmt.Errorf("%w: %w (the store: %w)", errEnded, own, err)
	}
	return p.answer(outcome{end: gone, err: err})
}

// errEnded is the error of a request whose own context ended before the
// store answered (ended).
var errEnded = errors.New("ratelimit: the request ended before the store answered")

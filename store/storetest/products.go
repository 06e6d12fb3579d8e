package storetest

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The cases of what API products build on a store: a key's budget across
// a change of plan, and a Limiter's blocks and charges, which live in the
// store so that every app server sharing it sees them. Each app server is
// a Limiter of its own over the one store.

func productCases() []testCase {
	return []testCase{
		{name: "Products/a change of limit (plan) keeps the key's count", run: planChange},
		{name: "Products/a block one app server starts holds on another", run: blockAcrossServers},
		{name: "Products/a charge one app server takes is seen by another", run: chargeAcrossServers},
	}
}

// servers returns n Limiters over e's store, as n app servers would run.
func (e *env) servers(n int, limit ratelimit.Limit, opts ...ratelimit.Option) []*ratelimit.Limiter {
	e.t.Helper()
	// A budget of a minute: these cases are about what the store holds, and
	// the default 100 ms is less than a busy machine under the race
	// detector may take for a call.
	opts = append(opts, ratelimit.WithName("products"), ratelimit.WithKeySecret([]byte("the storetest secret")),
		ratelimit.WithTimeout(time.Minute))
	ls := make([]*ratelimit.Limiter, n)
	for i := range ls {
		l, err := ratelimit.New(e.store, limit, opts...)
		if err != nil {
			e.t.Fatalf("ratelimit.New: %v", err)
		}
		ls[i] = l
	}
	return ls
}

// planChange: a key spent under one limit keeps its count under another,
// as a customer's budget does when its plan changes: a window's count and
// a sliding log's entries carry over, a token bucket's tokens too.
func planChange(e *env) {
	free, pro := ratelimit.PerHour(2), ratelimit.PerHour(100)
	for _, a := range []ratelimit.Algorithm{ratelimit.FixedWindow, ratelimit.SlidingLog, ratelimit.TokenBucket} {
		key := "plan/" + a.String()
		e.expect(key, free.WithAlgorithm(a), 2, true, 0)
		e.expect(key, free.WithAlgorithm(a), 1, false, 0)
		if a == ratelimit.TokenBucket {
			// Empty, refilling at the new rate: one token in 36 s.
			res := e.expect(key, pro.WithAlgorithm(a), 1, false, 0)
			if e.exact {
				near(e.t, "RetryAfter under the new limit", res.RetryAfter, 36*time.Second)
			}
			continue
		}
		e.expect(key, pro.WithAlgorithm(a), 1, true, 97)
	}
}

// blockAcrossServers: server A's denial blocks the key for two hours,
// longer than its budget takes to refill; server B, which saw none of it,
// denies the key with the block's wait; a reset on B lifts it for both.
func blockAcrossServers(e *env) {
	ls := e.servers(2, ratelimit.PerHour(2), ratelimit.WithBlock(2*time.Hour))
	a, b := ls[0], ls[1]
	ctx := context.Background()
	for i, want := range []bool{true, true, false} {
		if res, err := a.Allow(ctx, "user:ann"); err != nil || res.Allowed != want {
			e.t.Fatalf("server A, request %d: %+v, %v; want allowed %v", i+1, res, err, want)
		}
	}
	res, err := b.Allow(ctx, "user:ann")
	if err != nil || res.Allowed || res.RetryAfter < 119*time.Minute {
		e.t.Fatalf("server B: %+v, %v; want denied for the block's 2h", res, err)
	}
	if res, err := b.Allow(ctx, "user:bob"); err != nil || !res.Allowed {
		e.t.Fatalf("another key on server B: %+v, %v; want allowed", res, err)
	}
	if !isResetter(e.store) {
		return
	}
	if err := b.Reset(ctx, "user:ann"); err != nil {
		e.t.Fatalf("Reset: %v", err)
	}
	for name, l := range map[string]*ratelimit.Limiter{"B": b, "A, which reset nothing": a} {
		if res, err := l.AllowN(ctx, "user:ann", 0); err != nil || !res.Allowed || res.Remaining != 2 {
			e.t.Fatalf("server %s after the reset: %+v, %v; want a full budget", name, res, err)
		}
	}
}

// chargeAcrossServers: server A charges past the budget; server B denies
// the key: a token bucket on a store that books is in debt (one below
// empty: the next token in 12 minutes), any other budget is spent.
func chargeAcrossServers(e *env) {
	ls := e.servers(2, ratelimit.PerHour(10))
	ctx := context.Background()
	if _, err := ls[0].Allow(ctx, "user:bo"); err != nil {
		e.t.Fatal(err)
	}
	if err := ls[0].Charge(ctx, "user:bo", 500); err != nil {
		e.t.Fatalf("Charge: %v", err)
	}
	res, err := ls[1].Allow(ctx, "user:bo")
	if err != nil || res.Allowed || res.Remaining != 0 {
		e.t.Fatalf("server B after the charge: %+v, %v; want denied", res, err)
	}
	want := 6 * time.Minute // the next token of a spent bucket
	if isReserver(e.store) {
		want = 12 * time.Minute
	}
	if e.exact {
		near(e.t, "server B's RetryAfter", res.RetryAfter, want)
	} else if res.RetryAfter < want-time.Minute || res.RetryAfter > want {
		e.t.Fatalf("server B's RetryAfter %v, want about %v", res.RetryAfter, want)
	}
}

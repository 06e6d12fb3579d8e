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
		{name: "Products/a plan of another period keeps a window's count", clock: true, run: planPeriodChange},
		{name: "Products/a sliding log's report or denial under a shorter period drops nothing", clock: true, run: logShortReport},
		{name: "Products/a count carried from another period is told to end with its window", clock: true, run: carriedCountEnds},
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

// planPeriodChange: a window's count carries over to a limit of another
// Period while the window it was counted in has not ended: 2 taken under
// 10 per 2 s leave 1 under 3 per 5 s, and the 2 stay counted when the
// first limit comes back (each store's windows of either period used to
// count afresh: 14 passed within 0.6 s under 10 per 2 s). A long window's
// count holds a short period's limit until the long window ends.
func planPeriodChange(e *env) {
	for _, a := range []ratelimit.Algorithm{ratelimit.FixedWindow, ratelimit.SlidingWindow} {
		short := ratelimit.Limit{Rate: 10, Period: 2 * time.Second, Algorithm: a}
		other := ratelimit.Limit{Rate: 3, Period: 5 * time.Second, Algorithm: a}
		key := "period/" + a.String()
		e.wait(2600 * time.Millisecond) // into a 2 s window that is not a 5 s one's start
		e.expect(key, short, 2, true, 8)
		e.wait(600 * time.Millisecond)
		e.expect(key, other, 2, false, 1)
		e.expect(key, short, 10, false, 8)
		e.expect(key, short, 8, true, 0)
		e.wait(10*time.Second - e.clock().Sub(e.clock().Truncate(10*time.Second))) // the next 10 s
	}
	// A long window's count holds a short period's limit, and is told to,
	// until the long window ends; a short window's take does not cut it
	// short.
	long := ratelimit.Limit{Rate: 100, Period: 10 * time.Second, Algorithm: ratelimit.FixedWindow}
	short := ratelimit.Limit{Rate: 10, Period: 2 * time.Second, Algorithm: ratelimit.FixedWindow}
	burst := ratelimit.Limit{Rate: 60, Period: 100 * time.Millisecond, Algorithm: ratelimit.FixedWindow}
	e.wait(time.Second)
	e.expect("period/down", long, 50, true, 50)
	e.wait(2 * time.Second)
	res := e.expect("period/down", short, 1, false, 0)
	if e.exact && (res.RetryAfter != 7*time.Second || res.ResetAfter != 7*time.Second) {
		e.t.Fatalf("a short limit held by a long window's count: RetryAfter %v, ResetAfter %v; want 7s, the long window's end",
			res.RetryAfter, res.ResetAfter)
	}
	e.expect("period/down", burst, 1, true, 9)   // 51 of 60, counted in the long window still
	e.wait(150 * time.Millisecond)               // past the burst's own window
	e.expect("period/down", short, 1, false, 0)  // still held: 51 counted
	e.expect("period/down", long, 49, true, 0)   // the long limit's 100 in its window
	e.wait(6*time.Second + 850*time.Millisecond) // the long window has ended
	e.expect("period/down", short, 1, true, 9)
}

// logShortReport: a sliding log drops the requests that have left its
// window only when it commits a take, as Redis's does: a report under a
// limit of a shorter period (a LimitFunc's) leaves the longer limit's
// requests counted. The memory store dropped them on any
// call, and the minute's 60 then admitted 60 more.
func logShortReport(e *env) {
	long := ratelimit.PerMinute(60).WithAlgorithm(ratelimit.SlidingLog)
	short := ratelimit.Limit{Rate: 1, Period: 2 * time.Second, Algorithm: ratelimit.SlidingLog}
	e.expect("log/short", long, 60, true, 0)
	e.wait(2100 * time.Millisecond)
	e.expect("log/short", short, 0, true, 1)
	e.wait(100 * time.Millisecond)
	e.expect("log/short", long, 1, false, 0)
}

// carriedCountEnds: a count carried to a limit of another period ends
// with the window it was counted in, and a denial or report, which writes
// nothing, tells that end (2 s, not the minute's 59); a count refunded to
// nothing carries nothing (a minute's refunded take held a 2 s limit for
// the minute); a sliding log's refund of a take that may have left the
// window gives nothing back (it gave back another request's entry).
func carriedCountEnds(e *env) {
	short := ratelimit.Limit{Rate: 8, Period: 3 * time.Second, Algorithm: ratelimit.FixedWindow}
	minute := ratelimit.PerMinute(5).WithAlgorithm(ratelimit.FixedWindow)
	e.wait(500 * time.Millisecond)
	e.expect("carry/deny", short, 8, true, 0)
	e.wait(500 * time.Millisecond)
	res := e.expect("carry/deny", minute, 1, false, 0)
	report := e.expect("carry/deny", minute, 0, false, 0) // 8 past its 5: a report is denied too
	if e.exact && (res.RetryAfter != 2*time.Second || report.ResetAfter != 2*time.Second) {
		e.t.Fatalf("a minute's limit held by a 3 s window's count: RetryAfter %v, a report's ResetAfter %v; want 2s, that window's end",
			res.RetryAfter, report.ResetAfter)
	}
	e.wait(2 * time.Second)
	e.expect("carry/deny", minute, 5, true, 0)

	rf, ok := e.store.(ratelimit.Refunder)
	if !ok {
		return
	}
	ctx := context.Background()
	burst := ratelimit.Limit{Rate: 3, Period: 2 * time.Second, Algorithm: ratelimit.FixedWindow}
	e.expect("carry/refund", minute, 1, true, 4)
	e.wait(500 * time.Millisecond)
	if _, err := rf.RefundN(ctx, "carry/refund", minute, 1, 500*time.Millisecond); err != nil {
		e.t.Fatal(err)
	}
	e.expect("carry/refund", burst, 3, true, 0)
	e.wait(2 * time.Second) // the burst's next window
	e.expect("carry/refund", burst, 3, true, 0)

	log := ratelimit.Limit{Rate: 2, Period: time.Second, Algorithm: ratelimit.SlidingLog}
	e.expect("carry/log", log, 1, true, 1) // A
	e.wait(time.Second)
	e.expect("carry/log", log, 1, true, 1) // B: A has left
	e.wait(200 * time.Millisecond)
	e.expect("carry/log", log, 1, true, 0) // C
	e.wait(300 * time.Millisecond)
	if _, err := rf.RefundN(ctx, "carry/log", log, 1, 1500*time.Millisecond); err != nil { // A's, 1.5 s on
		e.t.Fatal(err)
	}
	e.expect("carry/log", log, 1, false, 0) // B and C still in the window
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

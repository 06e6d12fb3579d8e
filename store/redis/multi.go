package redis

import (
	"context"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.MultiStore = (*Store)(nil)

// AllowAll implements [ratelimit.MultiStore] in one round trip: one script
// (multi.lua, with EVALSHA, and EVAL only after NOSCRIPT, sent at most once
// and with the same deadline as [Store.AllowN]) decides every take at one
// instant of Redis's clock, writing nothing, then commits them all only if
// every one is allowed. Each take may have its own algorithm and limit;
// keys must be distinct.
//
// On a *goredis.ClusterClient or *goredis.Ring, a script may only touch
// keys of one slot: if the keys' hash tags differ (see [Store.Key]: the
// limits of one client key share one), AllowAll returns
// [ratelimit.ErrCrossSlot] without calling Redis, and [ratelimit.AllowAll]
// decides the takes one by one. On a single node or a failover client any
// keys go in one script.
func (s *Store) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	if err := ratelimit.ValidateTakes(takes, results); err != nil {
		return err
	}
	if s.client == nil {
		return ErrNilClient
	}
	if len(takes) == 0 {
		return ctx.Err()
	}
	return s.allowAll(ctx, takes, results, false)
}

// allowAll is AllowAll after its checks; resent is set when the takes go a
// second time, around Redis's clock (see calendar.go).
func (s *Store) allowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result, resent bool) error {
	if s.sharded {
		tag := slotTag(afterNamespace(takes[0].Key))
		for i := 1; i < len(takes); i++ {
			if slotTag(afterNamespace(takes[i].Key)) != tag {
				return ratelimit.ErrCrossSlot
			}
		}
	}
	k := len(takes)
	args := make([]any, 3, 3+k+2+5*k)
	args[0], args[1], args[2] = "evalsha", s.scripts.multi.script.Hash(), k
	for i := range takes {
		args = append(args, s.Key(takes[i].Key, takes[i].Limit.Algorithm))
	}
	args = append(args, s.clockArg(), s.deadlineArg(ctx))
	for i := range takes {
		t := &takes[i]
		a := s.limitArgs(t.Limit)
		args = append(args, int(t.Limit.Algorithm), a[0], a[1], t.N, a[2])
	}
	rows := make([]row, k)
	if _, err := s.eval(ctx, s.scripts.multi, args, rows); err != nil {
		return err
	}
	if missedWindow(rows) && !resent {
		return s.allowAll(ctx, takes, results, true) // nothing was taken
	}
	if rows[0][0] < 0 {
		return ErrLate
	}
	for i := range takes {
		results[i] = rows[i].result(takes[i].Limit)
	}
	return nil
}

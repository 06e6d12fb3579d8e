package redisstore

import (
	"context"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.MultiStore = (*Store)(nil)

// AllowAll implements [ratelimit.MultiStore] in one round trip, as
// [Store.AllowN]: alone (multi.lua), or as one decision of a batch with
// the decisions waiting for the same node, sent at most once (EVALSHA, and
// EVAL only after NOSCRIPT) and with AllowN's deadline. Every take is
// decided at one instant of Redis's clock, writing nothing, then they are
// all committed only if every one is allowed. Each take may have its own algorithm and limit;
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
// second time, around Redis's clock (see calendar.go). The takes are one
// decision of the group commit: alone, multi.lua; in a batch, decided by
// batch.lua as multi.lua decides them.
func (s *Store) allowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result, resent bool) error {
	tag := slotTag(afterNamespace(takes[0].Key))
	if s.sharded {
		for i := 1; i < len(takes); i++ {
			if slotTag(afterNamespace(takes[i].Key)) != tag {
				return ratelimit.ErrCrossSlot
			}
		}
	}
	k := len(takes)
	keys, rows := make([]string, k), make([]row, k)
	for i := range takes {
		keys[i] = s.Key(takes[i].Key, takes[i].Limit.Algorithm)
	}
	p := newPending()
	p.ctx, p.op, p.takes, p.keys, p.rows = ctx, all, takes, keys, rows
	p.deadline = s.deadlineArg(ctx)
	if s.sharded {
		p.slot = clusterSlot(tag[1:9])
	}
	_, err := s.decide(s.batcherFor(ctx, &tag), p)
	p.free()
	if err == errMissedWindow {
		if !resent {
			return s.allowAll(ctx, takes, results, true) // nothing was taken
		}
		err = nil
	}
	if err != nil {
		return err
	}
	if rows[0][0] < 0 {
		return ErrLate
	}
	for i := range takes {
		results[i] = rows[i].result(takes[i].Limit)
	}
	return nil
}

package ratelimit

import (
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// WithBlock blocks a key for d once a policy denies it: every request of
// the key is then denied, without asking the store, until d has passed
// since the denial, whatever its budget (login protection: a client that
// guessed 5 wrong passwords waits 15 minutes, not until the next token).
// The block is kept by the app server that saw the denial, for at most
// [DefaultDenyCacheKeys] keys (more are not blocked, only limited); the
// denial itself comes from the store, shared by the fleet, so each app
// server blocks the key on its first request there. Retry-After and the
// headers of a blocked request tell the block's end, and it is answered as
// the deny cache answers (Source FromDenyCache). [Limiter.Reset] lifts it.
// A denial of the store or of the deny cache (which speaks for the store)
// starts a block; one of the fallback store does not, and a blocked
// request does not extend its block. d must be positive.
func WithBlock(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("ratelimit: WithBlock(%v): want a positive duration", d)
		}
		c.blockFor = d
		return nil
	}
}

// blockList remembers, per store key, until when it is blocked (Unix ns).
// It is bounded like the debt ledger: when full, new blocks are dropped
// (the key is still limited).
type blockList struct {
	d      time.Duration
	seed   maphash.Seed
	count  atomic.Int64 // keys blocked, or were: 0 spares every lookup
	shards [debtShards]blockShard
}

type blockShard struct {
	mu  sync.Mutex
	m   map[string]int64
	max int
	_   [40]byte
}

func newBlockList(d time.Duration, maxKeys int) *blockList {
	b := &blockList{d: d, seed: maphash.MakeSeed()}
	for i := range b.shards {
		b.shards[i].max = max(1, maxKeys/debtShards)
	}
	return b
}

func (b *blockList) shard(key string) *blockShard {
	return &b.shards[maphash.String(b.seed, key)%debtShards]
}

// block blocks key from now for the list's duration.
func (b *blockList) block(key string, now time.Time) {
	sh := b.shard(key)
	until := now.Add(b.d).UnixNano()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[key]; !ok {
		if len(sh.m) >= sh.max {
			for k, u := range sh.m { // drop the blocks that ended
				if u <= now.UnixNano() {
					delete(sh.m, k)
					b.count.Add(-1)
				}
			}
			if len(sh.m) >= sh.max {
				return
			}
		}
		if sh.m == nil {
			sh.m = make(map[string]int64)
		}
		b.count.Add(1)
	}
	sh.m[key] = until
}

// until returns how long key stays blocked after now, or 0.
func (b *blockList) until(key string, now time.Time) time.Duration {
	if b.count.Load() == 0 {
		return 0
	}
	sh := b.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u, ok := sh.m[key]
	if !ok {
		return 0
	}
	if left := u - now.UnixNano(); left > 0 {
		return time.Duration(left)
	}
	delete(sh.m, key)
	b.count.Add(-1)
	return 0
}

// lift ends key's block.
func (b *blockList) lift(key string) {
	sh := b.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[key]; ok {
		delete(sh.m, key)
		b.count.Add(-1)
	}
}

// blocked reports whether a take of p is blocked at now, and writes the
// results as the deny cache does: the blocks, and a full budget for the
// others.
func (l *Limiter) blocked(p *pass, now time.Time) bool {
	denied := false
	for i, t := range p.takes {
		if left := l.blocks.until(t.Key, now); left > 0 {
			p.results[i], denied = Result{Limit: t.Limit, RetryAfter: left, ResetAfter: left}, true
		} else {
			p.results[i] = Result{Allowed: true, Limit: t.Limit, Remaining: t.Limit.Capacity()}
		}
	}
	return denied
}

// blockDenied blocks the keys of the takes of p that the store denied,
// and makes their results wait for the block.
func (l *Limiter) blockDenied(p *pass, now time.Time) {
	for i, t := range p.takes {
		if res := &p.results[i]; !res.Allowed && t.N > 0 {
			l.blocks.block(t.Key, now)
			res.RetryAfter, res.ResetAfter = max(res.RetryAfter, l.blocks.d), max(res.ResetAfter, l.blocks.d)
		}
	}
}

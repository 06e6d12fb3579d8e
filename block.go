package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// WithBlock blocks a key for d once a policy denies it: every request of
// the key is then denied until d has passed since the denial, whatever its
// budget (login protection: a client that guessed 5 wrong passwords waits
// 15 minutes, not until the next token).
//
// The block is kept in the store, beside the key's budget, so that every
// app server of a fleet sharing the store sees it at once: it is a budget
// of its own, one request per d ([SlidingLog]), under the key's client part
// in the namespace "<policy's namespace>!" (names hold no '!'; on Redis
// Cluster it shares the key's slot). Each decision reads it with the
// budget, in the same store call ([AllowAll]: one script call on Redis);
// a denial that starts a block makes one more call, to start it. The
// requests of a blocked key still spend its budget, and a blocked request
// does not extend the block. Retry-After and X-RateLimit-Reset of a
// blocked request both tell when it may come back: the block's end, or
// the budget's own wait after what the request spent if that is longer;
// the deny cache keeps the denial for as long. [Limiter.Reset] lifts the
// block. While the store fails, a block this app server has seen holds to
// its end (its deny cache answers, whatever [WithDenyCacheMaxAge]); one it
// has not seen is unknown to the fallback store, whose denials start no
// block. d must be positive; WithBlock does not combine with
// [WithMaxDelay] (a shaped request waits, it is not denied).
func WithBlock(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("ratelimit: WithBlock(%v): want a positive duration", d)
		}
		c.blockFor = d
		return nil
	}
}

// blockLimit is the limit of a block's budget: one request per d, taken
// when the block starts; the key is blocked while it holds none.
func blockLimit(d time.Duration) Limit {
	return Limit{Rate: 1, Period: d, Algorithm: SlidingLog}
}

// blockKey is the store key of the block of client key raw under the
// policy: its client part in the namespace of the policy's blocks.
func (p *policy) blockKey(raw string) (string, error) {
	return p.cachedKey(p.blocks, raw, p.blockParts)
}

func (p *policy) blockParts(raw string) (string, error) {
	client, err := p.space.client(raw)
	if err != nil {
		return "", err
	}
	return p.prefix[:len(p.prefix)-1] + "!/" + client, nil
}

// fillBlock makes p's take of policy i's block for the client key: a
// report (n = 0) of the block's budget, decided with the request's takes.
func (l *Limiter) fillBlock(p *pass, i int, key string) error {
	bk, err := l.policies[i].blockKey(key)
	if err != nil {
		return err
	}
	p.all[len(p.takes)+i] = Take{Key: bk, Limit: l.blockLimit}
	return nil
}

// applyBlocks completes the results of p, which the store answered with
// its blocks' reports: a take whose key is blocked is denied until the
// block's end, and a take the store denied starts a block.
func (l *Limiter) applyBlocks(ctx context.Context, p *pass) {
	n := len(p.takes)
	// A blocked request spends the budget of every policy that allowed it:
	// the longest of their waits after that is its too.
	var spent time.Duration
	for i := range p.takes {
		if p.results[i].Allowed {
			// a request told less would come back to a budget short of
			// its cost, be denied, and start a new block
			spent = max(spent, untilItHolds(p.results[i], p.cost(i)))
		}
	}
	for i := range p.takes {
		res, block := &p.results[i], &p.allRes[n+i]
		switch {
		case block.Remaining == 0: // blocked: until the block ends, or the budget allows if later
			own := spent
			if !res.Allowed {
				own = max(own, res.RetryAfter)
			}
			wait := max(block.ResetAfter, own)
			*res = Result{Limit: res.Limit, RetryAfter: wait, ResetAfter: wait}
		case !res.Allowed && p.takes[i].N > 0:
			l.startBlock(ctx, p, i)
		}
	}
}

// startBlock starts the block of p's take i, which the store denied, and
// makes its result wait for the block's end: one store call, within the
// time budget; if it fails, the denial stands alone.
func (l *Limiter) startBlock(ctx context.Context, p *pass, i int) {
	bt, res := &p.all[len(p.takes)+i], &p.results[i]
	var block Result
	if err := allowWithin(ctx, l.budget, l.store, bt.Key, bt.Limit, 1, &block); err == nil {
		res.RetryAfter = max(res.RetryAfter, bt.Limit.Period)
		res.ResetAfter = res.RetryAfter        // the headers describe the block
		p.allRes[len(p.takes)+i].Remaining = 0 // blocked now (recordBlocked)
	}
}

// recordBlocked tells the deny cache of p's results, with blocks: only
// denials, which are the store's and have started their block, never the
// prediction that an emptied key is denied (which would be a denial that
// starts no block).
func (l *Limiter) recordBlocked(p *pass, at asked) {
	for i, t := range p.takes {
		switch res := p.results[i]; {
		case res.Allowed:
			l.denies.forget(t.Key)
		case p.allRes[len(p.takes)+i].Remaining == 0: // blocked: any cost, held through an outage
			l.denies.put(t.Key, t.N, at, res, true)
		default: // its block not started (its call failed): a denial of its cost alone
			l.denies.put(t.Key, t.N, at, res, false)
		}
	}
}

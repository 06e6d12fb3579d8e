package memory

import (
	"context"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.MultiStore = (*Store)(nil)

// pending is one take of AllowAll between its decision and its commit.
type pending struct {
	h     uint64 // the key's hash
	shard int    // the index of its shard
	c     cell   // the key's state once the take is committed
}

// maxStackTakes is how many takes AllowAll decides without allocating.
const maxStackTakes = 8

// AllowAll implements [ratelimit.MultiStore]: it decides every take under
// the locks of all the shards involved, with the functions [Store.AllowN]
// uses, at one instant. If every take is allowed, each takes its tokens;
// otherwise none takes anything, results[i].Allowed says whether takes[i]
// alone would have passed, RetryAfter is set for those that would not, and
// Remaining and ResetAfter describe the budgets as they are. Keys must be
// distinct. It does not allocate for up to 8 takes of keys it already
// holds.
func (s *Store) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	if err := ratelimit.ValidateTakes(takes, results); err != nil {
		return err
	}
	if len(takes) == 0 {
		return ctx.Err()
	}
	var buf [maxStackTakes]pending
	var p []pending
	if len(takes) <= len(buf) {
		p = buf[:len(takes)]
	} else {
		p = make([]pending, len(takes))
	}
	for i := range takes {
		h := s.hash(takes[i].Key, takes[i].Limit.Algorithm)
		p[i] = pending{h: h, shard: int(h >> s.shift)}
	}

	// Lock each shard once, in index order, so that two calls that share
	// shards never wait for each other in a cycle.
	for sh := nextShard(p, -1); sh >= 0; sh = nextShard(p, sh) {
		s.shards[sh].mu.Lock()
	}
	defer func() {
		for sh := nextShard(p, -1); sh >= 0; sh = nextShard(p, sh) {
			s.shards[sh].mu.Unlock()
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()

	// Phase 1: decide every take, writing nothing.
	all := true
	for i := range takes {
		t := &takes[i]
		p[i].c, results[i] = s.shards[p[i].shard].decide(p[i].h, now, t.Limit, t.N)
		all = all && results[i].Allowed
	}
	if !all {
		// Nothing is taken: report the budgets as they are, and keep each
		// take's own verdict and wait.
		for i := range takes {
			t := &takes[i]
			_, report := s.shards[p[i].shard].decide(p[i].h, now, t.Limit, 0)
			report.Allowed, report.RetryAfter = results[i].Allowed, results[i].RetryAfter
			results[i] = report
		}
		return nil
	}

	// Phase 2: every take is allowed; commit them at the same instant.
	for i := range takes {
		t := &takes[i]
		if t.N == 0 {
			continue // a report: nothing to write
		}
		sh := &s.shards[p[i].shard]
		h, c := p[i].h, p[i].c
		j, found := sh.cells.find(h) // again: an insert before may have moved it
		if t.Limit.Algorithm == ratelimit.SlidingLog {
			var was cell
			if found {
				was = sh.cells.slots[j].c
			}
			c, results[i] = sh.takeLog(h, found, was, now, t.Limit, t.N)
		}
		sh.put(j, found, h, c, keepOf(t.Limit), now)
	}
	return nil
}

// decide is AllowN's decision for key h without its write: the key's state
// after taking n at now, and the result. Nothing changes: a sliding log
// drops the entries that have left its window when it commits a take.
func (sh *shard) decide(h uint64, now int64, l ratelimit.Limit, n int) (c cell, res ratelimit.Result) {
	i, found := sh.cells.find(h)
	if found {
		c = sh.cells.slots[i].c
	}
	switch l.Algorithm {
	case ratelimit.FixedWindow:
		return fixedWindow(c, !found, now, l, n)
	case ratelimit.SlidingWindow:
		return slidingWindow(c, !found, now, l, n)
	case ratelimit.SlidingLog:
		var one [1]logEntry
		g, in := sh.kept(h, found), inCell(found, c, &one)
		if g == nil {
			g = &in
		}
		_, res = takeLog(g, now, l, 0)
		if !res.Allowed || res.Remaining < n {
			_, res = takeLog(g, now, l, n) // denied: takes nothing
		}
		// Allowed: the commit takes it, with the Remaining after it.
		return c, res
	default:
		takeTokensAt(&c, !found, now, l, l.PerSecondRate(), float64(l.Capacity()), n, &res)
		return c, res
	}
}

// nextShard returns the smallest shard index of p above after, or -1.
func nextShard(p []pending, after int) int {
	next := -1
	for i := range p {
		if sh := p[i].shard; sh > after && (next < 0 || sh < next) {
			next = sh
		}
	}
	return next
}

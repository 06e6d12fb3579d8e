package redisstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// Group commit. Decisions for one Redis node (one master on Cluster) share a
// batcher. A decision that finds fewer than maxSenders calls in flight is
// sent at once, alone, by its caller's goroutine: a quiet server sees one
// script call per decision, as without batching. One that finds them all
// busy waits in a bounded queue; when a call returns, its sender hands the
// oldest queued decisions, up to maxBatch, to the first of them, which
// sends them as one script call (batch.lua): one TIME, one MGET, each
// decision on its own, in order, with its own deadline (an AllowAll's
// takes all or nothing, as one decision). There is no timer
// and no goroutine of the store's own.
//
// Each decision is sent at most once, with its caller's deadline in
// Redis's clock. A decision still queued when its context ends is removed
// and never sent; one taken into a batch waits for its call's answer, as a
// decision sent alone waits for its own (the call's context has the
// latest deadline of the batch). A call's error (a broken connection, a
// timeout) is the error of the decisions it carried, and only of them.
type batcher struct {
	// A Cluster master's: its address and client (cluster.go); "" and nil
	// for a single node's.
	addr  string
	node  atomic.Pointer[goredis.Client]
	stale atomic.Bool // the slots cached as its are to be found again (reloadRoutes)

	mu       sync.Mutex
	queue    []*pending
	senders  int           // calls in flight, or being formed
	took     time.Duration // how long recent calls took, smoothed
	answered time.Time     // when the node last answered a call (silent)
	busy     time.Time     // when calls went out to an idle node that had answered since the last time
}

const (
	// maxSenders is the number of script calls a batcher has in flight:
	// enough to keep Redis busy while replies travel.
	maxSenders = 2
	// maxBatch is the most takes one call decides (an AllowAll counts its
	// takes; one of more is sent alone).
	maxBatch = 32
	// maxQueued bounds the decisions waiting while every sender is busy,
	// and so the memory a hung Redis costs.
	maxQueued = 4096
)

// ErrBusy is returned, at once, for a decision that finds too many others
// waiting for the same Redis node: Redis is not keeping up, or not
// answering. It wraps [ratelimit.ErrNotSent]: the decision was never sent,
// and a limiter does not count it against the store in its breaker.
var ErrBusy = fmt.Errorf("ratelimit/redis: too many decisions waiting for Redis: %w", ratelimit.ErrNotSent)

// errSilent is the error of a decision that finds every call to its node
// in flight and the node silent for longer than the decision can wait.
var errSilent = fmt.Errorf("ratelimit/redis: not sent, Redis has answered nothing for longer than the decision can wait: %w", ratelimit.ErrNotSent)

// errNotSent is the error of a queued decision that was not sent: its
// caller gave up on it (ratelimit.Sending returned false), or its deadline
// was too near for an answer in time.
var errNotSent = fmt.Errorf("ratelimit/redis: not sent, its deadline would pass while queued for Redis: %w", ratelimit.ErrNotSent)

// decide sends p through b (nil: alone, now) and returns its outcome.
func (s *Store) decide(b *batcher, p *pending) (ratelimit.Result, error) {
	p.self[0] = p
	if b == nil {
		s.send(nil, p.self[:])
		return p.res, p.err
	}
	b.mu.Lock()
	if b.senders < maxSenders {
		start := time.Now()
		if b.senders == 0 && !b.answered.Before(b.busy) { // a new busy spell (silent)
			b.busy = start
		}
		b.senders++
		b.mu.Unlock()
		s.lead(b, p.self[:], start)
		return p.res, p.err
	}
	if len(b.queue) >= maxQueued {
		b.mu.Unlock()
		return ratelimit.Result{}, ErrBusy
	}
	if b.silent(p, time.Now()) {
		b.mu.Unlock()
		return ratelimit.Result{}, errSilent
	}
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	p.queued = true
	b.queue = append(b.queue, p)
	b.mu.Unlock()
	ratelimit.Queued(p.ctx) // a limiter whose budget ends first sheds it

	select {
	case <-p.wake:
	case <-p.ctx.Done():
		b.mu.Lock()
		if p.queued {
			b.remove(p)
			b.mu.Unlock()
			return ratelimit.Result{}, fmt.Errorf("ratelimit/redis: not sent, the queue for Redis was still full: %w: %w", ratelimit.ErrNotSent, p.ctx.Err())
		}
		b.mu.Unlock()
		// Taken into a batch: sent, or about to be sent by this goroutine.
		// Like a decision sent alone, it waits for its call's answer, which
		// the call's context bounds.
		<-p.wake
	}
	if lead := p.lead; lead != nil {
		p.lead = nil
		s.lead(b, lead, time.Now())
	}
	return p.res, p.err
}

// lead sends batch, whose first decision is the caller's, tells the
// others, then hands the next batch from the queue, if any, to its first
// decision's caller. start is when the call is made (its duration is
// smoothed into b.took).
func (s *Store) lead(b *batcher, batch []*pending, start time.Time) {
	s.send(b, batch)
	end := time.Now()
	took := end.Sub(start)
	answered := batch[0].err == nil || errors.Is(batch[0].err, ErrLate)
	for _, p := range batch[1:] {
		p.wake <- struct{}{}
	}
	b.mu.Lock()
	if answered {
		b.answered = end
	}
	if b.took == 0 {
		b.took = took
	}
	b.took = (3*b.took + took) / 4
	next := b.takeBatch(time.Now())
	if next == nil {
		b.senders--
		b.mu.Unlock()
		return
	}
	next[0].lead = next
	next[0].wake <- struct{}{}
	b.mu.Unlock()
}

// takeBatch takes the next batch out of the queue at now: the oldest
// decisions, up to maxBatch takes, but for those that are not to be sent,
// which are woken with errNotSent (load shedding): those whose limiter
// gave up on them while they waited (ratelimit.Sending is false), and
// those whose deadline is nearer than recent calls took, which would
// reach Redis too late to be answered in time (when all are, no call is
// left in flight, and the next decision is sent at once: calls go on and
// tell how long they take). nil when none is left. b.mu is held.
func (b *batcher) takeBatch(now time.Time) []*pending {
	for {
		k := batchLen(b.queue)
		if k == 0 {
			return nil
		}
		next := make([]*pending, 0, k)
		for _, p := range b.queue[:k] {
			p.queued = false
			if !b.tooLate(p, now) && ratelimit.Sending(p.ctx) {
				next = append(next, p)
				continue
			}
			p.err = errNotSent
			p.wake <- struct{}{}
		}
		n := copy(b.queue, b.queue[k:])
		clear(b.queue[n:])
		b.queue = b.queue[:n]
		if len(next) > 0 {
			return next
		}
	}
}

// silent reports whether p, which finds every call to b's node in flight,
// would wait for a node that has answered nothing for longer than p can
// wait (a node that hangs, such as one Redis Cluster master frozen while
// the others answer): p is then refused at once, not queued until its
// deadline nears, so that a hung node costs only the calls in flight
// their time budget. The silence counts from the node's last answer, or
// from when calls went out to it after it had been idle, whichever is
// later: a node that answered its last call is not silent while idle.
// b.mu is held.
func (b *batcher) silent(p *pending, now time.Time) bool {
	d, ok := p.ctx.Deadline()
	since := b.answered
	if b.busy.After(since) {
		since = b.busy
	}
	return ok && now.Sub(since) > d.Sub(now)
}

// tooLate reports whether p's deadline is nearer than recent calls took;
// b.mu is held.
func (b *batcher) tooLate(p *pending, now time.Time) bool {
	d, ok := p.ctx.Deadline()
	return ok && d.Sub(now) < b.took
}

// batchLen is the number of queued decisions, from the oldest, that the
// next batch takes: at most maxBatch takes in all, and at least one
// decision if any is queued.
func batchLen(queue []*pending) int {
	k, w := 0, 0
	for k < len(queue) && k < maxBatch {
		if w += queue[k].width(); k > 0 && w > maxBatch {
			break
		}
		k++
	}
	return k
}

// remove takes p out of the queue; b.mu is held.
func (b *batcher) remove(p *pending) {
	for i, q := range b.queue {
		if q == p {
			n := copy(b.queue[i:], b.queue[i+1:])
			b.queue[i+n] = nil
			b.queue = b.queue[:i+n]
			p.queued = false
			return
		}
	}
}

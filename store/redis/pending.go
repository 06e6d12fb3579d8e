package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// pending is one decision on its way to Redis: what it decides (op and
// its fields, each with one meaning), then its outcome, then its place in
// its batcher's queue (queue.go). args.go turns it into a script's
// arguments, wire.go sends it.
type pending struct {
	ctx context.Context
	// A take's, a booking's or a cancellation's one key, limit and tokens.
	key      string // the Redis key
	limit    ratelimit.Limit
	n        int
	deadline any    // the script's deadline argument
	op       op     // a take (the zero value), a booking, a cancellation or an AllowAll
	slot     uint16 // the Cluster slot of its keys

	maxWait time.Duration // a booking's bound on its wait
	at      int64         // a cancellation's booking's instant, ns since the epoch

	// An AllowAll's takes, their Redis keys, and the rows the sender sets
	// (the caller reads them as multi.go does).
	takes []ratelimit.Take
	keys  []string
	rows  []row

	// Set by the sender, read by the caller once wake has a value.
	res   ratelimit.Result
	err   error
	delay time.Duration // a booking's, when booked
	now   int64         // the clock of the script that booked it, µs

	// Under the batcher's mu.
	queued bool
	lead   []*pending // the batch this decision's caller is to send
	wake   chan struct{}

	self [1]*pending // the batch of a decision sent alone
}

// op is what a pending decision decides.
type op uint8

const (
	take   op = iota // AllowN
	book             // ReserveN
	unbook           // CancelReservation
	all              // AllowAll
)

// batch.lua's algorithms of a booking and of a cancellation, after those
// of ratelimit.Algorithm, and the offset of an AllowAll's takes' ones.
const (
	algBook   = 4
	algUnbook = 5
	algAll    = 8 // + ratelimit.Algorithm
)

// alg is the algorithm batch.lua decides p with.
func (p *pending) alg() int {
	switch p.op {
	case book:
		return algBook
	case unbook:
		return algUnbook
	}
	return int(p.limit.Algorithm)
}

// width is the number of takes p decides, and of batch.lua's keys and rows.
func (p *pending) width() int {
	if p.op == all {
		return len(p.keys)
	}
	return 1
}

// pend returns a pending take of n tokens of key under limit, and the
// batcher that is to send it (nil: none).
func (s *Store) pend(ctx context.Context, key string, limit ratelimit.Limit, n int) (*pending, *batcher) {
	tag := slotTag(afterNamespace(key))
	p := newPending()
	p.ctx = ctx
	p.key = s.prefix + tags[limit.Algorithm] + string(tag[:]) + key
	p.limit, p.n = limit, n
	p.deadline = s.deadlineArg(ctx)
	if s.sharded {
		p.slot = clusterSlot(tag[1:9])
	}
	return p, s.batcherFor(ctx, &tag)
}

// pendings recycles decisions once their callers have their outcomes: no
// batch refers to one then (a sender is done with a decision once it has
// woken its caller).
var pendings = sync.Pool{New: func() any { return new(pending) }}

// newPending returns a pending decision with no outcome.
func newPending() *pending { return pendings.Get().(*pending) }

// free recycles p, whose wake channel is empty.
func (p *pending) free() {
	wake := p.wake
	*p = pending{wake: wake}
	pendings.Put(p)
}

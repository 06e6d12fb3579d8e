// Package inflight limits how many requests of a key run at once (exports,
// report generation, anything slow), where package ratelimit limits how
// often they come. A [Limiter] is HTTP middleware like a ratelimit.Limiter,
// and goes through the same pass: the client keys, the time budget and
// circuit breaker in front of a store that is not local, and the failure
// policy. Chain the two to limit both rate and concurrency.
//
// Its stores: store/memory's Slots counts in the process; store/redis keeps
// leases, so that the slots of an instance that crashed expire.
package inflight

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/internal/slots"
)

// Store keeps how many requests of each key run at once: the store of a
// [Limiter]. A store that reports Local() true (see ratelimit.Local) is
// called without a time budget and never renews a lease.
type Store interface {
	// Acquire takes one of limit slots of key, held for lease unless
	// renewed: Acquired is false, and nothing taken, when all are held.
	// With an error, a Slot with an ID names a slot the call may have
	// taken all the same (the store ran it, and its answer was lost): the
	// caller releases it.
	Acquire(ctx context.Context, key string, limit int, lease time.Duration) (Slot, error)
	// Renew holds slot for lease more from now. A slot whose lease had
	// expired (the store restarted without its data, or answered too late)
	// is an error that wraps [ErrSlotLost]: an answer, not a failure of
	// the store.
	Renew(ctx context.Context, key string, slot Slot, lease time.Duration) error
	// Release gives slot back; releasing a slot twice is harmless.
	Release(ctx context.Context, key string, slot Slot) error
}

// ErrSlotLost is wrapped by the error of a [Store.Renew] of a slot whose
// lease had expired: the store answered, and the slot may be another
// request's now. It does not count against the breaker, and the request
// that held the slot runs on without one (see [WithLease]).
var ErrSlotLost = slots.ErrLost

// Slot is the answer of [Store.Acquire].
type Slot struct {
	Acquired bool   // whether a slot was taken
	ID       string // names the slot to Renew and Release
	Running  int    // slots of the key held after the call, this one included
}

// Limiter limits how many requests of a key run at once, releasing a
// slot when the handler returns, or panics. Build it with [New]. It is
// safe for concurrent use by multiple goroutines.
type Limiter struct {
	limit slots.Limit
}

// New returns a limit of max requests of a key running at once on store.
// Client keys reach the store as a ratelimit.Limiter's do: addresses as
// they are, any other key as a keyed hash ([WithKeySecret]); on a store
// that is not local, a key function of your own ([WithKeyFunc]) needs
// [WithKeySecret] or [WithPlainKeys]. Each store call has a time budget
// and a breaker in front of it on a store that is not local (100 ms and
// a breaker of its own by default, as ratelimit.New gives). A nil store,
// a max outside 1 to ratelimit.MaxRate or a bad option is an error.
func New(store Store, max int, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: inflight.New: nil store", ratelimit.ErrBadConfig)
	}
	c := config{lease: defaultLease}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	l, err := slots.New(storeOf(store), max, c.lease, c.opts)
	if err != nil {
		return nil, err
	}
	return &Limiter{limit: l}, nil
}

// Handler returns next wrapped in the limit: next runs only with a slot of
// its key, given back when next returns or panics. The headers say the
// limit (X-RateLimit-Limit) and the slots left (X-RateLimit-Remaining); a
// request without a slot gets 429 with a Retry-After of about how long
// the key's requests run (a moving average, at least 1 s), or runs without
// one in dry run.
//
// The slot is asked for within the time budget, behind the breaker. A
// store that fails, does not answer in time or whose breaker is open lets
// the request run without a slot, or answers 503 with [WithFailClosed]. A
// client that went away is never served, nor a request whose own deadline
// passed before the store answered (503). A slot nobody uses is given back:
// one the store grants after the budget (by the goroutine that read the
// answer), one an Acquire that failed may have taken (a store that names
// it, such as store/redis), one granted to a request that ended.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return l.limit.Handler(next)
}

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// SlotStore keeps how many requests of each key run at once: the store of
// an [InFlight] limit. store/memory counts in the process; store/redis
// keeps leases, so that the slots of an instance that crashed expire.
type SlotStore interface {
	// Acquire takes one of limit slots of key, held for lease unless
	// renewed: Acquired is false, and nothing taken, when all are held.
	// With an error, a Slot with an ID names a slot the call may have
	// taken all the same (the store ran it, and its answer was lost): the
	// caller releases it.
	Acquire(ctx context.Context, key string, limit int, lease time.Duration) (Slot, error)
	// Renew holds slot for lease more from now.
	Renew(ctx context.Context, key string, slot Slot, lease time.Duration) error
	// Release gives slot back; releasing a slot twice is harmless.
	Release(ctx context.Context, key string, slot Slot) error
}

// Slot is the answer of [SlotStore.Acquire].
type Slot struct {
	Acquired bool   // whether a slot was taken
	ID       string // names the slot to Renew and Release
	Running  int    // slots of the key held after the call, this one included
}

// defaultLease is how long an [InFlight] slot lives unless renewed; a
// running request renews it every third of that.
const defaultLease = 10 * time.Second

// InFlight limits how many requests of a key run at once (exports, report
// generation), releasing a slot when the handler returns, or panics. Build
// it with [NewInFlight]; chain it with a [Limiter] to limit both rates and
// concurrency. It is safe for concurrent use by multiple goroutines.
//
// Its store calls go through what a Limiter's do: a time budget and a
// circuit breaker on a store that is not [Local], and the failure policy
// (fail open, or closed) when the store fails.
type InFlight struct {
	store    SlotStore
	max      int
	name     string
	keyFunc  KeyFunc
	lease    time.Duration
	space    keyspace // the hashing of client keys, as a Limiter's
	deny     http.Handler
	onError  func(*http.Request, error)
	closed   bool // fail closed on store errors
	skip     func(*http.Request) bool
	dryRun   bool
	observer Observer
	guard                 // the time budget, the breaker and the clock (guard.go)
	local    bool         // the store is Local: no lease to renew
	typical  atomic.Int64 // how long a request runs, ns: a moving average (inflight_retry.go)
	errLog   throttledLog
	dryLog   throttledLog
	log      *slog.Logger // WithLogger's; nil for slog's default
}

// inFlightOptions are the options [NewInFlight] takes.
var inFlightOptions = optionsOf(optName, optKeyFunc, optKeySecret, optPlainKeys, optDenyHandler,
	optErrorHandler, optFailClosed, optFailOpen, optLease, optObserver, optTimeout, optBreaker, optSkip, optDryRun, optLogger)

// NewInFlight returns a limit of max requests of a key running at once on
// store. It takes these options, and refuses the others with an error
// naming them:
//   - [WithName] ("inflight" by default), [WithKeyFunc] (the client
//     address by default), [WithKeySecret] and [WithPlainKeys]: client keys
//     reach the store as a Limiter's do, addresses as they are, any other
//     key as a keyed hash; on a store that is not [Local], a KeyFunc of its
//     own needs one of the two;
//   - [WithDenyHandler], [WithErrorHandler] and [WithFailClosed], as a
//     Limiter's;
//   - [WithTimeout] and [WithBreaker]: the time budget of each store call
//     and the breaker in front of the store, by default on a store that is
//     not Local 100 ms and a breaker of its own, as [New] gives;
//   - [WithLease] (10 seconds);
//   - [WithSkip]: a skipped request runs without a slot;
//   - [WithDryRun]: a request that finds every slot held runs anyway,
//     without a slot, logged as would-deny at most once a second;
//   - [WithObserver]: told of each request as a Decision whose Policy is
//     the name and whose Limit is zero (a count of running requests is no
//     rate); the breaker's changes too.
func NewInFlight(store SlotStore, max int, opts ...Option) (*InFlight, error) {
	if store == nil {
		return nil, errors.New("ratelimit: NewInFlight: nil store")
	}
	if max <= 0 || max > MaxRate {
		return nil, fmt.Errorf("ratelimit: NewInFlight: max %d must be from 1 to %d", max, MaxRate)
	}
	local := isLocal(store)
	c := config{keyFunc: KeyByIP(), lease: defaultLease}
	if !local {
		c.timeout = defaultTimeout
		c.breaker = NewBreaker(defaultBreakerFailures, defaultBreakerCoolDown)
	}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if err := c.refuse("NewInFlight", "an in-flight limit", inFlightOptions); err != nil {
		return nil, err
	}
	if c.ownKeys && !local && c.keySecret == nil && !c.plainKeys {
		return nil, fmt.Errorf("ratelimit: NewInFlight: %w", errNeedKeySecret)
	}
	f := &InFlight{store: store, max: max, name: c.name, keyFunc: c.keyFunc, lease: c.lease,
		deny: c.deny, onError: c.onError, closed: c.failClosed, skip: c.skip, dryRun: c.dryRun,
		observer: c.observer, guard: guard{breaker: c.breaker, now: time.Now, track: c.breaker != nil}, local: local, log: c.logger}
	if f.name == "" {
		f.name = "inflight"
	}
	if c.timeout > 0 {
		f.budget = newBudget(c.timeout)
	}
	secret := c.keySecret
	if secret == nil && local {
		secret = localSecret()
	}
	f.space = newKeyspace(f.name, secret, c.plainKeys)
	if f.onError == nil {
		f.onError = f.logError
	}
	if f.breaker != nil && f.observer.BreakerChange != nil {
		change, name := f.observer.BreakerChange, f.name
		f.breaker.notify(func(s BreakerState) { change(name, s) })
	}
	return f, nil
}

// WithLease sets how long an [InFlight] slot lives unless renewed
// (10 seconds by default); a running request renews it every third of that.
// [New] refuses it: a Limiter holds no slots.
func WithLease(d time.Duration) Option {
	return func(c *config) error {
		c.given.add(optLease)
		if d < 3*time.Millisecond || d > MaxPeriod {
			return fmt.Errorf("ratelimit: WithLease(%v): want 3ms to %v", d, MaxPeriod)
		}
		c.lease = d
		return nil
	}
}

// storeKey is the store's key of a client key: the name, then the client
// part as keyspace.go makes it, so that secrets never reach the store in
// plain text and every key is bounded.
func (f *InFlight) storeKey(key string) (string, error) {
	client, err := f.space.client(key)
	if err != nil {
		return "", err
	}
	return f.name + "/" + client, nil
}

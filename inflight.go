package ratelimit

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/slots"
)

// inFlight is an in-flight limit, built by package inflight (whose New
// says what it does) through slots.New: its code lives here, beside the
// pass it shares with a Limiter — the time budget and the breaker
// (guard.go), the keys (keyspace.go), the failure policy and the logs.
type inFlight struct {
	store    slots.Store
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

func init() {
	slots.New = func(store slots.Store, max int, lease time.Duration, opts any) (slots.Limit, error) {
		return newInFlight(store, max, lease, opts.([]Option)...)
	}
}

// newInFlight returns a limit of max requests of a key running at once on
// store, each slot leased for lease unless renewed: see inflight.New.
func newInFlight(store slots.Store, max int, lease time.Duration, opts ...Option) (*inFlight, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: inflight.New: nil store", ErrBadConfig)
	}
	if max <= 0 || max > MaxRate {
		return nil, fmt.Errorf("%w: inflight.New: max %d must be from 1 to %d", ErrBadConfig, max, MaxRate)
	}
	local := isLocal(store)
	c := config{keyFunc: KeyByIP()}
	if !local {
		c.timeout = defaultTimeout
		c.breaker = NewBreaker(defaultBreakerFailures, defaultBreakerCoolDown)
	}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		if err := o(&c); err != nil {
			return nil, configError("ratelimit: inflight.New: ", err, ErrBadConfig)
		}
	}
	if c.ownKeys && !local && c.keySecret == nil && !c.plainKeys {
		return nil, fmt.Errorf("ratelimit: inflight.New: %w", errNeedKeySecret)
	}
	f := &inFlight{store: store, max: max, name: c.name, keyFunc: c.keyFunc, lease: lease,
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

// storeKey is the store's key of a client key: the name, then the client
// part as keyspace.go makes it, so that secrets never reach the store in
// plain text and every key is bounded.
func (f *inFlight) storeKey(key string) (string, error) {
	client, err := f.space.client(key)
	if err != nil {
		return "", err
	}
	return f.name + "/" + client, nil
}

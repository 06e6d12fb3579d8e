package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// SlotStore keeps how many requests of each key run at once: the store of
// an [InFlight] limit. store/memory counts in the process; store/redis
// keeps leases, so that the slots of an instance that crashed expire.
type SlotStore interface {
	// Acquire takes one of limit slots of key, held for lease unless
	// renewed: Acquired is false, and nothing taken, when all are held.
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

// DefaultLease is how long an [InFlight] slot lives unless renewed; a
// running request renews it every third of that.
const DefaultLease = 10 * time.Second

// InFlight limits how many requests of a key run at once (exports, report
// generation), releasing a slot when the handler returns, or panics. Build
// it with [NewInFlight]; chain it with a [Limiter] to limit both rates and
// concurrency.
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
	observer Observer
	typical  atomic.Int64 // how long a request runs, ns: a moving average (inflight_retry.go)
}

// NewInFlight returns a limit of max requests of a key running at once on
// store. Of the options it reads [WithName], [WithKeyFunc] (the client
// address by default), [WithKeySecret] and [WithPlainKeys] (client keys
// reach the store as a Limiter's do: addresses as they are, any other key
// as a keyed hash; on a store that is not [Local], a KeyFunc of its own
// needs one of the two), [WithDenyHandler], [WithErrorHandler],
// [WithFailClosed], [WithLease] and [WithObserver] (told of each request
// as a Decision whose Policy is the name and whose Limit is zero: a count
// of running requests is no rate).
func NewInFlight(store SlotStore, max int, opts ...Option) (*InFlight, error) {
	if store == nil {
		return nil, errors.New("ratelimit: NewInFlight: nil store")
	}
	if max <= 0 || max > MaxRate {
		return nil, fmt.Errorf("ratelimit: NewInFlight: max %d must be from 1 to %d", max, MaxRate)
	}
	c := config{keyFunc: KeyByIP(), lease: DefaultLease}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	local := isLocal(store)
	if c.ownKeys && !local && c.keySecret == nil && !c.plainKeys {
		return nil, fmt.Errorf("ratelimit: NewInFlight: %w", errNeedKeySecret)
	}
	f := &InFlight{store: store, max: max, name: c.name, keyFunc: c.keyFunc, lease: c.lease,
		deny: c.deny, onError: c.onError, closed: c.failClosed, observer: c.observer}
	if f.name == "" {
		f.name = "inflight"
	}
	secret := c.keySecret
	if secret == nil && local {
		secret = localSecret()
	}
	f.space = newKeyspace(f.name, secret, c.plainKeys)
	if f.onError == nil {
		own := c.logger
		f.onError = func(r *http.Request, err error) {
			logger := own
			if logger == nil {
				logger = slog.Default()
			}
			logger.ErrorContext(r.Context(), "ratelimit: in-flight slot not decided by the store", "limiter", f.name, "err", err)
		}
	}
	return f, nil
}

// WithLease sets how long an [InFlight] slot lives unless renewed
// ([DefaultLease]); a running request renews it every third of that.
// Limiters ignore it.
func WithLease(d time.Duration) Option {
	return func(c *config) error {
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

// Handler returns next wrapped in the limit: next runs only with a slot of
// its key, given back when next returns or panics. The headers say the
// limit (X-RateLimit-Limit) and the slots left (X-RateLimit-Remaining); a
// request without a slot gets 429 with a Retry-After of about how long
// the key's requests run (a moving average, at least 1 s). A store that
// fails lets the request run, or answers 503 with [WithFailClosed].
func (f *InFlight) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := requestKey(f.keyFunc, r)
		if err != nil {
			writeKeyError(w, err)
			return
		}
		sk, err := f.storeKey(key)
		if err != nil { // ErrNoKeySecret: a key function of an adapter's, on a shared store
			f.onError(r, err)
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		start := time.Now()
		slot, err := f.store.Acquire(r.Context(), sk, f.max, f.lease)
		f.told(r, key, slot, err, time.Since(start))
		if err != nil {
			f.onError(r, err)
			if f.closed {
				http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set(headerLimit, strconv.Itoa(f.max))
		h.Set(headerRemaining, strconv.Itoa(max(0, f.max-slot.Running)))
		if !slot.Acquired {
			h.Set(headerRetryAfter, strconv.FormatInt(f.retryAfter(), 10))
			if f.deny != nil {
				f.deny.ServeHTTP(w, r)
				return
			}
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
			return
		}
		stop := f.keepAlive(r, sk, slot)
		defer func() {
			stop()
			f.store.Release(context.WithoutCancel(r.Context()), sk, slot)
			f.ran(time.Since(start))
		}()
		next.ServeHTTP(w, r)
	})
}

// keepAlive renews slot every third of the lease until stop is called; a
// renewal that fails is told to the error handler, and the request runs
// on (its slot may lapse, and another request take it).
func (f *InFlight) keepAlive(r *http.Request, sk string, slot Slot) (stop func()) {
	ctx := r.Context()
	if l, ok := f.store.(Local); ok && l.Local() {
		return func() {} // a process's own slots die with it: no lease to renew
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(f.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := f.store.Renew(context.WithoutCancel(ctx), sk, slot, f.lease); err != nil {
					f.onError(r, err)
				}
			}
		}
	}()
	return func() { close(done); <-ended }
}

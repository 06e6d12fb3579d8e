// Package slots is the seam between package inflight, whose names users
// read, and the root package, whose pass (time budget, breaker, keys,
// failure policy) an in-flight limit goes through: inflight imports the
// root, so the root cannot import inflight, and it hands its constructor
// over here instead.
package slots

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// ErrLost is inflight.ErrSlotLost: a Renew the store answered, of a slot
// whose lease had expired.
var ErrLost = errors.New("ratelimit: the in-flight slot's lease expired before its renewal")

// Slot is inflight.Slot, in a package the root can import.
type Slot struct {
	Acquired bool   // whether a slot was taken
	ID       string // names the slot to Renew and Release
	Running  int    // slots of the key held after the call, this one included
}

// Store is inflight.Store over Slot.
type Store interface {
	Acquire(ctx context.Context, key string, limit int, lease time.Duration) (Slot, error)
	Renew(ctx context.Context, key string, slot Slot, lease time.Duration) error
	Release(ctx context.Context, key string, slot Slot) error
}

// Limit is a built in-flight limit.
type Limit interface {
	Handler(next http.Handler) http.Handler
}

// New builds an in-flight limit of max on store, with leases of lease
// and opts, a []ratelimit.Option. The root package sets it when it is
// initialized, before any package that imports it, inflight among them.
var New func(store Store, max int, lease time.Duration, opts any) (Limit, error)

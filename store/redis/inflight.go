package redisstore

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
)

//go:embed inflight.lua
var inflightLua string

var inflightScript = goredis.NewScript(inflightLua)

var _ inflight.Store = (*Store)(nil)

// ErrSlotLost reports a renewal of a slot whose lease had already expired:
// the slot may be another request's now. It is [inflight.ErrSlotLost], an
// answer of the store that its breaker does not count as a failure.
var ErrSlotLost = inflight.ErrSlotLost

// Acquire implements [inflight.Store] in one script call: a sorted set
// per key of slot IDs and the ends of their leases, in Redis's clock, so
// that the slots of an instance that died expire with their leases. Every
// step is idempotent (a slot's ID is chosen here), so a resent call counts
// once. With an error, the Slot holds the ID all the same: the script may
// have run with its reply lost (a timeout), and releasing the ID frees the
// slot it may have taken.
func (s *Store) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (inflight.Slot, error) {
	if key == "" {
		return inflight.Slot{}, ratelimit.ErrEmptyKey
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	ok, n, err := s.slotCall(ctx, key, "a", id, limit, lease)
	if err != nil { // the script may have run: the ID lets the caller release its slot
		return inflight.Slot{ID: id}, err
	}
	if !ok {
		return inflight.Slot{Running: n}, nil
	}
	return inflight.Slot{Acquired: true, ID: id, Running: n}, nil
}

// Renew implements [inflight.Store]; it returns [ErrSlotLost] if the
// lease had expired.
func (s *Store) Renew(ctx context.Context, key string, slot inflight.Slot, lease time.Duration) error {
	ok, _, err := s.slotCall(ctx, key, "n", slot.ID, 0, lease)
	if err == nil && !ok {
		err = ErrSlotLost
	}
	return err
}

// releasedMemory is how long a release of a slot ID that is not held is
// remembered, so that its Acquire, if it runs after all, takes nothing:
// such an Acquire was sent before its release, and both wait in the
// server's buffers for the same stall to end.
const releasedMemory = time.Minute

// Release implements [inflight.Store]. Releasing an ID that is not
// held (an Acquire that failed may or may not have run) makes its Acquire
// take nothing if it runs later, for a minute.
func (s *Store) Release(ctx context.Context, key string, slot inflight.Slot) error {
	_, _, err := s.slotCall(ctx, key, "r", slot.ID, 0, releasedMemory)
	return err
}

// slotCall runs inflight.lua on key's sorted set.
func (s *Store) slotCall(ctx context.Context, key, op, id string, limit int, lease time.Duration) (bool, int, error) {
	if s.client == nil {
		return false, 0, ErrNilClient
	}
	tag := slotTag(afterNamespace(key))
	rk := s.prefix + "if:" + string(tag[:]) + key
	released := s.prefix + "ifr:" + string(tag[:]) + key // the same hash tag: the same Cluster slot
	v, err := inflightScript.Run(ctx, s.client, []string{rk, released}, op, id, limit, max(lease.Milliseconds(), 1)).Int64Slice()
	if err != nil {
		s.reloadRoutes(err) // cluster.go
		return false, 0, fmt.Errorf("ratelimit/redis: inflight.lua: %w", classify(err, s.addr()))
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("ratelimit/redis: inflight.lua: a reply of %d values", len(v))
	}
	return v[0] == 1, int(v[1]), nil
}

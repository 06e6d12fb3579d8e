package memory

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
)

// Slots is an in-process [inflight.Store]: how many requests of each
// key run at once in this process. Leases are not needed (the slots of a
// process die with it) and are ignored. The zero value is ready to use.
type Slots struct {
	mu   sync.Mutex
	held map[string]map[uint64]struct{} // key → the IDs of its held slots
	next uint64
}

var _ inflight.Store = (*Slots)(nil)

// NewSlots returns an empty Slots.
func NewSlots() *Slots { return &Slots{} }

// Local reports true: see [ratelimit.Local].
func (*Slots) Local() bool { return true }

// Acquire implements [inflight.Store].
func (s *Slots) Acquire(ctx context.Context, key string, limit int, _ time.Duration) (inflight.Slot, error) {
	if err := ctx.Err(); err != nil {
		return inflight.Slot{}, err
	}
	if key == "" {
		return inflight.Slot{}, ratelimit.ErrEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.held[key]
	if len(ids) >= limit {
		return inflight.Slot{Running: len(ids)}, nil
	}
	if ids == nil {
		if s.held == nil {
			s.held = make(map[string]map[uint64]struct{})
		}
		ids = make(map[uint64]struct{}, 1)
		s.held[key] = ids
	}
	s.next++
	ids[s.next] = struct{}{}
	return inflight.Slot{Acquired: true, ID: strconv.FormatUint(s.next, 10), Running: len(ids)}, nil
}

// Renew implements [inflight.Store]: a slot of the process lives
// until released.
func (*Slots) Renew(context.Context, string, inflight.Slot, time.Duration) error { return nil }

// Release implements [inflight.Store].
func (s *Slots) Release(_ context.Context, key string, slot inflight.Slot) error {
	id, err := strconv.ParseUint(slot.ID, 10, 64)
	if err != nil {
		return nil // not a slot of this store: nothing to give back
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.held[key]
	delete(ids, id)
	if len(ids) == 0 {
		delete(s.held, key)
	}
	return nil
}

// Running returns how many slots of key are held.
func (s *Slots) Running(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held[key])
}

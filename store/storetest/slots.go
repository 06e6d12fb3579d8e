package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
)

// RunSlots is the conformance suite of [inflight.Store], each case
// with a new store from newStore: the limit holds, alone and under
// concurrent callers; a release frees a slot, twice is harmless; keys are
// independent; a held slot renews; an empty key is an error.
func RunSlots(t *testing.T, newStore func(t *testing.T) inflight.Store) {
	ctx := context.Background()
	const lease = time.Minute
	acquire := func(t *testing.T, s inflight.Store, key string, limit int) inflight.Slot {
		t.Helper()
		slot, err := s.Acquire(ctx, key, limit, lease)
		if err != nil {
			t.Fatalf("Acquire(%q, %d): %v", key, limit, err)
		}
		return slot
	}
	t.Run("the limit holds and a release frees a slot", func(t *testing.T) {
		s := newStore(t)
		a, b, c := acquire(t, s, "k", 2), acquire(t, s, "k", 2), acquire(t, s, "k", 2)
		if !a.Acquired || !b.Acquired || c.Acquired || a.Running != 1 || b.Running != 2 || c.Running != 2 {
			t.Fatalf("three Acquire of 2: %+v %+v %+v; want two taken, the third refused with 2 running", a, b, c)
		}
		if a.ID == b.ID {
			t.Fatalf("two slots share the ID %q", a.ID)
		}
		if err := s.Renew(ctx, "k", a, lease); err != nil {
			t.Fatalf("Renew of a held slot: %v", err)
		}
		for range 2 {
			if err := s.Release(ctx, "k", a); err != nil {
				t.Fatalf("Release: %v", err)
			}
		}
		if d := acquire(t, s, "k", 2); !d.Acquired || d.Running != 2 {
			t.Fatalf("Acquire after a release (twice) = %+v; want taken, 2 running", d)
		}
		if e := acquire(t, s, "k", 2); e.Acquired {
			t.Fatalf("a second release freed a second slot: %+v", e)
		}
	})
	t.Run("keys are independent", func(t *testing.T) {
		s := newStore(t)
		acquire(t, s, "a", 1)
		if b := acquire(t, s, "b", 1); !b.Acquired || b.Running != 1 {
			t.Fatalf("Acquire of another key = %+v", b)
		}
	})
	t.Run("an empty key is an error", func(t *testing.T) {
		if _, err := newStore(t).Acquire(ctx, "", 1, lease); !errors.Is(err, ratelimit.ErrEmptyKey) {
			t.Fatalf("Acquire of an empty key: %v, want ErrEmptyKey", err)
		}
	})
	t.Run("concurrent callers never hold more than the limit", func(t *testing.T) {
		s := newStore(t)
		var held, most atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for range 10 {
					slot, err := s.Acquire(ctx, "c", 3, lease)
					if err != nil {
						t.Error(err)
						return
					}
					if !slot.Acquired {
						continue
					}
					n := held.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					held.Add(-1)
					if err := s.Release(ctx, "c", slot); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if m := most.Load(); m > 3 || m < 1 {
			t.Fatalf("at most %d slots held at once, want 1 to 3", m)
		}
	})
}

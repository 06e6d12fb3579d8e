package inflight

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/slots"
)

// storeOf is store as the root's in-flight code calls it: the same calls
// over the root's Slot, and the capabilities it looks for (Local,
// KeepsDeadlines) forwarded.
func storeOf(store Store) slots.Store {
	l, local := store.(interface{ Local() bool })
	k, keeps := store.(interface{ KeepsDeadlines() bool })
	return bridge{store: store, local: local && l.Local(), keeps: keeps && k.KeepsDeadlines()}
}

// bridge is a Store seen as a slots.Store.
type bridge struct {
	store        Store
	local, keeps bool
}

func (b bridge) Local() bool          { return b.local }
func (b bridge) KeepsDeadlines() bool { return b.keeps }

func (b bridge) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (slots.Slot, error) {
	s, err := b.store.Acquire(ctx, key, limit, lease)
	return slots.Slot(s), err
}

func (b bridge) Renew(ctx context.Context, key string, slot slots.Slot, lease time.Duration) error {
	return b.store.Renew(ctx, key, Slot(slot), lease)
}

func (b bridge) Release(ctx context.Context, key string, slot slots.Slot) error {
	return b.store.Release(ctx, key, Slot(slot))
}

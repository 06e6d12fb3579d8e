package ratelimit

import (
	"hash/maphash"
	"sync/atomic"
)

// keyCache remembers the store keys of recent request keys, so that a
// returning client's request does not allocate its namespaced key again:
// a direct-mapped table of immutable entries, read and replaced without
// locks. A miss costs what no cache would, plus one small entry.
type keyCache struct {
	seed  maphash.Seed
	slots [keyCacheSize]atomic.Pointer[keyEntry]
}

const keyCacheSize = 4096 // a power of two

func newKeyCache() *keyCache { return &keyCache{seed: maphash.MakeSeed()} }

type keyEntry struct {
	raw, full string
}

// storeKey returns full(raw), from the cache when raw was seen recently.
func (c *keyCache) storeKey(raw string, full func(string) string) string {
	slot := &c.slots[maphash.String(c.seed, raw)&(keyCacheSize-1)]
	if e := slot.Load(); e != nil && e.raw == raw {
		return e.full
	}
	k := full(raw)
	slot.Store(&keyEntry{raw: raw, full: k})
	return k
}

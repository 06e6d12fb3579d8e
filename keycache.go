package ratelimit

import (
	"hash/maphash"
	"sync/atomic"
)

// keyCache remembers the store keys of recent request keys, so that a
// returning client's request neither hashes nor allocates its store key
// again: a direct-mapped table of immutable entries, read and replaced
// without locks. A miss costs what no cache would, plus one small entry.
//
// An entry holds a request key's 128-bit hash (two maphash sums under
// random seeds), never the key itself, and its store key, which is at most
// about 200 bytes (a namespace and a bounded client part): the cache holds
// at most keyCacheSize of them, about 1 MB, whatever the keys' sizes.
type keyCache struct {
	seed1, seed2 maphash.Seed
	slots        [keyCacheSize]atomic.Pointer[keyEntry]
}

const keyCacheSize = 4096 // a power of two

func newKeyCache() *keyCache {
	return &keyCache{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
}

type keyEntry struct {
	h1, h2 uint64 // the request key's hash
	full   string // its store key
}

// storeKey returns full(raw), from the cache when raw was seen recently.
// An error of full is returned, and not cached.
func (c *keyCache) storeKey(raw string, full func(string) (string, error)) (string, error) {
	h1, h2 := maphash.String(c.seed1, raw), maphash.String(c.seed2, raw)
	slot := &c.slots[h1&(keyCacheSize-1)]
	if e := slot.Load(); e != nil && e.h1 == h1 && e.h2 == h2 {
		return e.full, nil
	}
	k, err := full(raw)
	if err != nil {
		return "", err
	}
	slot.Store(&keyEntry{h1: h1, h2: h2, full: k})
	return k, nil
}

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
// random seeds), never the key itself, and its client part and store key,
// at most about 130 and 200 bytes (a namespace and a bounded client part):
// the cache holds at most keyCacheSize of them, about 1.5 MB, whatever the
// keys' sizes.
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
	client string // its client part in the store (see keyspace.go)
	full   string // its store key under the limiter's own policy
}

// storeKey returns the client part and the store key that parts(raw)
// gives, from the cache when raw was seen recently. An error of parts is
// returned, and not cached.
func (c *keyCache) storeKey(raw string, parts func(string) (client, full string, err error)) (client, full string, err error) {
	h1, h2 := maphash.String(c.seed1, raw), maphash.String(c.seed2, raw)
	slot := &c.slots[h1&(keyCacheSize-1)]
	if e := slot.Load(); e != nil && e.h1 == h1 && e.h2 == h2 {
		return e.client, e.full, nil
	}
	client, full, err = parts(raw)
	if err != nil {
		return "", "", err
	}
	slot.Store(&keyEntry{h1: h1, h2: h2, client: client, full: full})
	return client, full, nil
}

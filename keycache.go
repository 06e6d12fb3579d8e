package ratelimit

import (
	"hash/maphash"
	"sync/atomic"
)

// keyCache remembers the store keys of recent request keys, so that a
// returning client's request neither hashes nor allocates its store key
// again: a direct-mapped table of immutable entries, read and replaced
// without locks. A key is cached when it comes back to its slot before
// another key missed there: a key seen once, as most are in a flood of
// new keys, costs what no cache would and evicts nothing, and a returning
// one costs one small entry, once.
//
// An entry holds a request key's 128-bit hash (two maphash sums under
// random seeds), never the key itself, and its store key, at most about
// 200 bytes (a namespace and a bounded client part). The slots are the
// process's, shared by every cache (every policy of every limiter: a rules
// file of thousands of rules costs no table each): each cache hashes under
// seeds of its own, so that one's entries never answer another's keys
// (128 bits would have to match). The process holds at most keyCacheSize
// entries, about 2 MB, whatever the keys' sizes and the limiters' number.
type keyCache struct {
	seed1, seed2 maphash.Seed
}

// keySlots are the slots of every keyCache in the process.
var keySlots [keyCacheSize]keySlot

// keySlot is a slot of the cache: its entry, that entry's h1 (read before
// the entry itself, which is seldom in the CPU's cache), and the h1 of the
// last key that missed there.
type keySlot struct {
	entry atomic.Pointer[keyEntry]
	h1    atomic.Uint64
	seen  atomic.Uint64
}

const keyCacheSize = 8192 // a power of two

func newKeyCache() *keyCache {
	return &keyCache{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
}

type keyEntry struct {
	h1, h2 uint64    // the request key's hash
	full   string    // its store key (see keyspace.go)
	owner  *keyCache // the cache that made it
}

// storeKey returns the store key that parts(raw) gives, from the cache
// when raw was seen recently. An error of parts is returned, and not
// cached. parts must return a string of its own, never a piece of raw,
// which the cache would keep alive.
func (c *keyCache) storeKey(raw string, parts func(string) (full string, err error)) (full string, err error) {
	h1, h2 := maphash.String(c.seed1, raw), maphash.String(c.seed2, raw)
	slot := &keySlots[h1&(keyCacheSize-1)]
	if slot.h1.Load() == h1 {
		// The entry is checked whole: it may have been replaced since.
		if e := slot.entry.Load(); e != nil && e.h1 == h1 && e.h2 == h2 {
			return e.full, nil
		}
	}
	if full, err = parts(raw); err != nil {
		return "", err
	}
	if slot.seen.Swap(h1) == h1 { // back before another key missed here
		slot.entry.Store(&keyEntry{h1: h1, h2: h2, full: full, owner: c})
		slot.h1.Store(h1)
	}
	return full, nil
}

// len returns how many entries c has in the slots.
func (c *keyCache) len() int {
	n := 0
	for i := range keySlots {
		if e := keySlots[i].entry.Load(); e != nil && e.owner == c {
			n++
		}
	}
	return n
}

// Package shardmap is a map from string keys split in shards, each behind
// a lock of its own and holding at most a bound of keys, so that requests
// of different keys rarely wait on one another and a flood of new keys
// cannot grow it without end. What to do when a shard is full is the
// caller's: it holds the shard's lock while it reads and writes Shard.M.
package shardmap

import (
	"hash/maphash"
	"sync"
)

// Shards is the number of shards of a Map.
const Shards = 16

// Map is a bounded map from string keys to V, in Shards shards.
type Map[V any] struct {
	seed   maphash.Seed
	shards [Shards]Shard[V]
}

// Shard is one shard of a Map: lock it to read or write M.
type Shard[V any] struct {
	sync.Mutex
	M   map[string]V // nil until the first Put
	Max int          // the most keys M may hold
	_   [40]byte     // keep the locks on separate cache lines
}

// New returns a Map of at most about maxKeys keys (at least one a shard).
func New[V any](maxKeys int) *Map[V] {
	m := &Map[V]{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].Max = max(1, maxKeys/Shards)
	}
	return m
}

// Shard returns the shard of key, not locked.
func (m *Map[V]) Shard(key string) *Shard[V] {
	return &m.shards[maphash.String(m.seed, key)%Shards]
}

// Get returns key's value, under the shard's lock.
func (m *Map[V]) Get(key string) (V, bool) {
	sh := m.Shard(key)
	sh.Lock()
	v, ok := sh.M[key]
	sh.Unlock()
	return v, ok
}

// Delete drops key, under the shard's lock.
func (m *Map[V]) Delete(key string) {
	sh := m.Shard(key)
	sh.Lock()
	if len(sh.M) > 0 {
		delete(sh.M, key)
	}
	sh.Unlock()
}

// Put sets key's value; the shard must be locked. Check Full first: Put
// itself does not keep the bound.
func (s *Shard[V]) Put(key string, v V) {
	if s.M == nil {
		s.M = make(map[string]V)
	}
	s.M[key] = v
}

// Full reports whether the locked shard holds Max keys and key is not one
// of them: a Put of key would pass the bound.
func (s *Shard[V]) Full(key string) bool {
	if len(s.M) < s.Max {
		return false
	}
	_, ok := s.M[key]
	return !ok
}

// Len returns how many keys the map holds, locking each shard in turn.
func (m *Map[V]) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.Lock()
		n += len(sh.M)
		sh.Unlock()
	}
	return n
}

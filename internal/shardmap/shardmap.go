// Package shardmap is a map from string keys split in shards, each behind
// a lock of its own and holding at most a bound of keys, so that requests
// of different keys rarely wait on one another and a flood of new keys
// cannot grow it without end. What to do when a shard is full is the
// caller's: it holds the shard's lock while it reads and writes Shard.M.
package shardmap

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// Shards is the number of shards of a Map.
const Shards = 16

// Map is a bounded map from string keys to V, in Shards shards.
type Map[V any] struct {
	seed   maphash.Seed
	held   atomic.Int32 // the shards that hold keys: 0 spares a lookup its hash
	shards [Shards]Shard[V]
}

// Shard is one shard of a Map: lock it to read or write M.
type Shard[V any] struct {
	mu   sync.Mutex
	some atomic.Bool   // M held keys when the lock was last released
	held *atomic.Int32 // the Map's count of shards that hold keys
	M    map[string]V  // nil until the first Put
	Max  int           // the most keys M may hold
	_    [24]byte      // keep the locks on separate cache lines (64 bytes a shard)
}

// Lock locks the shard.
func (s *Shard[V]) Lock() { s.mu.Lock() }

// Unlock unlocks the shard, noting whether it holds keys: Get and Delete
// of a shard that holds none take no lock, and of a map that holds none
// not even a hash, so that an empty map (a deny cache while every request
// passes) costs its readers an atomic load.
func (s *Shard[V]) Unlock() {
	if some := len(s.M) > 0; some != s.some.Load() {
		s.some.Store(some)
		if some {
			s.held.Add(1)
		} else {
			s.held.Add(-1)
		}
	}
	s.mu.Unlock()
}

// New returns a Map of at most about maxKeys keys (at least one a shard).
func New[V any](maxKeys int) *Map[V] {
	m := &Map[V]{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].Max = max(1, maxKeys/Shards)
		m.shards[i].held = &m.held
	}
	return m
}

// Shard returns the shard of key, not locked.
func (m *Map[V]) Shard(key string) *Shard[V] {
	return &m.shards[maphash.String(m.seed, key)%Shards]
}

// Get returns key's value, under the shard's lock if it holds any keys.
func (m *Map[V]) Get(key string) (V, bool) {
	var zero V
	if m.held.Load() == 0 {
		return zero, false
	}
	sh := m.Shard(key)
	if !sh.some.Load() {
		return zero, false
	}
	sh.Lock()
	v, ok := sh.M[key]
	sh.Unlock()
	return v, ok
}

// Delete drops key, under the shard's lock if it holds any keys.
func (m *Map[V]) Delete(key string) {
	if m.held.Load() == 0 {
		return
	}
	sh := m.Shard(key)
	if !sh.some.Load() {
		return
	}
	sh.Lock()
	delete(sh.M, key)
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

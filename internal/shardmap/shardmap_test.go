package shardmap

import (
	"strconv"
	"testing"
)

// TestBound: Full tells a shard at its bound from one with room, and a key
// the shard holds can always be written again.
func TestBound(t *testing.T) {
	m := New[int](Shards * 2) // two keys a shard
	put := func(key string) bool {
		sh := m.Shard(key)
		sh.Lock()
		defer sh.Unlock()
		if sh.Full(key) {
			return false
		}
		sh.Put(key, 1)
		return true
	}
	stored := 0
	for i := range 1000 {
		if put(strconv.Itoa(i)) {
			stored++
		}
	}
	if stored != Shards*2 || m.Len() != Shards*2 {
		t.Fatalf("stored %d, Len %d; want %d (two a shard)", stored, m.Len(), Shards*2)
	}
	for i := range 1000 { // the keys held are still writable
		if _, ok := m.Get(strconv.Itoa(i)); ok && !put(strconv.Itoa(i)) {
			t.Fatalf("key %d is held but Full refuses it", i)
		}
	}
	m.Delete("0")
	m.Delete("1")
	if m.Len() > Shards*2 {
		t.Fatalf("Len %d after deletes", m.Len())
	}
}

package shardmap

import (
	"strconv"
	"testing"
	"unsafe"
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

// TestEmptyShards: Get and Delete skip the lock of a shard that holds no
// keys, and see every key Put under the lock, including after the caller
// emptied the shard by hand and filled it again.
func TestEmptyShards(t *testing.T) {
	m := New[int](64)
	if _, ok := m.Get("a"); ok {
		t.Fatal("a new map holds a")
	}
	m.Delete("a") // nothing to drop, no lock
	sh := m.Shard("a")
	for round := range 3 {
		sh.Lock()
		sh.Put("a", round)
		sh.Unlock()
		if v, ok := m.Get("a"); !ok || v != round {
			t.Fatalf("round %d: Get = %d, %v after a Put", round, v, ok)
		}
		sh.Lock()
		delete(sh.M, "a") // as a caller making room does
		sh.Unlock()
		if _, ok := m.Get("a"); ok {
			t.Fatalf("round %d: Get found a key deleted by hand", round)
		}
	}
	sh.Lock()
	sh.Put("a", 1)
	sh.Unlock()
	m.Delete("a")
	if _, ok := m.Get("a"); ok || m.Len() != 0 {
		t.Fatalf("a survives Delete (Len %d)", m.Len())
	}
	if n := m.held.Load(); n != 0 {
		t.Fatalf("%d shards counted as holding keys in an empty map", n)
	}
	for i := range 100 { // keys in many shards, then none
		key := strconv.Itoa(i)
		sh := m.Shard(key)
		sh.Lock()
		sh.Put(key, i)
		sh.Unlock()
	}
	if n := m.held.Load(); n != Shards {
		t.Fatalf("held = %d with keys in every shard, want %d", n, Shards)
	}
	for i := range 100 {
		if v, ok := m.Get(strconv.Itoa(i)); !ok || v != i {
			t.Fatalf("Get(%d) = %d, %v", i, v, ok)
		}
		m.Delete(strconv.Itoa(i))
	}
	if n := m.held.Load(); n != 0 || m.Len() != 0 {
		t.Fatalf("held = %d, Len %d once every key is deleted", n, m.Len())
	}
}

// TestEmptyShardsConcurrently: a writer and lock-free readers of one
// shard together race on nothing (-race, as ./test.sh runs it), and the
// last Delete leaves nothing behind.
func TestEmptyShardsConcurrently(t *testing.T) {
	m := New[int](64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			sh := m.Shard("k")
			sh.Lock()
			sh.Put("k", i)
			sh.Unlock()
			m.Delete("k")
		}
	}()
	for {
		select {
		case <-done:
			if _, ok := m.Get("k"); ok {
				t.Fatal("k is held after its last Delete")
			}
			return
		default:
			m.Get("k")
		}
	}
}

// TestShardSize: a shard fills a 64-byte cache line, so that two shards'
// locks never share one.
func TestShardSize(t *testing.T) {
	if n := unsafe.Sizeof(Shard[int]{}); n != 64 {
		t.Fatalf("a shard is %d bytes, want 64", n)
	}
}

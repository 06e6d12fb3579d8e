package ratelimit

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// debtLedger remembers, per key, the tokens the fallback store admitted
// while the main store failed, so that the main store is charged for them
// once it answers again: a key whose store flaps does not get the main
// store's budget and the fallback's in turn, each refilling on its own
// clock. A key owes at most its fallback share's capacity, so that the
// fleet owes at most one capacity in all. It is bounded: when maxKeys owe,
// new debts are forgiven, which costs at most a share each.
type debtLedger struct {
	seed   maphash.Seed
	owing  atomic.Int64 // keys that owe: 0 spares every lookup
	shards [debtShards]debtShard
}

const debtShards = 16

type debtShard struct {
	mu  sync.Mutex
	m   map[string]int
	max int
	_   [40]byte // keep the locks on separate cache lines
}

func newDebtLedger(maxKeys int) *debtLedger {
	d := &debtLedger{seed: maphash.MakeSeed()}
	for i := range d.shards {
		d.shards[i].max = max(1, maxKeys/debtShards)
	}
	return d
}

func (d *debtLedger) shard(key string) *debtShard {
	return &d.shards[maphash.String(d.seed, key)%debtShards]
}

// add records n more tokens owed by key, at most limit tokens in all.
func (d *debtLedger) add(key string, n, limit int) {
	if n <= 0 {
		return
	}
	sh := d.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	owed, ok := sh.m[key]
	if !ok {
		if len(sh.m) >= sh.max {
			return // forgiven: at most one share over the limit
		}
		if sh.m == nil {
			sh.m = make(map[string]int)
		}
		d.owing.Add(1)
	}
	sh.m[key] = min(owed+n, limit)
}

// owed returns the tokens key owes.
func (d *debtLedger) owed(key string) int {
	if d.owing.Load() == 0 {
		return 0
	}
	sh := d.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[key]
}

// paid records that key paid n of its tokens to the main store.
func (d *debtLedger) paid(key string, n int) {
	if n <= 0 {
		return
	}
	sh := d.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	owed, ok := sh.m[key]
	if !ok {
		return
	}
	if owed <= n {
		delete(sh.m, key)
		d.owing.Add(-1)
		return
	}
	sh.m[key] = owed - n
}

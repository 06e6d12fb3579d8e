package ratelimit

import "github.com/ratelimit-go/ratelimit/internal/shardmap"

// debtLedger remembers, per key, the tokens the fallback store admitted
// while the main store failed, so that the main store is charged for them
// once it answers again: a key whose store flaps does not get the main
// store's budget and the fallback's in turn, each refilling on its own
// clock. A key owes at most its fallback share's capacity, so that the
// fleet owes at most one capacity in all. It is bounded: when maxKeys owe,
// new debts are forgiven, which costs at most a share each.
type debtLedger struct {
	debts *shardmap.Map[int] // a lookup in it while no key owes takes no hash and no lock
}

func newDebtLedger(maxKeys int) *debtLedger {
	return &debtLedger{debts: shardmap.New[int](maxKeys)}
}

// add records n more tokens owed by key, at most limit tokens in all.
func (d *debtLedger) add(key string, n, limit int) {
	if n <= 0 {
		return
	}
	sh := d.debts.Shard(key)
	sh.Lock()
	defer sh.Unlock()
	if sh.Full(key) {
		return // forgiven: at most one share over the limit
	}
	owed := sh.M[key]
	sh.Put(key, min(owed+n, limit))
}

// owed returns the tokens key owes.
func (d *debtLedger) owed(key string) int {
	owed, _ := d.debts.Get(key)
	return owed
}

// paid records that key paid n of its tokens to the main store.
func (d *debtLedger) paid(key string, n int) {
	if n <= 0 {
		return
	}
	sh := d.debts.Shard(key)
	sh.Lock()
	defer sh.Unlock()
	owed, ok := sh.M[key]
	if !ok {
		return
	}
	if owed <= n {
		delete(sh.M, key)
		return
	}
	sh.M[key] = owed - n
}

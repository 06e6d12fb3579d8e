package ratelimit

import (
	"net/http"
	"time"
)

// DenyCacheLen returns how many denials l's deny cache holds.
func DenyCacheLen(l *Limiter) int {
	if l.denies == nil {
		return 0
	}
	return l.denies.denials.Len()
}

// Check decides on r as Admit does and writes nothing: the result the
// headers would describe, and the error of the KeyFunc, the cost or the
// store (also when the fallback decided). For tests of keys.
func (l *Limiter) Check(r *http.Request) (Result, error) {
	p := l.getPass()
	defer passes.Put(p)
	if err := l.keyRequest(r, l.keyFunc, p); err != nil {
		return Result{}, err
	}
	n := 1
	if l.cost != nil {
		n = l.cost(r)
	}
	o := l.run(r.Context(), n, p)
	return o.res, o.err
}

// SetClock makes l read its clock (deny cache, breaker, blocks) from now.
func SetClock(l *Limiter, now func() time.Time) { l.now = now }

// NewLocalStore returns the local store a limiter on a store that is not
// Local falls back to by default, reading its clock from now.
func NewLocalStore(maxKeys int, now func() time.Time) Store { return newLocalStore(maxKeys, now) }

// LocalStoreLen returns how many keys s, a NewLocalStore, holds.
func LocalStoreLen(s Store) int {
	n := 0
	for i := range s.(*localStore).shards {
		sh := &s.(*localStore).shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// FuncValuesLen returns how many limits' header values policy i of l keeps.
func FuncValuesLen(l *Limiter, i int) int {
	c := l.policies[i].funcValues
	n := 0
	for j := range c.shards {
		sh := &c.shards[j]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// KeyCacheLen returns how many store keys policy i of l has cached.
func KeyCacheLen(l *Limiter, i int) int { return l.policies[i].keys.len() }

package memory

import (
	"slices"
	"time"
)

// sweepLoop visits one shard per tick, so that every key is looked at once
// per interval and no request waits behind more than one shard's sweep.
func (s *Store) sweepLoop(interval time.Duration) {
	defer s.swept.Done()
	tick := time.NewTicker(max(interval/time.Duration(len(s.shards)), time.Millisecond))
	defer tick.Stop()
	for i := 0; ; i = (i + 1) % len(s.shards) {
		select {
		case <-s.done:
			return
		case <-tick.C:
			s.shards[i].sweep(s.now())
		}
	}
}

// sweep drops the shard's idle keys and gives back the memory of a table
// that has emptied.
func (sh *shard) sweep(now int64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.dropIdle(now)
	sh.cells.shrink()
	if sh.cells.used == 0 {
		sh.exps = nil
	}
}

// dropIdle deletes the keys whose state equals a new key's: nothing is lost.
func (sh *shard) dropIdle(now int64) {
	sh.deleteIf(func(c cell) bool { return c.exp <= now })
}

// deleteIf deletes the keys whose cell satisfies drop, with their logs.
func (sh *shard) deleteIf(drop func(cell) bool) {
	sh.cells.deleteIf(func(h uint64, c cell) bool {
		if !drop(c) {
			return false
		}
		if len(sh.logs) > 0 {
			delete(sh.logs, h)
		}
		return true
	})
}

// makeRoom makes room for one new key in a full shard, under its lock, and
// reports whether it deleted any key. It drops the idle keys first; if none
// were idle it evicts the keys closest to full (the smallest expiry), a
// small batch at a time so that the cost of the scan is shared by many new
// keys. A client that is being limited is far from full, so it is
// forgotten last.
func (sh *shard) makeRoom(now int64) bool {
	if sh.max == 0 || sh.cells.used < sh.max {
		return false
	}
	sh.dropIdle(now)
	if sh.cells.used < sh.max {
		return true
	}
	batch := max(1, sh.max/64)
	sh.exps = sh.exps[:0]
	for _, s := range sh.cells.slots {
		if s.h != 0 {
			sh.exps = append(sh.exps, s.c.exp)
		}
	}
	slices.Sort(sh.exps)
	threshold := sh.exps[batch-1]
	sh.deleteIf(func(c cell) bool {
		if batch == 0 || c.exp > threshold {
			return false
		}
		batch--
		return true
	})
	return true
}

package memory

import "time"

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
		sh.scratch = nil
	}
}

// dropIdle deletes the keys whose state equals a new key's: nothing is lost.
func (sh *shard) dropIdle(now int64) {
	sh.deleteIf(func(s *slot) bool { return s.c.exp <= now })
}

// deleteIf deletes the keys whose slot satisfies drop, with their logs.
func (sh *shard) deleteIf(drop func(*slot) bool) {
	sh.cells.deleteIf(func(s *slot) bool {
		if !drop(s) {
			return false
		}
		if len(sh.logs) > 0 {
			delete(sh.logs, s.h)
		}
		if len(sh.events) > 0 {
			delete(sh.events, s.h)
		}
		return true
	})
}

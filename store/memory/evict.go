package memory

import (
	"math"
	"slices"

	"github.com/ratelimit-go/ratelimit"
)

// keep is what a key's slot keeps of its limit, so that eviction can tell
// how much of its budget the key has used at any instant, whatever its
// algorithm. 8 bytes, no pointers.
type keep struct {
	capAlg uint32  // Capacity()−1 in the low 30 bits, the Algorithm in the top 2
	span   float32 // ns: a token bucket's time to fill from empty; a window's period
}

// keepOf returns what a slot keeps of l.
func keepOf(l ratelimit.Limit) keep {
	capacity := l.Capacity()
	k := keep{capAlg: uint32(capacity-1) | uint32(l.Algorithm)<<30, span: float32(l.Period)}
	if l.Algorithm == ratelimit.TokenBucket {
		k.span = float32(float64(capacity) / float64(l.Rate) * float64(l.Period))
	}
	return k
}

func (k keep) capacity() float64              { return float64(k.capAlg&(1<<30-1)) + 1 }
func (k keep) algorithm() ratelimit.Algorithm { return ratelimit.Algorithm(k.capAlg >> 30) }

// used is how much of its budget the key in s has used at now: 0 when its
// state equals a new key's, 1 when it has nothing left (a token bucket
// that is exactly empty, a window at its Rate, a full log). The fraction
// means the same for every algorithm and limit, so that keys of different
// limiters sharing a store are ranked on one scale.
func (sh *shard) used(s *slot, now int64) float64 {
	c := &s.c
	if c.exp <= now {
		return 0
	}
	switch s.k.algorithm() {
	case ratelimit.FixedWindow:
		return float64(c.at) / s.k.capacity()
	case ratelimit.SlidingWindow:
		curr, prev := unpackCounts(c.at)
		period := float64(s.k.span)
		elapsed := float64(now) - float64(c.exp) + 2*period // since the cell's window started
		if elapsed >= period {                              // a window later: curr has become prev
			curr, prev, elapsed = 0, curr, elapsed-period
		}
		weight := min(max(1-elapsed/period, 0), 1)
		return (prev*weight + curr) / s.k.capacity()
	case ratelimit.SlidingLog:
		g := sh.logs[s.h]
		if g == nil { // a log in its cell: one token until c.exp (inCell)
			if c.exp > now {
				return 1 / s.k.capacity()
			}
			return 0
		}
		g.trim(now - c.at) // what the next request would drop anyway
		return float64(g.sum) / s.k.capacity()
	default:
		// The bucket is full at exp − expiryMargin, and refills linearly:
		// the time it still needs, over the time it takes from empty.
		return float64(c.exp-int64(expiryMargin)-now) / float64(s.k.span)
	}
}

// makeRoom makes room for one new key in a full shard, under its lock, and
// reports whether it deleted any key. It drops the idle keys first (that
// loses nothing); if none were idle it evicts the keys that have used the
// least of their budget, a small batch at a time so that the cost of the
// scan is shared by many new keys. A client that is being limited has used
// all of its budget, so it is forgotten only once every key that has used
// less is gone: a flood of new keys never gives it its budget back.
func (sh *shard) makeRoom(now int64) bool {
	if sh.max == 0 || sh.cells.used < sh.max {
		return false
	}
	sh.dropIdle(now)
	if sh.cells.used < sh.max {
		return true
	}
	batch := max(1, sh.max/64)
	sh.scratch = sh.scratch[:0]
	for i := range sh.cells.slots {
		if s := &sh.cells.slots[i]; s.h != 0 {
			sh.scratch = append(sh.scratch, sh.used(s, now))
		}
	}
	var threshold float64
	if batch == 1 { // a small shard: its least used key, without a sort
		threshold = slices.Min(sh.scratch)
	} else {
		slices.Sort(sh.scratch)
		threshold = sh.scratch[batch-1]
	}
	sh.deleteIf(func(s *slot) bool {
		if batch == 0 || sh.used(s, now) > threshold {
			return false
		}
		batch--
		return true
	})
	return true
}

// addSat returns a+b for b >= 0, or math.MaxInt64 where that overflows:
// an expiry beyond the int64 range is a key kept for good, never one
// dropped at once.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

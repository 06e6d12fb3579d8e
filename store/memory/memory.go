// Package memory is an in-process [ratelimit.Store]: the embedded default,
// for a server that runs as one process.
//
// The store is sharded by key hash, each shard with its own lock, and keeps
// one small pointer-free value per key in an open-addressing table, so the
// garbage collector has nothing to scan however many keys there are: 40
// bytes a slot. A [ratelimit.SlidingLog] key of a rate above 1 also keeps
// its log of requests beside the table, in a map the collector scans (see
// [DefaultMaxKeys]). Keys are identified by a 64-bit keyed hash with a random
// seed per store (63 bits used; two of a million keys share a budget with a
// probability below 1 in 10 million). Keys whose
// budget is full again are dropped by a background sweeper (dropping them
// loses nothing), and [WithMaxKeys] bounds the number of keys.
//
// The store reads the wall clock once, in [New], and from then on only the
// monotonic clock, which is cheaper and never jumps: its time is the wall
// time at New plus the time elapsed since.
package memory

import (
	"context"
	"hash/maphash"
	"math/bits"
	"sync"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// Store is an in-memory [ratelimit.Store]. It is safe for concurrent use by
// multiple goroutines. Call [Store.Close] to stop its sweeper.
type Store struct {
	seed   maphash.Seed
	clock  func() time.Time // nil: base plus the monotonic time since
	base   time.Time        // New's instant, with its monotonic reading
	baseNs int64            // base in Unix ns
	shards []shard
	shift  uint // a hash's shard is hash >> shift

	done      chan struct{}
	closeOnce sync.Once
	swept     sync.WaitGroup
}

var _ ratelimit.Store = (*Store)(nil)

// cell is one key's state, 24 bytes without pointers; what its fields mean
// depends on the algorithm.
type cell struct {
	exp int64 // Unix ns from which the state equals a new key's: drop it
	// token bucket: last update (Unix ns); fixed window: the count;
	// sliding window: both counts (packCounts); sliding log: the period (ns)
	at int64
	x  float64 // token bucket: tokens; sliding window: the window's number
}

type shard struct {
	mu      sync.Mutex
	cells   table
	logs    map[uint64]*slidingLog // the logs of SlidingLog keys, beside their cells
	events  map[uint64]int64       // token buckets' bookings ahead (reserve.go)
	max     int                    // most keys this shard may hold; 0 means no bound
	scratch []float64              // eviction's space to rank the keys in
	last    lastLimit              // the limit of the shard's last valid call
	_       [64]byte               // keep hot locks on separate cache lines
}

// checked reports whether a call of n tokens of key under limit needs no
// validation: limit is the shard's last, which passed it, key is not
// empty and n fits the limit.
func (sh *shard) checked(key string, limit ratelimit.Limit, n int) bool {
	return limit == sh.last.limit && key != "" && n >= 0 && n <= sh.last.capacity
}

// lastLimit is a limit that passed ratelimit.ValidateCall, with what the
// shard derives from it, so that the next call under the same limit (the
// usual case) neither validates it again nor derives it again.
type lastLimit struct {
	limit    ratelimit.Limit // the zero Limit, invalid, until the first call
	capacity int
	rate     float64 // limit.PerSecondRate()
	keep     keep
}

// defaultShards is the number of shards of a store that may hold
// defaultShards·minShardKeys keys or more.
//
// minShardKeys is the fewest keys a shard of a bounded store holds (but
// in a store bounded below it): eviction compares the keys of one shard,
// and in a shard of one or two it would push out a limited client's key
// for any new one.
const (
	defaultShards = 256
	minShardKeys  = 64
)

// New returns an empty Store configured by opts.
func New(opts ...Option) *Store {
	cfg := config{sweep: time.Minute, maxKeys: DefaultMaxKeys}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(&cfg)
	}
	n := defaultShards
	for n > 1 && cfg.maxKeys > 0 && cfg.maxKeys/n < minShardKeys {
		n /= 2 // a shard of a few keys would evict a limited key for any newcomer
	}
	base := time.Now()
	s := &Store{
		seed:   maphash.MakeSeed(),
		clock:  cfg.now,
		base:   base,
		baseNs: base.UnixNano(),
		shards: make([]shard, n),
		shift:  uint(64 - bits.TrailingZeros(uint(n))),
		done:   make(chan struct{}),
	}
	for i := range s.shards {
		sh := &s.shards[i]
		if cfg.maxKeys > 0 {
			// Share the bound out exactly: the shards' bounds add up to maxKeys.
			sh.max = cfg.maxKeys / n
			if i < cfg.maxKeys%n {
				sh.max++
			}
		}
	}
	if cfg.sweep > 0 {
		s.swept.Add(1)
		go s.sweepLoop(cfg.sweep)
	}
	return s
}

// AllowN implements [ratelimit.Store]. It does not allocate for a key it
// already holds.
func (s *Store) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (res ratelimit.Result, err error) {
	h := s.hash(key, limit.Algorithm)
	sh := &s.shards[h>>s.shift]

	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.checked(key, limit, n) {
		if err := ratelimit.ValidateCall(key, limit, n); err != nil {
			return ratelimit.Result{}, err
		}
		sh.last = lastLimit{limit: limit, capacity: limit.Capacity(), rate: limit.PerSecondRate(), keep: keepOf(limit)}
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, err
	}
	now := s.now()
	i, found := sh.cells.find(h)
	if found && limit.Algorithm == ratelimit.TokenBucket {
		sh.takeHeld(i, now, limit, n, &res) // the hot path
		return res, nil
	}
	var c cell
	if found {
		c = sh.cells.slots[i].c
	}
	switch limit.Algorithm {
	case ratelimit.FixedWindow:
		c, res = fixedWindow(c, !found, now, limit, n)
	case ratelimit.SlidingWindow:
		c, res = slidingWindow(c, !found, now, limit, n)
	case ratelimit.SlidingLog:
		c, res = sh.takeLog(h, found, c, now, limit, n)
	default:
		takeTokensAt(&c, true, now, limit, sh.last.rate, float64(sh.last.capacity), n, &res)
	}
	if res.Allowed && n > 0 {
		sh.put(i, found, h, c, sh.last.keep, now)
	}
	return res, nil
}

// AllowJoined is AllowN(ctx, prefix+key, limit, n) without the join: the
// same key and budget. A [ratelimit.Limiter] on the store calls it (as
// AllowJoinedTo) with its namespace as prefix, for a key it keeps as it
// is, so that a decision of a token bucket the store holds makes no key;
// anything else (a new key, another algorithm, a limit or cost the shard
// has not checked) joins the key and is AllowN's. Like AllowN, it bounds
// no key: the store keeps a key's 64-bit keyed hash, never the key, and
// the limiter bounds what a request chooses (ratelimit.MaxKeyLen).
func (s *Store) AllowJoined(ctx context.Context, prefix, key string, limit ratelimit.Limit, n int) (res ratelimit.Result, err error) {
	err = s.AllowJoinedTo(ctx, prefix, key, &limit, n, &res)
	return res, err
}

// AllowJoinedTo is AllowJoined with the limit read through a pointer and
// the Result written to res (all of it, on every path: the zero Result
// with an error). It is what a [ratelimit.Limiter] on the store calls:
// passing the 48-byte Limit and the 80-byte Result by value across the
// call cost a decision about 14 ns, a fifth of what a Limiter adds to
// the store's own. Neither pointer may be nil; the store keeps neither.
func (s *Store) AllowJoinedTo(ctx context.Context, prefix, key string, limit *ratelimit.Limit, n int, res *ratelimit.Result) (err error) {
	h := s.hashJoined(prefix, key, limit.Algorithm)
	sh := &s.shards[h>>s.shift]
	sh.mu.Lock()
	if sh.checked(key, *limit, n) && limit.Algorithm == ratelimit.TokenBucket && ctx.Err() == nil {
		// The clock before the table: AllowN's order. Read after find, it
		// waited for find's cache miss (+20 ns a decision at 100,000 keys).
		now := s.now()
		if i, found := sh.cells.find(h); found {
			sh.takeHeld(i, now, *limit, n, res)
			sh.mu.Unlock()
			return nil
		}
	}
	sh.mu.Unlock()
	*res, err = s.AllowN(ctx, prefix+key, *limit, n)
	return err
}

// takeHeld takes n tokens of the token bucket in slot i under limit, the
// shard's last, at now, in place: a decision's hot path.
func (sh *shard) takeHeld(i int, now int64, limit ratelimit.Limit, n int, res *ratelimit.Result) {
	sl := &sh.cells.slots[i]
	takeTokensAt(&sl.c, false, now, limit, sh.last.rate, float64(sh.last.capacity), n, res)
	if res.Allowed && n > 0 {
		sl.k = sh.last.keep
	}
}

// put writes c, the state of key h after an allowed take, and k, what its
// slot keeps of its limit: into its slot i if found (i and found as
// table.find returned them), else into a new slot, making room first.
func (sh *shard) put(i int, found bool, h uint64, c cell, k keep, now int64) {
	if found {
		sl := &sh.cells.slots[i]
		sl.c, sl.k = c, k
		return
	}
	if sh.makeRoom(now) {
		i, _ = sh.cells.find(h)
	}
	sh.cells.insert(i, h, c, k)
}

// takeLog runs the sliding log of key h, whose cell c was found or not,
// keeping the log only when a request is admitted into it: in its cell
// alone while it holds at most one request of one token under a rate of
// one (a block's log: see inCell), else in sh.logs.
func (sh *shard) takeLog(h uint64, found bool, c cell, now int64, l ratelimit.Limit, n int) (cell, ratelimit.Result) {
	var one [1]logEntry
	kept, in := sh.kept(h, found), inCell(found, c, &one)
	g := kept
	if g == nil {
		g = &in
	}
	exp, res := takeLog(g, now, l, n)
	if res.Allowed && n > 0 && (kept != nil || l.Rate > 1 || g.count > 1) {
		if kept == nil {
			kept = g.clone()
		}
		if sh.logs == nil {
			sh.logs = make(map[uint64]*slidingLog)
		}
		sh.logs[h] = kept
	}
	return cell{exp: exp, at: int64(l.Period)}, res
}

// kept returns the log of key h, found or not, that sh.logs keeps; nil
// for a log its cell keeps alone (inCell).
func (sh *shard) kept(h uint64, found bool) *slidingLog {
	if !found {
		return nil
	}
	return sh.logs[h]
}

// inCell returns, with one as its ring, the log that a cell c, found or
// not, keeps alone: none, or one request of one token, which leaves the
// window at c.exp after c.at, the period, has passed since it. A key whose
// log never holds more (one request per period: a block) so costs its
// cell alone, as a token bucket's does.
func inCell(found bool, c cell, one *[1]logEntry) slidingLog {
	if !found {
		return slidingLog{ring: one[:]}
	}
	one[0] = logEntry{at: c.exp - c.at, n: 1}
	return slidingLog{ring: one[:], count: 1, sum: 1}
}

// now reads the store's clock in Unix ns. Without WithClock it is the wall
// time at New plus the monotonic time since: time.Since reads only the
// monotonic clock, about half the cost of time.Now, which reads both.
func (s *Store) now() int64 {
	if s.clock == nil {
		return s.baseNs + int64(time.Since(s.base))
	}
	return s.clock().UnixNano()
}

// hash identifies key under algorithm a; each algorithm has its own keys.
// It is never 0, the table's mark of an empty slot.
func (s *Store) hash(key string, a ratelimit.Algorithm) uint64 {
	return (maphash.String(s.seed, key) ^ uint64(a)*0x9e3779b97f4a7c15) | 1
}

// hashJoined is hash(prefix+key, a), without the join: maphash hashes
// the bytes given or written to it, however the writes split them.
func (s *Store) hashJoined(prefix, key string, a ratelimit.Algorithm) uint64 {
	var h uint64
	if len(prefix)+len(key) <= joinBuf {
		var b [joinBuf]byte // cheaper than a maphash.Hash, whose buffer is 128 bytes
		n := copy(b[:], prefix)
		n += copy(b[n:], key)
		h = maphash.Bytes(s.seed, b[:n])
	} else {
		var m maphash.Hash
		m.SetSeed(s.seed)
		m.WriteString(prefix)
		m.WriteString(key)
		h = m.Sum64()
	}
	return (h ^ uint64(a)*0x9e3779b97f4a7c15) | 1
}

// joinBuf is the longest join that hashJoined copies to hash it.
const joinBuf = 64

// Len returns the number of keys the store holds.
func (s *Store) Len() int {
	total := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		total += sh.cells.used
		sh.mu.Unlock()
	}
	return total
}

// Close stops the background sweeper. The store still answers afterwards.
// Close is safe to call more than once; it always returns nil.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	s.swept.Wait()
	return nil
}

package memory

import "time"

// Option configures a [Store]; pass options to [New].
// A nil Option is ignored.
type Option func(*config)

type config struct {
	now     func() time.Time
	maxKeys int
	sweep   time.Duration
}

// WithClock makes the store read the time from now instead of time.Now, for
// tests. A nil now means time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// DefaultMaxKeys is the number of keys a store holds at most unless
// [WithMaxKeys] says otherwise: 2^20, about 1 million. At 49 to 62 bytes a
// key of a token bucket or a window, a full store takes about 65 MB of
// heap, whatever the clients send; with the garbage collector's headroom a
// process holds about twice that (the example, full: 149 MB resident). A
// [ratelimit.SlidingLog] key of a rate above 1 costs more: about 150 bytes
// with one request in its window, 200 with a few, and 16 to 32 bytes a
// request past that (its ring doubles). A log of one request per period,
// such as ratelimit.WithBlock's blocks, keeps its request in its slot and
// costs what a token bucket's key does: a store full of blocks (a flood of
// invented user names each sent to a login until blocked) takes about
// 65 MB too.
const DefaultMaxKeys = 1 << 20

// WithMaxKeys bounds the number of keys the store holds, so that a flood of
// new keys (IPv6 /64s are cheap) cannot exhaust memory; the default is
// [DefaultMaxKeys]. When a new key finds the store full, keys whose budget
// is full again are dropped first (that loses nothing), then the keys that
// have used the smallest share of their budget, whatever their algorithm
// and limit: a client that is being limited is forgotten only after every
// key that has used less, so a flood of new keys that each use part of
// their budget never gives it its budget back. A flood whose keys each
// spend all of theirs (as many spent keys as the bound: a million by
// default) ties with it, and can push it out; a forgotten key that had
// used some of its budget starts afresh. Bound the store above the keys
// that can be spent at once, or keep the budgets that matter in Redis
// with noeviction (docs/redis.md). The bound is shared out among the
// store's shards, each of which holds its share (at least 64 keys, or the
// whole bound). n <= 0 removes the bound: memory then grows with every
// distinct key for as long as its budget takes to refill.
func WithMaxKeys(n int) Option {
	return func(c *config) { c.maxKeys = max(n, 0) }
}

// WithSweepInterval sets how long the background sweeper takes to visit
// every key once and drop those whose budget is full again; it holds one
// shard's lock at a time, never the whole store. The default is one minute;
// d <= 0 turns the sweeper off (keys are then dropped only to make room
// under [WithMaxKeys]).
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) { c.sweep = max(d, 0) }
}

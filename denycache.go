package ratelimit

import (
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/shardmap"
)

// defaultDenyCacheKeys is the number of denied keys a limiter on a store
// that is not [Local] remembers unless [WithDenyCache] says otherwise.
const defaultDenyCacheKeys = 65_536

// WithDenyCache sets how many denied keys the limiter remembers locally:
// once the store denies a key a request of cost n under a limit with
// RetryAfter d, the limiter denies that key's requests of cost n or more
// under that same limit itself until d has passed, with the same headers,
// without asking the store. A request under another limit (another plan,
// another answer of a LimitFunc: an upgrade) asks the store, so a change
// of limit takes effect on the next request. This is exact:
// other app servers can only take tokens from the key, never give any back,
// so the store would deny them too. A take that empties a token bucket or
// a fixed window is remembered the same way, until its next token. A flooding client so costs the store
// about one call per token per app server. When maxKeys are held the
// expired ones are dropped, then arbitrary ones (which only costs a store
// call). The default is 65,536 keys for a store that is not [Local]; 0 turns the cache off, and a negative maxKeys is an error.
//
// With several policies ([WithPolicy]) every policy's denials are kept,
// and a request the cache denies gets the longest wait of the policies it
// denies, as from the store. A request invalid on its own (a cost above a
// capacity) is answered 500 before the cache is asked, as without it.
func WithDenyCache(maxKeys int) Option {
	return func(c *config) error {
		if maxKeys < 0 {
			return fmt.Errorf("ratelimit: WithDenyCache(%d): negative", maxKeys)
		}
		c.denyKeys = maxKeys
		return nil
	}
}

// defaultDenyCacheMaxAge is how long a limiter's deny cache answers for a
// denial before asking the store again, unless [WithDenyCacheMaxAge] says
// otherwise.
const defaultDenyCacheMaxAge = 10 * time.Second

// WithDenyCacheMaxAge sets how long the deny cache answers for a denial
// before it asks the store again, even when the denial's RetryAfter is
// longer (a daily quota's midnight, a block of 15 minutes): the longest a
// key's budget given back elsewhere ([Limiter.Reset] on another app
// server, support lifting a block) goes unseen here. An app server that
// cached a denial of a key serves the key again at most maxAge after a
// Reset made on another; the one that made it, at once. The cost is one
// store call per maxAge per denied key that keeps asking, per app server.
// The default is 10 seconds; 0 keeps every denial for its
// whole RetryAfter (a reset elsewhere is then seen once that wait is
// over), and a negative maxAge is an error. While the store fails, a
// block's denial ([WithBlock]) is kept for its whole RetryAfter whatever
// maxAge, before the failure policy answers: a block this server has seen
// holds through an outage (a Reset made elsewhere just before the outage
// is then seen when the store answers again).
func WithDenyCacheMaxAge(maxAge time.Duration) Option {
	return func(c *config) error {
		if maxAge < 0 {
			return fmt.Errorf("ratelimit: WithDenyCacheMaxAge(%v): negative", maxAge)
		}
		c.denyMaxAge = maxAge
		return nil
	}
}

// denyCache remembers recent denials per key, sharded so that concurrent
// requests rarely wait on one another.
type denyCache struct {
	maxAge  time.Duration // how long a denial is answered for; 0: its RetryAfter
	denials *shardmap.Map[denial]
}

// denial is a store's denial of a request of cost n under limit at a
// given instant.
type denial struct {
	limit Limit     // the limit it was decided under: it holds for no other
	n     int       // it denies requests of this cost or more (1: a block's, any)
	cost  int       // the cost its waits are of
	until time.Time // the earliest the same request could pass: counted from the call's sending
	fresh time.Time // until then the cache answers for it: until, or sooner (maxAge)
	// retryAt and resetAt are the instants its RetryAfter and ResetAfter
	// end, counted from the answer's arrival: never before the true ones,
	// so that a client told them is not denied again by the round trip.
	retryAt, resetAt time.Time
	left             int  // Remaining at the denial
	held             bool // a block's: it holds to until while the store fails
}

// asked is when a store call was sent, and when its answer came.
type asked struct{ sent, answered time.Time }

func newDenyCache(maxKeys int, maxAge time.Duration) *denyCache {
	return &denyCache{maxAge: maxAge, denials: shardmap.New[denial](maxKeys)}
}

// get returns the denial of a request of cost n on key under limit at
// now, if the cache holds one that still applies: one decided under a
// limit that decides alike (a request under another, such as a plan's
// after an upgrade, asks the store).
func (c *denyCache) get(key string, limit Limit, n int, now time.Time) (Result, bool) {
	return c.lookup(key, limit, n, now, false)
}

// lookup is get, or with whole, get while the store fails: a block's
// denial holds until its RetryAfter, whatever its age, so that a block this
// server has seen holds through an outage that the fallback decides; other
// denials keep WithDenyCacheMaxAge's bound, so that a Reset made on another
// app server just before the outage is seen as it would have been.
func (c *denyCache) lookup(key string, limit Limit, n int, now time.Time, whole bool) (Result, bool) {
	d, ok := c.denials.Get(key)
	end := d.fresh
	if whole && d.held {
		end = d.until
	}
	if !ok || n < d.n || !now.Before(end) || !decidesAlike(d.limit, limit) {
		return Result{}, false
	}
	retry := d.retryAt.Sub(now)
	switch {
	case n <= d.cost, limit.Algorithm == FixedWindow: // the wait for the window's end
	case limit.Algorithm == TokenBucket:
		// n − cost more tokens, at the bucket's rate.
		retry += limit.refillTime(n-d.cost, roundUp)
	default:
		// A sliding window's wait for more depends on its history: ask.
		return Result{}, false
	}
	return Result{
		Limit:      limit,
		Remaining:  d.left,
		RetryAfter: retry,
		ResetAfter: max(d.resetAt.Sub(now), retry),
	}, true
}

// put remembers res, the denial of a request of cost n on key under
// res.Limit by a store call asked at: the store decided after the call was
// sent, so the wait counted from then never outlasts the true one, and
// before its answer came, so the wait the cache tells, counted from then,
// never ends before it. A held denial is a block's: it denies requests of
// any cost, its waits those of cost n or more.
func (c *denyCache) put(key string, n int, at asked, res Result, held bool) {
	if res.Allowed || res.RetryAfter <= 0 {
		return
	}
	sent := at.sent
	d := denial{limit: res.Limit, n: n, cost: n, until: sent.Add(res.RetryAfter), left: res.Remaining, held: held,
		retryAt: at.answered.Add(res.RetryAfter), resetAt: at.answered.Add(res.ResetAfter)}
	if held {
		d.n = 1 // a block denies every request until it ends
	}
	d.fresh = d.until
	if c.maxAge > 0 && c.maxAge < res.RetryAfter {
		d.fresh = sent.Add(c.maxAge)
	}
	sh := c.denials.Shard(key)
	sh.Lock()
	defer sh.Unlock()
	if sh.Full(key) {
		makeRoom(sh, sent)
	}
	sh.Put(key, d)
}

// record learns from res, the store's decision on n tokens of key asked
// at: a denial is remembered until its RetryAfter; an allowed take
// that left the key empty (Remaining 0) is remembered as the denial of
// any request until the key holds a token again, when that instant is
// known exactly (a token bucket's next token, a fixed window's end), so
// that a flood costs the store one call per token, not two; any other
// allowed take forgets the key's denial, since this app server spent
// tokens the denial did not count.
func (c *denyCache) record(key string, n int, at asked, res Result) {
	switch {
	case !res.Allowed:
		c.put(key, n, at, res, false)
	case n == 0:
	case res.Remaining == 0:
		if wait, ok := untilOneToken(res); ok {
			c.put(key, 1, at, Result{Limit: res.Limit, RetryAfter: wait, ResetAfter: res.ResetAfter}, false)
			return
		}
		c.forget(key)
	default:
		c.forget(key)
	}
}

// untilOneToken is how long after an allowed decision that left res
// (Remaining 0) a request of cost 1 could pass, rounded down a
// microsecond so as never to outlast the true wait (the store's durations
// are rounded up to it): untilItHolds, where that is exact, for a token
// bucket and a fixed window.
func untilOneToken(res Result) (time.Duration, bool) {
	if a := res.Limit.Algorithm; a != TokenBucket && a != FixedWindow {
		return 0, false
	}
	wait := untilItHolds(res, 1) - time.Microsecond
	return wait, wait > 0
}

// forget drops key's denial: this app server took tokens from key, so the
// wait it remembered is too short.
func (c *denyCache) forget(key string) { c.denials.Delete(key) }

// makeRoom drops the expired denials, or if none has expired, an eighth of
// the shard (at least one), in map order: forgetting a denial only costs a
// store call.
func makeRoom(sh *shardmap.Shard[denial], now time.Time) {
	for k, d := range sh.M {
		if !now.Before(d.fresh) {
			delete(sh.M, k)
		}
	}
	if len(sh.M) < sh.Max {
		return
	}
	drop := max(1, sh.Max/8)
	for k := range sh.M {
		if drop <= 0 {
			break
		}
		delete(sh.M, k)
		drop--
	}
}

// decidesAlike reports whether limits a and b decide every request alike:
// the same algorithm, rate, period, capacity and calendar, in zones of one
// name (two loads of "Europe/Berlin" are one zone).
func decidesAlike(a, b Limit) bool {
	if a == b {
		return true
	}
	return a.Algorithm == b.Algorithm && a.Rate == b.Rate && a.Period == b.Period &&
		a.Capacity() == b.Capacity() && a.Calendar == b.Calendar && a.zoneName() == b.zoneName()
}

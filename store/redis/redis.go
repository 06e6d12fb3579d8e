// Package redisstore is a [ratelimit.Store] in Redis, for budgets shared by many
// app servers: a single node, Sentinel (failover), Ring or Redis Cluster.
//
// Every decision takes at most one round trip: a Lua script, run with
// EVALSHA and sent again with EVAL only after NOSCRIPT. A decision that
// finds the store's calls to its node idle goes at once, alone, in a script
// of its algorithm; decisions that find them busy wait and go together in
// the next call (group commit: one TIME, one MGET, each decision on its
// own, in order, with its own deadline). Where the server's Lua has struct
// (Redis, Valkey) state and replies are packed as binary; elsewhere
// (miniredis, some compatible services) the same scripts use strings. The
// scripts read the clock with Redis TIME, so app servers with skewed
// clocks agree, and expire each key when its state no longer matters. On
// Cluster decisions are batched per master: a batch goes to its master as
// one script over its slots (Redis 7+), which checks that every key is
// served there before it writes anything, else as a pipeline of one call
// per slot (see [WithPerSlotBatches]).
// [Store.AllowAll] decides several keys in one script; on Cluster they
// must share a hash tag, as the limits of one client do (see [Store.Key]).
//
// A decision is sent at most once. The store marks its commands as not to
// be retried, so go-redis never resends one, whatever the client's
// MaxRetries: a command whose connection broke may have run or not, and is
// reported as an error, never run twice; a failed call fails only the
// decisions it carried. A call given a context deadline passes it to the
// script, which takes nothing once Redis's clock is past it: a decision
// that reached a stalled Redis after the caller gave up (and the failure
// policy answered) does not take tokens when Redis resumes. A decision
// still waiting for a batch when its context ends is never sent, and a
// full queue (Redis not keeping up) fails a decision at once with
// [ErrBusy]. The deadline travels in Redis's clock: scripts return the
// TIME they used, and the store keeps the offset between the clocks, so
// app servers whose clocks are off are not refused. What remains possible:
// a call that Redis ran just before its deadline while the reply was lost
// counts a request the caller saw fail. With [WithAppClock] the deadline
// is not checked.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// Store is a [ratelimit.Store] in Redis. It is safe for concurrent use by
// multiple goroutines.
type Store struct {
	client goredis.UniversalClient
	// sharded is set for a client that sends each key to its own node
	// (ClusterClient, Ring): a script's keys must then share a hash tag.
	sharded bool
	prefix  string
	now     func() time.Time // nil: Redis TIME
	slack   time.Duration    // with now, a test's expiry slack; 0: the scripts' own second
	skew    skew             // how far Redis's clock is from the app's
	// lastDeadline is the deadline argument made last (deadlineArg).
	lastDeadline atomic.Pointer[boxedDeadline]
	scripts      *scriptSet

	batching bool
	batchers batchers
	perSlot  atomic.Bool // Cluster batches go as per-slot pipelines (cluster.go)

	argsMu sync.RWMutex
	args   map[ratelimit.Limit][3]any // a limit's script arguments, formatted once
}

// maxCachedLimits bounds the cache of formatted limits, for programs that
// make limits on the fly.
const maxCachedLimits = 1024

// limitArgs returns the script arguments that depend only on l: the refill
// rate per second (as a string, exact), the capacity and the period in µs.
func (s *Store) limitArgs(l ratelimit.Limit) [3]any {
	if l.Calendar != ratelimit.NoCalendar {
		return s.calendarArgs(l) // they change with the time
	}
	s.argsMu.RLock()
	a, ok := s.args[l]
	s.argsMu.RUnlock()
	if ok {
		return a
	}
	a = [3]any{
		strconv.FormatFloat(l.PerSecondRate(), 'f', -1, 64), // no exponent: some servers' Lua (miniredis's) reads none
		l.Capacity(),
		int64(l.Period / time.Microsecond),
	}
	s.argsMu.Lock()
	if len(s.args) < maxCachedLimits {
		if s.args == nil {
			s.args = make(map[ratelimit.Limit][3]any)
		}
		s.args[l] = a
	}
	s.argsMu.Unlock()
	return a
}

var _ ratelimit.Store = (*Store)(nil)

// ErrNilClient is returned by the calls of a zero Store, which has no
// client; [New] refuses a nil client at once.
var ErrNilClient = errors.New("ratelimit/redis: nil client")

// New returns a Store that keeps its budgets in client: a *goredis.Client,
// *goredis.ClusterClient, *goredis.Ring or failover client. It panics on a
// nil client (a nil interface or a nil pointer of those types), at start-up
// rather than on every call, as the adapters' constructors do on a nil
// limiter: a store that failed every call would fail open forever.
func New(client goredis.UniversalClient, opts ...Option) *Store {
	if isNil(client) {
		panic("ratelimit/redis: New(nil): want a *goredis.Client, *goredis.ClusterClient, *goredis.Ring or failover client")
	}
	s := &Store{client: client, prefix: DefaultPrefix, scripts: &detected, batching: true}
	switch c := client.(type) {
	case *goredis.ClusterClient:
		s.sharded = true
		s.batchers.cluster = c
		s.batchers.alone = new([16384]atomic.Int64)
	case *goredis.Ring:
		// A Ring spreads hash tags over its shards by its own hash: no two
		// tags are known to share one, so its decisions are sent one by one.
		s.sharded = true
		s.batching = false
	}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		o(s)
	}
	return s
}

// slotTag is the Redis Cluster hash tag of a key: 8 hex digits of its
// FNV-1a hash, put in braces before the caller's key, so that keys spread
// over every slot whatever braces a client puts in them.
func slotTag(key string) [10]byte {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	const hexDigits = "0123456789abcdef"
	var t [10]byte
	t[0], t[9] = '{', '}'
	for i := 8; i >= 1; i-- {
		t[i] = hexDigits[h&0xf]
		h >>= 4
	}
	return t
}

// Key returns the Redis key under which the store keeps key's budget under
// algorithm a: prefix, the algorithm's tag ("tb:" for the token bucket), a
// hash tag, then key, such as "ratelimit:tb:{9e1f2a0b}home/ip:192.0.2.1".
//
// The hash tag, which chooses the Redis Cluster slot, is computed from the
// part of key after its namespace, the first '/' (all of key if it has
// none). The core limiter names a client's budget under one of its limits
// "<namespace>/<client key>", such as "api/ip:192.0.2.1" and
// "api#hourly/ip:192.0.2.1", so all the limits of one client share a slot
// and [Store.AllowAll] decides them in one script on Cluster too.
func (s *Store) Key(key string, a ratelimit.Algorithm) string {
	if a < 0 || int(a) >= len(tags) {
		a = ratelimit.TokenBucket
	}
	tag := slotTag(afterNamespace(key))
	return s.prefix + tags[a] + string(tag[:]) + key
}

// afterNamespace is the part of key after its first '/', or all of key.
func afterNamespace(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// ErrLate reports a decision that reached Redis after its deadline: it
// took nothing. It wraps context.DeadlineExceeded.
var ErrLate = fmt.Errorf("ratelimit/redis: the call reached Redis after its deadline and took nothing: %w", context.DeadlineExceeded)

// AllowN implements [ratelimit.Store] in at most one round trip to Redis:
// alone, or in a batch with the decisions waiting for the same node.
func (s *Store) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	if err := ratelimit.ValidateCall(key, limit, n); err != nil {
		return ratelimit.Result{}, err
	}
	if s.client == nil {
		return ratelimit.Result{}, ErrNilClient
	}
	return s.allowN(ctx, key, limit, n, false)
}

// allowN is AllowN after its checks; resent is set when the take goes a
// second time, around Redis's clock (see calendar.go).
func (s *Store) allowN(ctx context.Context, key string, limit ratelimit.Limit, n int, resent bool) (ratelimit.Result, error) {
	p, b := s.pend(ctx, key, limit, n)
	res, err := s.decide(b, p)
	p.free()
	if err == errMissedWindow && !resent { // nothing was taken: once more, around Redis's clock
		return s.allowN(ctx, key, limit, n, true)
	}
	return res, err
}

// isNil reports whether client is nil, or a nil pointer of go-redis's
// client types.
func isNil(client goredis.UniversalClient) bool {
	switch c := client.(type) {
	case nil:
		return true
	case *goredis.Client:
		return c == nil
	case *goredis.ClusterClient:
		return c == nil
	case *goredis.Ring:
		return c == nil
	}
	return false
}

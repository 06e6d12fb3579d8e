// Package redis is a [ratelimit.Store] in Redis, for budgets shared by many
// app servers: a single node, Sentinel (failover), Ring or Redis Cluster.
//
// Every decision is one round trip: one Lua script (bucket.lua for the token
// bucket), run with EVALSHA and sent again with EVAL only after NOSCRIPT.
// Each script of [Store.AllowN] touches exactly one key, so the store is
// Redis Cluster safe, reads the clock with Redis TIME, so app servers with
// skewed clocks agree, and expires the key when its state no longer
// matters. [Store.AllowAll] decides several keys in one script; on Cluster
// they must share a hash tag, as the limits of one client do (see
// [Store.Key]).
//
// A decision is sent at most once. The store marks its commands as not to
// be retried, so go-redis never resends one, whatever the client's
// MaxRetries: a command whose connection broke may have run or not, and is
// reported as an error, never run twice. A call given a context deadline
// passes it to the script, which takes nothing once Redis's clock is past
// it: a decision that reached a stalled Redis after the caller gave up (and
// the failure policy answered) does not take tokens when Redis resumes.
// The deadline travels in Redis's clock: scripts return the TIME they used,
// and the store keeps the offset between the clocks, so app servers whose
// clocks are off are not refused. What remains possible: a call that Redis
// ran just before its deadline while the reply was lost counts a request
// the caller saw fail. With [WithAppClock] the deadline is not checked.
package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	skew    skew             // how far Redis's clock is from the app's

	argsMu sync.RWMutex
	args   map[ratelimit.Limit][3]any // a limit's script arguments, formatted once
}

// maxCachedLimits bounds the cache of formatted limits, for programs that
// make limits on the fly.
const maxCachedLimits = 1024

// limitArgs returns the script arguments that depend only on l: the refill
// rate per second (as a string, exact), the capacity and the period in µs.
func (s *Store) limitArgs(l ratelimit.Limit) [3]any {
	s.argsMu.RLock()
	a, ok := s.args[l]
	s.argsMu.RUnlock()
	if ok {
		return a
	}
	a = [3]any{
		strconv.FormatFloat(l.PerSecondRate(), 'g', -1, 64),
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

// ErrNilClient is returned by a Store made with a nil client.
var ErrNilClient = errors.New("ratelimit/redis: nil client")

// New returns a Store that keeps its budgets in client: a *goredis.Client,
// *goredis.ClusterClient, *goredis.Ring or failover client.
func New(client goredis.UniversalClient, opts ...Option) *Store {
	s := &Store{prefix: DefaultPrefix}
	if client != nil {
		s.client = client
	}
	switch client.(type) {
	case *goredis.ClusterClient, *goredis.Ring:
		s.sharded = true
	}
	for _, o := range opts {
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
	if a < 0 || int(a) >= len(scripts) {
		a = ratelimit.TokenBucket
	}
	tag := slotTag(afterNamespace(key))
	return s.prefix + scripts[a].tag + string(tag[:]) + key
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

// onceCmd is a script call that go-redis must never resend: a resent call
// could count one request twice.
type onceCmd struct{ *goredis.Cmd }

// NoRetry tells go-redis not to retry the command.
func (onceCmd) NoRetry() bool { return true }

// AllowN implements [ratelimit.Store] in one round trip to Redis.
func (s *Store) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	if err := ratelimit.ValidateCall(key, limit, n); err != nil {
		return ratelimit.Result{}, err
	}
	if s.client == nil {
		return ratelimit.Result{}, ErrNilClient
	}
	sc := &scripts[limit.Algorithm]
	a := s.limitArgs(limit)
	clock, deadline := s.clockArgs(ctx)
	args := []any{"evalsha", sc.script.Hash(), 1, s.Key(key, limit.Algorithm), a[0], a[1], n, a[2], clock, deadline}
	v, err := s.eval(ctx, sc, args)
	if err != nil {
		return ratelimit.Result{}, err
	}
	if len(v) != 4 {
		return ratelimit.Result{}, fmt.Errorf("ratelimit/redis: %s returned %d values, want 4", sc.name, len(v))
	}
	if v[0] < 0 {
		return ratelimit.Result{}, ErrLate
	}
	return result(v, limit), nil
}

// result reads a decision under limit from the four integers a script
// returns for it: allowed, remaining, retry-after µs, reset-after µs.
func result(v []int64, limit ratelimit.Limit) ratelimit.Result {
	return ratelimit.Result{
		Allowed:    v[0] == 1,
		Limit:      limit,
		Remaining:  int(v[1]),
		RetryAfter: time.Duration(v[2]) * time.Microsecond,
		ResetAfter: time.Duration(v[3]) * time.Microsecond,
	}
}

// clockArgs returns the scripts' clock and deadline arguments: the app's
// clock in µs if the store has one, else "" (Redis TIME) and the context's
// deadline in µs, or "" for none.
func (s *Store) clockArgs(ctx context.Context) (clock, deadline any) {
	clock, deadline = "", ""
	if s.now != nil {
		clock = s.now().UnixMicro()
	} else if d, ok := ctx.Deadline(); ok {
		if rd, ok := s.skew.deadline(d); ok {
			deadline = rd
		}
	}
	return clock, deadline
}

// eval runs sc with args, which start "evalsha", sha: one EVALSHA, and an
// EVAL only after NOSCRIPT, each sent at most once. It returns the
// script's integers but the last, the clock the script used, from which it
// learns Redis's clock.
func (s *Store) eval(ctx context.Context, sc *script, args []any) ([]int64, error) {
	sent := time.Now()
	cmd := onceCmd{goredis.NewCmd(ctx, args...)}
	err := s.client.Process(ctx, cmd)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		args[0], args[1] = "eval", sc.source
		cmd = onceCmd{goredis.NewCmd(ctx, args...)}
		err = s.client.Process(ctx, cmd)
	}
	if err != nil {
		return nil, fmt.Errorf("ratelimit/redis: %s: %w", sc.name, classify(err, s.addr()))
	}
	v, err := cmd.Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("ratelimit/redis: %s: %w", sc.name, err)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("ratelimit/redis: %s returned nothing", sc.name)
	}
	if s.now == nil {
		s.skew.observe(v[len(v)-1], sent, time.Now())
	}
	return v[:len(v)-1], nil
}

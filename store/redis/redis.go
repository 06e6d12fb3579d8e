// Package redis is a [ratelimit.Store] in Redis, for budgets shared by many
// app servers: a single node, Sentinel (failover) or Redis Cluster.
//
// Every decision is one round trip: one Lua script (bucket.lua for the token
// bucket), run with EVALSHA and sent again with EVAL only after NOSCRIPT.
// Each script touches exactly one key, so the store is Redis Cluster safe,
// reads the clock with Redis TIME, so app servers with skewed clocks agree,
// and expires the key when its state no longer matters.
//
// A request is never sent twice by this package. go-redis itself retries a
// command whose connection broke after it was written (not one that timed
// out); set the client's MaxRetries to -1 if such a request must never count
// twice.
package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// Store is a [ratelimit.Store] in Redis. It is safe for concurrent use by
// multiple goroutines.
type Store struct {
	client goredis.Scripter
	prefix string
	now    func() time.Time // nil: Redis TIME

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
	for _, o := range opts {
		o(s)
	}
	return s
}

// call holds the keys and arguments of one script call.
type call struct {
	keys [1]string
	args []any
}

var callPool = sync.Pool{New: func() any { return &call{args: make([]any, 0, 5)} }}

// AllowN implements [ratelimit.Store] in one round trip to Redis.
func (s *Store) AllowN(ctx context.Context, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	if err := ratelimit.ValidateCall(key, limit, n); err != nil {
		return ratelimit.Result{}, err
	}
	if s.client == nil {
		return ratelimit.Result{}, ErrNilClient
	}
	sc := scripts[limit.Algorithm]
	a := s.limitArgs(limit)
	// go-redis copies keys and arguments into its command: the slices can
	// be reused once Run returns.
	call := callPool.Get().(*call)
	call.keys[0] = s.prefix + sc.tag + key
	call.args = append(call.args[:0], a[0], a[1], n, a[2])
	if s.now != nil {
		call.args = append(call.args, s.now().UnixMicro())
	}
	v, err := sc.script.Run(ctx, s.client, call.keys[:], call.args...).Int64Slice()
	clear(call.args) // keep no key or value alive in the pool
	call.args, call.keys[0] = call.args[:0], ""
	callPool.Put(call)
	if err != nil {
		return ratelimit.Result{}, fmt.Errorf("ratelimit/redis: %s: %w", sc.name, err)
	}
	if len(v) != 4 {
		return ratelimit.Result{}, fmt.Errorf("ratelimit/redis: %s returned %d values, want 4", sc.name, len(v))
	}
	return ratelimit.Result{
		Allowed:    v[0] == 1,
		Limit:      limit,
		Remaining:  int(v[1]),
		RetryAfter: time.Duration(v[2]) * time.Microsecond,
		ResetAfter: time.Duration(v[3]) * time.Microsecond,
	}, nil
}

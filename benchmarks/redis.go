package benchmarks

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	throttledredis "github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ulelredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/benchmarks/internal/reference"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// RedisNames lists the Redis-backed peers, like for like in groups:
//
//   - ceiling: EVALSHA of a script that only returns 1, the most decisions
//     one server and client can make one call each;
//   - reference, ours-tb, ours-tb-solo, redis_rate, throttled: token
//     buckets (GCRA for redis_rate and throttled); reference is the
//     course's HMGET/HSET/EXPIRE script; ours-tb-solo is ours with
//     [redisstore.WithoutBatching], a script call per decision, to show
//     what group commit adds;
//   - ulule, ours-fw: fixed windows;
//   - ours-sw, ours-log, ours-multi: our other algorithms (sliding window,
//     sliding log) and two token buckets of one client decided together by
//     AllowAll, which no peer offers;
//   - ours-limiter: ours-tb as a user calls it, through a ratelimit.Limiter
//     with its defaults on Redis (time budget, breaker, deny cache), over
//     the client docs/redis.md recommends (ContextTimeoutEnabled, which
//     lets the Limiter call the store without a goroutine), to set beside
//     the store alone.
//
// tollbooth has no Redis store.
var RedisNames = []string{"ceiling", "reference", "ours-tb", "ours-tb-solo", "redis_rate", "throttled", "ulule", "ours-fw", "ours-sw", "ours-log", "ours-multi", "ours-limiter"}

// ClusterNames lists the peers of the Redis Cluster suite: those whose
// every call touches one key (throttled sends TIME and GET in one
// pipeline, which a Cluster cannot route to one node).
var ClusterNames = []string{"ceiling", "reference", "ours-tb", "ours-tb-solo", "redis_rate", "ulule", "ours-fw", "ours-multi", "ours-limiter"}

// RedisPeer is one Redis-backed library deciding for one key at a time.
type RedisPeer struct {
	Name  string
	Allow func(ctx context.Context, key string) (bool, error)
}

var ceiling = goredis.NewScript(`return 1`)

// NewRedisPeer returns the peer called name, keeping its keys in client
// under prefix, deciding under b.
func NewRedisPeer(name string, client goredis.UniversalClient, prefix string, b Budget) (RedisPeer, error) {
	p := RedisPeer{Name: name}
	switch name {
	case "ceiling":
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			v, err := ceiling.Run(ctx, client, []string{prefix + key}).Int64()
			return v == 1, err
		}

	case "reference":
		bucket := &reference.Bucket{Client: client, Prefix: prefix, Capacity: b.Rate, Rate: float64(b.Rate) / b.Period.Seconds()}
		p.Allow = bucket.Allow

	case "ours-tb", "ours-tb-solo", "ours-fw", "ours-sw", "ours-log":
		opts := []redisstore.Option{redisstore.WithPrefix(prefix)}
		if name == "ours-tb-solo" {
			opts = append(opts, redisstore.WithoutBatching())
		}
		s := redisstore.New(client, opts...)
		l := ratelimit.Limit{Rate: b.Rate, Period: b.Period, Algorithm: algorithms[name]}
		if name == "ours-log" && l.Rate > ratelimit.MaxSlidingLogRate {
			// The same rate over a shorter period: a log keeps one entry
			// per request in its period, so its limit is bounded.
			l.Period = time.Duration(int64(l.Period) * ratelimit.MaxSlidingLogRate / int64(l.Rate))
			l.Rate = ratelimit.MaxSlidingLogRate
		}
		if err := l.Validate(); err != nil {
			return p, err
		}
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			res, err := s.AllowN(ctx, key, l, 1)
			return res.Allowed, err
		}

	case "ours-limiter":
		// A budget of a second rather than the default 100 ms: what is
		// measured is the Limiter's own cost, and 512 goroutines on a busy
		// machine would otherwise measure the failure policy instead.
		l, err := ratelimit.New(redisstore.New(client, redisstore.WithPrefix(prefix)), ratelimit.Limit{Rate: b.Rate, Period: b.Period},
			ratelimit.WithName("bench"), ratelimit.WithPlainKeys(), ratelimit.WithTimeout(time.Second))
		if err != nil {
			return p, err
		}
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			res, err := l.AllowN(ctx, key, 1)
			return res.Allowed, err
		}

	case "ours-multi":
		// Two policies of one limiter, as a client's burst and a wider
		// quota; the namespaces before "/" put both keys of one client in
		// one Cluster slot. The budget binds the first.
		s := redisstore.New(client, redisstore.WithPrefix(prefix))
		burst := ratelimit.Limit{Rate: b.Rate, Period: b.Period}
		quota := ratelimit.Limit{Rate: 2 * b.Rate, Period: b.Period}
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			takes := [2]ratelimit.Take{{Key: "burst/" + key, Limit: burst, N: 1}, {Key: "quota/" + key, Limit: quota, N: 1}}
			var res [2]ratelimit.Result
			if err := s.AllowAll(ctx, takes[:], res[:]); err != nil {
				return false, err
			}
			return res[0].Allowed && res[1].Allowed, nil
		}

	case "redis_rate":
		l := redis_rate.NewLimiter(client)
		lim := redis_rate.Limit{Rate: b.Rate, Burst: b.Rate, Period: b.Period}
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			res, err := l.Allow(ctx, prefix+key, lim)
			if err != nil {
				return false, err
			}
			return res.Allowed > 0, nil
		}

	case "throttled":
		st, err := throttledredis.NewCtx(client, prefix)
		if err != nil {
			return p, err
		}
		l, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
			MaxRate:  throttled.PerDuration(b.Rate, b.Period),
			MaxBurst: b.Rate - 1, // GCRA admits MaxBurst+1 at once
		})
		if err != nil {
			return p, err
		}
		l.SetMaxCASAttemptsLimit(maxCASAttempts)
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			limited, _, err := l.RateLimitCtx(ctx, key, 1)
			return err == nil && !limited, err
		}

	case "ulule":
		s, err := ulelredis.NewStoreWithOptions(client, ulule.StoreOptions{Prefix: prefix})
		if err != nil {
			return p, err
		}
		l := ulule.New(s, ulule.Rate{Period: b.Period, Limit: int64(b.Rate)})
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			c, err := l.Get(ctx, key)
			return err == nil && !c.Reached, err
		}

	default:
		return p, fmt.Errorf("benchmarks: no Redis peer %q", name)
	}
	return p, nil
}

var algorithms = map[string]ratelimit.Algorithm{
	"ours-tb":      ratelimit.TokenBucket,
	"ours-tb-solo": ratelimit.TokenBucket,
	"ours-fw":      ratelimit.FixedWindow,
	"ours-sw":      ratelimit.SlidingWindow,
	"ours-log":     ratelimit.SlidingLog,
}

// Workload is what the Redis suites ask every decision to be.
type Workload struct {
	// Name is how the workload appears in benchmark names.
	Name string
	// Budget is each key's.
	Budget Budget
	// Allowed is what every timed decision must answer.
	Allowed bool
}

// RedisWorkloads are the Redis suites' two workloads.
//
// In allowed, every decision is an admission and every decision a write.
// Its budget is far below the memory suites' because redis_rate keeps its
// state as float seconds since 2017, about 60 ns apart today: at a billion
// per second its state would stop moving and it would skip its SET, doing
// less work than the others.
//
// In denied, a warm-up takes each key's one token and every timed decision
// is a denial. The period is five years, so that no bucket refills and no
// fixed window ends during a run (ours aligns them to the Unix epoch: the
// next ends in 2030), and no longer, because redis_rate adds the period to
// float seconds since 2017: past about seven years the sum loses the
// microseconds and a key's first decision may be denied.
var RedisWorkloads = []Workload{
	{Name: "allowed", Budget: Budget{Rate: 100_000, Period: time.Second}, Allowed: true},
	{Name: "denied", Budget: Budget{Rate: 1, Period: 5 * 365 * 24 * time.Hour}, Allowed: false},
}

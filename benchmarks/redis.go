package benchmarks

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
	ulule "github.com/ulule/limiter/v3"
	ulelredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/benchmarks/internal/reference"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// RedisNames lists the Redis-backed peers, like for like in pairs:
//
//   - ceiling: EVALSHA of a script that only returns 1, the most decisions
//     one server and client can make;
//   - ours-tb, reference, redis_rate: token buckets (GCRA for redis_rate);
//     reference is the course's HMGET/HSET/EXPIRE script;
//   - ours-fw, ulule: fixed windows.
var RedisNames = []string{"ceiling", "reference", "ours-tb", "redis_rate", "ulule", "ours-fw"}

// RedisPeer is one Redis-backed library deciding for one key at a time.
type RedisPeer struct {
	Name  string
	Allow func(ctx context.Context, key string) (bool, error)
}

var ceiling = goredis.NewScript(`return 1`)

// NewRedisPeer returns the peer called name, keeping its keys in client
// under prefix.
func NewRedisPeer(name string, client *goredis.Client, prefix string, b Budget) (RedisPeer, error) {
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
	case "ours-tb", "ours-fw":
		s := redisstore.New(client, redisstore.WithPrefix(prefix))
		l := ratelimit.Limit{Rate: b.Rate, Period: b.Period}
		if name == "ours-fw" {
			l.Algorithm = ratelimit.FixedWindow
		}
		p.Allow = func(ctx context.Context, key string) (bool, error) {
			res, err := s.AllowN(ctx, key, l, 1)
			return res.Allowed, err
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

// RedisBudget is the Redis suites' budget: every decision an admission,
// and every decision a write. It is far below the memory suites' because
// redis_rate keeps its state as float seconds since 2017, about 60 ns apart
// today: at a billion per second its state would stop moving and it would
// skip its SET, doing less work than the others.
var RedisBudget = Budget{Rate: 100_000, Period: time.Second}

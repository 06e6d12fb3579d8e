package redisstore_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// referenceLua is the plain token bucket the course starts from: the app's
// clock in seconds, the refill floored and the timestamp moved to now on
// every call. It is the baseline of BenchmarkStore.
const referenceLua = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1]) or capacity
local ts = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.floor((now - ts) * rate))
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) * 2)
return {allowed, tokens}
`

// benchClient connects to RATELIMIT_REDIS_ADDR; benchmarks need a real
// server, miniredis would measure itself.
func benchClient(b *testing.B) *goredis.Client {
	addr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if addr == "" {
		b.Skip("set RATELIMIT_REDIS_ADDR to benchmark against a real redis-server")
	}
	c := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 64})
	b.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("RATELIMIT_REDIS_ADDR does not answer: %v", err)
	}
	return c
}

// serverTime reports the server's µs per EVALSHA from INFO commandstats
// between two readings.
func serverTime(b *testing.B, c *goredis.Client) func() {
	c0, u0 := evalshaStats(b, c)
	return func() {
		c1, u1 := evalshaStats(b, c)
		if c1 > c0 {
			b.ReportMetric((u1-u0)/(c1-c0), "server-µs/op")
		}
	}
}

const benchKeys = 10_000

// BenchmarkStore is AllowN on 10,000 keys whose budgets never run out (every
// call writes), from 1 and 64 goroutines; BenchmarkReference is the same
// load on the reference script with a raw EVALSHA.
func BenchmarkStore(b *testing.B) {
	c := benchClient(b)
	s := redisstore.New(c, redisstore.WithPrefix("bench:"))
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	ctx := context.Background()
	keys := benchKeyNames()
	for _, par := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(par), func(b *testing.B) {
			measure(b, c, par, func(i int64) error {
				_, err := s.AllowN(ctx, keys[i%benchKeys], l, 1)
				return err
			})
		})
	}
}

// BenchmarkStoreDenied is AllowN on 10,000 spent keys: every call is
// denied, which the script decides without writing; the reference script
// writes on every call (BenchmarkReferenceDenied).
func BenchmarkStoreDenied(b *testing.B) {
	c := benchClient(b)
	s := redisstore.New(c, redisstore.WithPrefix("bench-denied:"))
	l := ratelimit.PerHour(1)
	ctx := context.Background()
	keys := benchKeyNames()
	for _, k := range keys {
		s.AllowN(ctx, k, l, 1)
	}
	b.ResetTimer()
	measure(b, c, 64, func(i int64) error {
		_, err := s.AllowN(ctx, keys[i%benchKeys], l, 1)
		return err
	})
}

func BenchmarkReferenceDenied(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	sha, err := c.ScriptLoad(ctx, referenceLua).Result()
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeyNames()
	rate := 1.0 / 3600
	for _, k := range keys {
		c.EvalSha(ctx, sha, []string{"ref-denied:" + k}, 1, rate, time.Now().Unix(), 1)
	}
	b.ResetTimer()
	measure(b, c, 64, func(i int64) error {
		k := "ref-denied:" + keys[i%benchKeys]
		return c.EvalSha(ctx, sha, []string{k}, 1, rate, time.Now().Unix(), 1).Err()
	})
}

func BenchmarkReference(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	sha, err := c.ScriptLoad(ctx, referenceLua).Result()
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeyNames()
	for _, par := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(par), func(b *testing.B) {
			measure(b, c, par, func(i int64) error {
				k := "ref:" + keys[i%benchKeys]
				return c.EvalSha(ctx, sha, []string{k}, 1_000_000, 1_000_000, time.Now().Unix(), 1).Err()
			})
		})
	}
}

// measure runs b.N calls of f from clients goroutines, and reports the
// allocations and the server's time per call.
func measure(b *testing.B, c *goredis.Client, clients int, f func(i int64) error) {
	done := serverTime(b, c)
	defer done()
	defer b.StopTimer()
	b.ReportAllocs()
	var next atomic.Int64
	if clients == 1 {
		for i := range b.N {
			if err := f(int64(i)); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f(next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchKeyNames() []string {
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	return keys
}

// BenchmarkAlgorithm is AllowN on 10,000 keys for each algorithm, from 64
// goroutines, with the server's time per decision.
func BenchmarkAlgorithm(b *testing.B) {
	c := benchClient(b)
	s := redisstore.New(c, redisstore.WithPrefix("bench:"))
	ctx := context.Background()
	keys := benchKeyNames()
	for _, a := range algorithms {
		b.Run(a.String(), func(b *testing.B) {
			l := ratelimit.Limit{Rate: 10_000, Period: time.Second, Algorithm: a}
			measure(b, c, 64, func(i int64) error {
				_, err := s.AllowN(ctx, keys[i%benchKeys], l, 1)
				return err
			})
		})
	}
}

// BenchmarkAllowAll is AllowAll with two limits of one client (the keys the
// limiter builds for two limits, a token bucket and a sliding window)
// against AllowN with one, on 10,000 clients whose budgets never run out,
// from one goroutine: allocations, the server's time and the round trips
// per decision, counted by a go-redis hook (AllowAll must make exactly 1).
func BenchmarkAllowAll(b *testing.B) {
	c := benchClient(b)
	hook := &countingHook{}
	c.AddHook(hook)
	s := redisstore.New(c, redisstore.WithPrefix("bench-multi:"))
	ctx := context.Background()
	keys := benchKeyNames()
	perSecond := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	perHour := ratelimit.Limit{Rate: 1_000_000_000, Period: time.Hour, Algorithm: ratelimit.SlidingWindow}
	roundTrips := func(b *testing.B, f func(i int64) error) {
		f(0) // loads the script
		before := hook.n.Load()
		measure(b, c, 1, f)
		b.ReportMetric(float64(hook.n.Load()-before)/float64(b.N), "round-trips/op")
	}
	keyPairs := make([][2]string, benchKeys)
	for i, k := range keys {
		keyPairs[i] = [2]string{"api/" + k, "api#hourly/" + k}
	}
	b.Run("AllowN/1 limit", func(b *testing.B) {
		roundTrips(b, func(i int64) error {
			_, err := s.AllowN(ctx, keyPairs[i%benchKeys][0], perSecond, 1)
			return err
		})
	})
	b.Run("AllowAll/2 limits", func(b *testing.B) {
		takes := []ratelimit.Take{{Limit: perSecond, N: 1}, {Limit: perHour, N: 1}}
		results := make([]ratelimit.Result, 2)
		roundTrips(b, func(i int64) error {
			p := &keyPairs[i%benchKeys]
			takes[0].Key, takes[1].Key = p[0], p[1]
			return s.AllowAll(ctx, takes, results)
		})
	})
}

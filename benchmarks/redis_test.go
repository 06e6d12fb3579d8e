package benchmarks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// redisKeys is how many keys the Redis suites visit round-robin.
const redisKeys = 10_000

// goroutines is the concurrency of BenchmarkRedisParallel.
const goroutines = 64

// redisAddr returns RATELIMIT_REDIS_ADDR. Unset, the Redis suites skip;
// set, a server that does not answer fails them.
func redisAddr(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if addr == "" {
		tb.Skip("RATELIMIT_REDIS_ADDR is not set: the Redis suites need a real redis-server (run.sh starts one)")
	}
	return addr
}

// counter is a go-redis hook that counts round trips (a command or a
// pipeline each) and remembers which commands were sent, so that their
// server time can be read back from INFO commandstats.
type counter struct {
	trips atomic.Int64
	names sync.Map // command name -> struct{}
}

func (c *counter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

// connSetup lists the commands go-redis sends once per new connection;
// they pass through the hooks too, but are no part of a decision.
var connSetup = map[string]bool{"hello": true, "client": true, "auth": true, "select": true}

func (c *counter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if name := cmd.Name(); !connSetup[name] {
			c.trips.Add(1)
			c.note(name)
		}
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		counted := false
		for _, cmd := range cmds {
			if name := cmd.Name(); !connSetup[name] {
				counted = true
				c.note(name)
			}
		}
		if counted {
			c.trips.Add(1)
		}
		return next(ctx, cmds)
	}
}

func (c *counter) note(name string) {
	if _, ok := c.names.Load(name); !ok {
		c.names.Store(name, struct{}{})
	}
}

// redisClients returns a client for the peer, with the counting hook, and
// one for INFO, both closed when the benchmark ends.
func redisClients(b *testing.B) (*goredis.Client, *goredis.Client, *counter) {
	b.Helper()
	addr := redisAddr(b)
	opts := &goredis.Options{Addr: addr, PoolSize: 2 * goroutines, MinIdleConns: goroutines}
	client := goredis.NewClient(opts)
	admin := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 1})
	b.Cleanup(func() { client.Close(); admin.Close() })
	if err := admin.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("RATELIMIT_REDIS_ADDR=%s does not answer: %v", addr, err)
	}
	c := &counter{}
	client.AddHook(c)
	return client, admin, c
}

// commandStats reads calls and µs per command from INFO commandstats.
func commandStats(b *testing.B, admin *goredis.Client) map[string][2]float64 {
	b.Helper()
	info, err := admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatalf("INFO commandstats: %v", err)
	}
	stats := make(map[string][2]float64)
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, found := strings.CutPrefix(name, "cmdstat_")
		if !ok || !found {
			continue
		}
		var calls, usec float64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = f
			case "usec":
				usec = f
			}
		}
		stats[name] = [2]float64{calls, usec}
	}
	return stats
}

// serverMicros is the server time of the commands the client sent between
// two readings. Commands that scripts call are counted by Redis inside
// their script's time, so only what the client sent is summed.
func serverMicros(c *counter, before, after map[string][2]float64) float64 {
	var usec float64
	c.names.Range(func(k, _ any) bool {
		name := strings.ToLower(k.(string))
		usec += after[name][1] - before[name][1]
		return true
	})
	return usec
}

// prefix returns a key prefix of its own for each benchmark, so runs on one
// server never share keys (and nothing is flushed).
func prefix(b *testing.B) string {
	var r [6]byte
	rand.Read(r[:])
	return "rlbench:" + hex.EncodeToString(r[:]) + ":"
}

// redisPeer makes the peer and warms it up outside the measurement: the
// first call of a script may cost a NOSCRIPT and an EVAL, and the pool
// opens its connections, from as many goroutines as the parallel suite runs.
func redisPeer(b *testing.B, name string, client *goredis.Client, names []string) RedisPeer {
	b.Helper()
	p, err := NewRedisPeer(name, client, prefix(b), RedisBudget)
	if err != nil {
		b.Fatal(err)
	}
	if ok, err := p.Allow(context.Background(), names[0]); err != nil || !ok {
		b.Fatalf("%s: allowed %v, error %v", name, ok, err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range goroutines {
		wg.Go(func() {
			for _, k := range names[g*4 : g*4+4] {
				if ok, err := p.Allow(context.Background(), k); err != nil || !ok {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%s: %d warm-up decisions failed or were denied", name, n)
	}
	return p
}

var cmdstats = flag.String("cmdstats", "", "directory to write each Redis benchmark's INFO commandstats per decision into")

// report reports round trips and server µs per decision, and with
// -cmdstats writes every command the server ran per decision, those the
// scripts called included, to a file named after the benchmark.
func report(b *testing.B, c *counter, admin *goredis.Client, before map[string][2]float64) {
	b.Helper()
	after := commandStats(b, admin)
	b.ReportMetric(float64(c.trips.Load())/float64(b.N), "roundtrips/op")
	b.ReportMetric(serverMicros(c, before, after)/float64(b.N), "server-µs/op")
	if *cmdstats == "" {
		return
	}
	var out strings.Builder
	names := make([]string, 0, len(after))
	for name := range after {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		calls := after[name][0] - before[name][0]
		if calls <= 0 || name == "info" || connSetup[name] {
			continue
		}
		fmt.Fprintf(&out, "%s %.3f %.3f\n", name, calls/float64(b.N), (after[name][1]-before[name][1])/float64(b.N))
	}
	file := filepath.Join(*cmdstats, strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())+".txt")
	if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
		b.Error(err)
	}
}

// BenchmarkRedisSerial is the latency of one decision on a real
// redis-server (RATELIMIT_REDIS_ADDR), one goroutine, keys round-robin.
func BenchmarkRedisSerial(b *testing.B) {
	names := keyNames(redisKeys)
	for _, name := range rotated(RedisNames) {
		b.Run("lib="+name, func(b *testing.B) {
			client, admin, c := redisClients(b)
			p := redisPeer(b, name, client, names)
			ctx := context.Background()
			before := commandStats(b, admin)
			c.trips.Store(0)
			var denied int64
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				ok, err := p.Allow(ctx, names[i])
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					denied++
				}
				if i++; i == len(names) {
					i = 0
				}
			}
			report(b, c, admin, before)
			checkDenied(b, denied)
		})
	}
}

// BenchmarkRedisParallel is the throughput of 64 goroutines deciding on
// one redis-server, keys round-robin from different starting points.
func BenchmarkRedisParallel(b *testing.B) {
	names := keyNames(redisKeys)
	for _, name := range rotated(RedisNames) {
		b.Run("lib="+name, func(b *testing.B) {
			client, admin, c := redisClients(b)
			p := redisPeer(b, name, client, names)
			ctx := context.Background()
			before := commandStats(b, admin)
			c.trips.Store(0)
			var start atomic.Int64
			var denied, failed atomic.Int64
			var firstErr atomic.Value
			b.SetParallelism((goroutines + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(start.Add(1)*157) % len(names)
				var d int64
				for pb.Next() {
					ok, err := p.Allow(ctx, names[i])
					if err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
					} else if !ok {
						d++
					}
					if i++; i == len(names) {
						i = 0
					}
				}
				denied.Add(d)
			})
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d decisions failed, first: %v", n, firstErr.Load())
			}
			report(b, c, admin, before)
			checkDenied(b, denied.Load())
		})
	}
}

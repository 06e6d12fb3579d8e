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

var (
	redisKeys         = flag.Int("redis-keys", 10_000, "keys the Redis suites visit round-robin")
	redisGoroutines   = flag.String("redis-goroutines", "1,64,512", "comma-separated goroutine counts of BenchmarkRedis")
	clusterGoroutines = flag.String("cluster-goroutines", "1,64,512", "comma-separated goroutine counts of BenchmarkRedisCluster")
	cmdstats          = flag.String("cmdstats", "", "directory to write each Redis benchmark's INFO commandstats per decision into")
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// counts parses a comma-separated list of goroutine counts.
func counts(b *testing.B, list string) []int {
	b.Helper()
	var gs []int
	for _, f := range strings.Split(list, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 1 {
			b.Fatalf("goroutine count %q: want a positive integer", f)
		}
		gs = append(gs, g)
	}
	return gs
}

// target is the servers one suite measures: a client per library and
// concurrency, and one plain client per server for INFO.
type target struct {
	// newClient makes a client for g goroutines; deadlines sets
	// ContextTimeoutEnabled, as docs/redis.md recommends to a Limiter's
	// users (the ours-limiter row).
	newClient func(g int, w *wire, deadlines bool) goredis.UniversalClient
	admins    []*goredis.Client
}

func singleTarget(b *testing.B) target {
	addr := redisAddr(b)
	return target{
		newClient: func(g int, w *wire, deadlines bool) goredis.UniversalClient {
			return goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: poolSize(g), Dialer: w.dial, ContextTimeoutEnabled: deadlines})
		},
		admins: admins(b, []string{addr}),
	}
}

func clusterTarget(b *testing.B) target {
	addrs := clusterAddrs(b)
	return target{
		newClient: func(g int, w *wire, deadlines bool) goredis.UniversalClient {
			return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, PoolSize: poolSize(g), Dialer: w.dial, ContextTimeoutEnabled: deadlines})
		},
		admins: admins(b, addrs),
	}
}

// admins returns a client per address for INFO, each checked to answer.
func admins(b *testing.B, addrs []string) []*goredis.Client {
	b.Helper()
	var cs []*goredis.Client
	for _, addr := range addrs {
		c := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 1})
		b.Cleanup(func() { c.Close() })
		if err := c.Ping(context.Background()).Err(); err != nil {
			b.Fatalf("Redis at %s does not answer: %v", addr, err)
		}
		cs = append(cs, c)
	}
	return cs
}

// BenchmarkRedis measures every Redis library on one real redis-server
// (RATELIMIT_REDIS_ADDR), on both workloads, at each goroutine count.
func BenchmarkRedis(b *testing.B) {
	t := singleTarget(b)
	for _, w := range RedisWorkloads {
		for _, g := range counts(b, *redisGoroutines) {
			for _, name := range rotated(RedisNames) {
				runRedis(b, t, w, g, name)
			}
		}
	}
}

// BenchmarkRedisCluster is BenchmarkRedis's allowed workload on a Redis
// Cluster (RATELIMIT_REDIS_CLUSTER_ADDRS); Redis CPU and commands are
// summed over its masters.
func BenchmarkRedisCluster(b *testing.B) {
	t := clusterTarget(b)
	for _, g := range counts(b, *clusterGoroutines) {
		for _, name := range rotated(ClusterNames) {
			runRedis(b, t, RedisWorkloads[0], g, name)
		}
	}
}

// runRedis runs one library as the sub-benchmark work/g=G/lib=name. The
// client, the keys and the warm-up are made once and kept while the
// framework calls the timed part with growing b.N.
func runRedis(b *testing.B, t target, work Workload, g int, name string) {
	names := keyNames(*redisKeys)
	w := &wire{}
	client := t.newClient(g, w, name == "ours-limiter")
	defer client.Close()
	var p RedisPeer
	ready := false
	b.Run(fmt.Sprintf("%s/g=%d/lib=%s", work.Name, g, name), func(b *testing.B) {
		if !ready {
			var err error
			if p, err = NewRedisPeer(name, client, prefix(), work.Budget); err != nil {
				b.Fatal(err)
			}
			warmUp(b, p, work, g, names)
			ready = true
		}
		measure(b, t, w, p, work, g, names)
	})
}

// prefix returns a key prefix of its own for each benchmark, so runs on one
// server never share keys (and nothing is flushed).
func prefix() string {
	var r [6]byte
	rand.Read(r[:])
	return "rlbench:" + hex.EncodeToString(r[:]) + ":"
}

// warmUp loads the peer's scripts and opens its connections from g
// goroutines, outside the measurement. In the denied workload it takes
// every key's one token, so that every timed decision is a denial.
func warmUp(b *testing.B, p RedisPeer, work Workload, g int, names []string) {
	b.Helper()
	ctx := context.Background()
	if ok, err := p.Allow(ctx, names[0]); err != nil || !ok {
		b.Fatalf("%s: first decision allowed %v, error %v", p.Name, ok, err)
	}
	keys := names[1:]
	if work.Allowed {
		keys = keys[:min(len(keys), 2*g)]
	}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range g {
		wg.Go(func() {
			for j := i; j < len(keys); j += g {
				if ok, err := p.Allow(ctx, keys[j]); err != nil || !ok {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%s: %d warm-up decisions failed or were denied", p.Name, n)
	}
}

// measure runs b.N decisions from g goroutines, keys round-robin from
// different starting points, and reports latency quantiles, Redis CPU,
// round trips and commands per decision.
func measure(b *testing.B, t target, w *wire, p RedisPeer, work Workload, g int, names []string) {
	ctx := context.Background()
	settle()
	before, err := readStats(ctx, t.admins)
	if err != nil {
		b.Fatalf("INFO: %v", err)
	}
	w.writes.Store(0)
	var wrong, failed atomic.Int64
	var firstErr atomic.Value
	n := int64(b.N)
	all := drive(b, g, names, p.Allow, func(ok bool, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
		} else if ok != work.Allowed && p.Name != "ceiling" {
			wrong.Add(1)
		}
	})
	writes := w.writes.Load()
	after, err := readStats(ctx, t.admins)
	if err != nil {
		b.Fatalf("INFO: %v", err)
	}
	if k := failed.Load(); k > 0 {
		b.Fatalf("%d decisions failed, first: %v", k, firstErr.Load())
	}
	if k := wrong.Load(); k > 0 {
		b.Fatalf("%d of %d decisions were not %s: the library did not do the same work as the others", k, n, work.Name)
	}
	perOp := func(v float64) float64 { return v / float64(n) }
	b.ReportMetric(all.quantile(0.50).Seconds()*1e6, "p50-µs")
	b.ReportMetric(all.quantile(0.99).Seconds()*1e6, "p99-µs")
	b.ReportMetric(perOp((after.cpu-before.cpu)*1e6), "redis-cpu-µs/op")
	b.ReportMetric(perOp(float64(writes)), "roundtrips/op")
	// The reading INFO is not counted in its own reply; the one before is.
	b.ReportMetric(perOp(after.commands-before.commands-float64(len(t.admins))), "cmds/op")
	writeCmdstats(b, before, after)
}

// writeCmdstats, with -cmdstats, writes every command the servers ran per
// decision (those the scripts called included) to a file named after the
// benchmark.
func writeCmdstats(b *testing.B, before, after serverStats) {
	b.Helper()
	if *cmdstats == "" {
		return
	}
	var out strings.Builder
	names := make([]string, 0, len(after.cmds))
	for name := range after.cmds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		calls := after.cmds[name][0] - before.cmds[name][0]
		if calls <= 0 || name == "info" || connSetup[name] {
			continue
		}
		fmt.Fprintf(&out, "%s %.3f %.3f\n", name, calls/float64(b.N), (after.cmds[name][1]-before.cmds[name][1])/float64(b.N))
	}
	file := filepath.Join(*cmdstats, strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())+".txt")
	if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
		b.Error(err)
	}
}

// connSetup lists the commands go-redis sends once per new connection: no
// part of a decision.
var connSetup = map[string]bool{"hello": true, "client|setinfo": true, "auth": true, "select": true, "cluster|slots": true, "cluster|nodes": true, "cluster|shards": true}

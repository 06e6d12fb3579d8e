package benchmarks

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// BenchmarkLimiterCost sets a Limiter's Allow beside its Redis store's own
// AllowN on one real redis-server (RATELIMIT_REDIS_ADDR), at 1 and 64
// goroutines, 10,000 keys round-robin, every decision allowed: what the
// Limiter adds on top of its store, in time per decision (ns/op, the
// inverse of throughput), client CPU per decision (getrusage of the whole
// process: user + system), allocations and latency. client=ctx is the
// recommended client, ContextTimeoutEnabled: the store keeps its deadlines
// and the Limiter calls it on the request's goroutine; client=default
// ignores context deadlines on the socket, and the Limiter calls its store
// on a goroutine of its own. The Limiter has a budget of a second (so that
// a busy machine measures its cost, not its failure policy) and plain
// keys, as the ours-limiter row of BenchmarkRedis. via=store-deadline is
// the store's own AllowN with one far deadline on every call: the part of
// the difference that is the store's work for a call with a deadline
// rather than the Limiter's. Run the rows interleaved (run the binary once
// per row, or per round) and compare per round.
func BenchmarkLimiterCost(b *testing.B) {
	addr := redisAddr(b)
	names := keyNames(10_000)
	limit := ratelimit.PerSecond(1_000_000)
	for _, g := range []int{1, 64} {
		for _, row := range []struct {
			client string
			via    string
		}{{"ctx", "store"}, {"ctx", "store-deadline"}, {"ctx", "limiter"}, {"default", "limiter"}} {
			b.Run(fmt.Sprintf("g=%d/client=%s/via=%s", g, row.client, row.via), func(b *testing.B) {
				client := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: poolSize(g),
					ContextTimeoutEnabled: row.client == "ctx"})
				defer client.Close()
				store := redisstore.New(client, redisstore.WithPrefix(prefix()))
				allow := func(ctx context.Context, key string) (bool, error) {
					res, err := store.AllowN(ctx, "bench/"+key, limit, 1)
					return res.Allowed, err
				}
				if row.via == "store-deadline" {
					// One deadline, made once, far off: what the store's own
					// work costs when its calls carry a deadline (the script's
					// deadline argument, a batch's call context), without a
					// context per call.
					far, cancel := context.WithTimeout(context.Background(), time.Hour)
					defer cancel()
					allow = func(_ context.Context, key string) (bool, error) {
						res, err := store.AllowN(far, "bench/"+key, limit, 1)
						return res.Allowed, err
					}
				}
				if row.via == "limiter" {
					l, err := ratelimit.New(store, limit, ratelimit.WithName("bench"), ratelimit.WithPlainKeys(),
						ratelimit.WithTimeout(time.Second))
					if err != nil {
						b.Fatal(err)
					}
					allow = func(ctx context.Context, key string) (bool, error) {
						res, err := l.Allow(ctx, key)
						return res.Allowed, err
					}
				}
				costRun(b, g, names, allow)
			})
		}
	}
}

// costRun warms allow up, then makes b.N decisions from g goroutines and
// reports client CPU and latency per decision.
func costRun(b *testing.B, g int, names []string, allow func(context.Context, string) (bool, error)) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range g { // open the pool's connections, load the script
		wg.Go(func() { allow(ctx, names[i]) })
	}
	wg.Wait()
	var failed atomic.Int64
	n := int64(b.N)
	settle()
	cpu := processCPU()
	all := drive(b, g, names, allow, func(ok bool, err error) {
		if err != nil || !ok {
			failed.Add(1)
		}
	})
	cpu = processCPU() - cpu
	if k := failed.Load(); k > 0 {
		b.Fatalf("%d of %d decisions failed or were denied", k, n)
	}
	b.ReportMetric(cpu.Seconds()*1e6/float64(n), "client-cpu-µs/op")
	b.ReportMetric(all.quantile(0.50).Seconds()*1e6, "p50-µs")
	b.ReportMetric(all.quantile(0.99).Seconds()*1e6, "p99-µs")
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestStoreKeepsDeadlinesWithContextTimeouts: the Redis store says it keeps
// its deadlines, and a Limiter calls it on the request's goroutine, only
// over a client that puts context deadlines on its socket.
func TestStoreKeepsDeadlinesWithContextTimeouts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		client goredis.UniversalClient
		want   bool
	}{
		{"a client with ContextTimeoutEnabled", goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}), true},
		{"a client without", goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}), false},
		{"a Cluster client with ContextTimeoutEnabled", goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true}), true},
		{"a Cluster client without", goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), false},
		{"a Ring with ContextTimeoutEnabled", goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}, ContextTimeoutEnabled: true}), true},
		{"a Ring without", goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer tt.client.Close()
			if got := redisstore.New(tt.client).KeepsDeadlines(); got != tt.want {
				t.Fatalf("KeepsDeadlines() = %v, want %v", got, tt.want)
			}
		})
	}
}

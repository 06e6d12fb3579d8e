package redisstore_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// BenchmarkCluster is AllowN from 64 goroutines on the real Cluster
// (RATELIMIT_REDIS_CLUSTER_ADDRS), batched (the default: per slot) and not,
// on 10,000 keys (spread over the slots: batches rarely form) and on one
// hot key (one slot: they do), with the masters' CPU (INFO cpu, networking
// included) and script calls per decision.
func BenchmarkCluster(b *testing.B) {
	addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		b.Skip("set RATELIMIT_REDIS_CLUSTER_ADDRS to benchmark a real Redis Cluster")
	}
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ","), PoolSize: 64})
	b.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("RATELIMIT_REDIS_CLUSTER_ADDRS does not answer: %v", err)
	}
	ctx := context.Background()
	keys := benchKeyNames()
	l := ratelimit.Limit{Rate: 1_000_000_000, Period: time.Second}
	for _, batching := range []bool{false, true} {
		opts := []redisstore.Option{redisstore.WithPrefix("bench-cluster:")}
		name := "batched"
		if !batching {
			opts = append(opts, redisstore.WithoutBatching())
			name = "unbatched"
		}
		s := redisstore.New(c, opts...)
		for _, spread := range []int{benchKeys, 1} {
			b.Run(name+"/keys="+strconv.Itoa(spread), func(b *testing.B) {
				s.AllowN(ctx, keys[0], l, 1) // loads the scripts
				cpu0, calls0 := clusterStats(b, c)
				var next atomic.Int64
				b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := s.AllowN(ctx, keys[next.Add(1)%int64(spread)], l, 1); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				cpu1, calls1 := clusterStats(b, c)
				b.ReportMetric((cpu1-cpu0)*1e6/float64(b.N), "redis-cpu-µs/op")
				b.ReportMetric((calls1-calls0)/float64(b.N), "scripts/op")
			})
		}
	}
}

// clusterStats sums the masters' CPU seconds and script calls.
func clusterStats(b *testing.B, c *goredis.ClusterClient) (cpu, scripts float64) {
	var mu sync.Mutex
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, m *goredis.Client) error {
		info, err := m.Info(ctx, "cpu", "commandstats").Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, line := range strings.Split(info, "\n") {
			line = strings.TrimSpace(line)
			if k, v, ok := strings.Cut(line, ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
				f, _ := strconv.ParseFloat(v, 64)
				cpu += f
			}
			for _, cmd := range []string{"cmdstat_evalsha:", "cmdstat_eval:"} {
				if rest, ok := strings.CutPrefix(line, cmd); ok {
					calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
					f, _ := strconv.ParseFloat(calls, 64)
					scripts += f
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return cpu, scripts
}

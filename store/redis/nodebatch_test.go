package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// Per-master group commit on Redis Cluster (cluster.go): exact under load,
// batched across slots, and at most once through a master killed and
// restarted and a slot migrated under load.

// clusterAddrs returns the Cluster the environment names, or skips.
func clusterAddrs(t *testing.T) []string {
	t.Helper()
	addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("set RATELIMIT_REDIS_CLUSTER_ADDRS to run against a real Redis Cluster (.ci/run does)")
	}
	return strings.Split(addrs, ",")
}

// nodeCalls counts the node script's calls (script calls with no declared
// key), which go to the masters' own clients.
func nodeCalls(cc *goredis.ClusterClient) *scriptCounter {
	c := &scriptCounter{only: func(cmd goredis.Cmder) bool {
		args := cmd.Args()
		return len(args) > 2 && fmt.Sprint(args[2]) == "0"
	}}
	cc.OnNewNode(func(n *goredis.Client) { n.AddHook(c) })
	return c
}

// hammer decides, from g goroutines, rounds takes of 1 on each of keys (each
// goroutine starting at its own place), and returns how many each key was
// allowed, the errors, and the longest a decision took. Each decision has
// its own budget of budget; during, if set, runs after each decision.
func hammer(s *redisstore.Store, keys []string, l ratelimit.Limit, g, rounds int, budget time.Duration, during func(done int64)) (map[string]int, []error, time.Duration) {
	var mu sync.Mutex
	allowed := map[string]int{}
	var errs []error
	var worst time.Duration
	var done atomic.Int64
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for j := range rounds * len(keys) / g {
				k := keys[(w+j*g)%len(keys)]
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), budget)
				res, err := s.AllowN(ctx, k, l, 1)
				cancel()
				took := time.Since(start)
				mu.Lock()
				worst = max(worst, took)
				if err != nil {
					errs = append(errs, err)
				} else if res.Allowed {
					allowed[k]++
				}
				mu.Unlock()
				if during != nil {
					during(done.Add(1))
				}
			}
		})
	}
	wg.Wait()
	return allowed, errs, worst
}

func spreadKeys(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/client-%d", prefix, i)
	}
	return keys
}

// TestClusterBatchesPerMasterExactly: 256 goroutines over 3,000 keys on the
// Cluster admit exactly each key's budget, and their batches go to the
// masters as node-script calls (fewer calls than decisions).
func TestClusterBatchesPerMasterExactly(t *testing.T) {
	addrs := clusterAddrs(t)
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, PoolSize: 64})
	t.Cleanup(func() { cc.Close() })
	node := nodeCalls(cc)
	routed := &scriptCounter{}
	cc.AddHook(routed)
	s := redisstore.New(cc, redisstore.WithPrefix(prefix(t)))
	keys := spreadKeys("exact", 3000)
	const budget = 5
	allowed, errs, _ := hammer(s, keys, ratelimit.PerHour(budget), 256, 8, 10*time.Second, nil)
	if len(errs) > 0 {
		t.Fatalf("%d errors, the first: %v", len(errs), errs[0])
	}
	for _, k := range keys {
		if allowed[k] != budget {
			t.Errorf("%s: %d allowed, want exactly %d", k, allowed[k], budget)
		}
	}
	decisions := int64(8 * len(keys))
	calls := routed.calls.Load() + node.calls.Load() // the cluster client's hooks do not see the node script's
	t.Logf("%d decisions in %d script calls (%d node-script batches)", decisions, calls, node.calls.Load())
	if node.calls.Load() == 0 || calls >= decisions {
		t.Errorf("%d node-script calls, %d in all for %d decisions: want batches across slots", node.calls.Load(), calls, decisions)
	}
}

// TestClusterPerSlotBatchesExactly is the same with WithPerSlotBatches, the
// fallback for servers that refuse the node script: per-slot pipelines.
func TestClusterPerSlotBatchesExactly(t *testing.T) {
	addrs := clusterAddrs(t)
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, PoolSize: 64})
	t.Cleanup(func() { cc.Close() })
	node := nodeCalls(cc)
	s := redisstore.New(cc, redisstore.WithPrefix(prefix(t)), redisstore.WithPerSlotBatches())
	keys := spreadKeys("slots", 3000)
	allowed, errs, _ := hammer(s, keys, ratelimit.PerHour(3), 256, 5, 10*time.Second, nil)
	if len(errs) > 0 {
		t.Fatalf("%d errors, the first: %v", len(errs), errs[0])
	}
	for _, k := range keys {
		if allowed[k] != 3 {
			t.Errorf("%s: %d allowed, want exactly 3", k, allowed[k])
		}
	}
	if n := node.calls.Load(); n != 0 {
		t.Errorf("%d node-script calls with WithPerSlotBatches, want none", n)
	}
}

// TestClusterLoneDecisionsGoAlone: one decision at a time on the Cluster
// is one script call each, routed by its key, never a node-script batch.
func TestClusterLoneDecisionsGoAlone(t *testing.T) {
	addrs := clusterAddrs(t)
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { cc.Close() })
	node := nodeCalls(cc)
	routed := &scriptCounter{}
	cc.AddHook(routed)
	s := redisstore.New(cc, redisstore.WithPrefix(prefix(t)))
	if _, err := s.AllowN(context.Background(), "warm/up", ratelimit.PerHour(1), 1); err != nil {
		t.Fatal(err) // loads the scripts: NOSCRIPT and EVAL are not counted below
	}
	node.calls.Store(0)
	routed.calls.Store(0)
	keys := spreadKeys("lone", 200)
	allowed, errs, _ := hammer(s, keys, ratelimit.PerHour(1), 1, 1, 10*time.Second, nil)
	if len(errs) > 0 || len(allowed) != len(keys) {
		t.Fatalf("%d keys allowed, errors %v; want all %d", len(allowed), errs, len(keys))
	}
	if n, r := node.calls.Load(), routed.calls.Load(); n != 0 || r != int64(len(keys)) {
		t.Errorf("%d node-script calls and %d routed calls for %d lone decisions; want 0 and %d", n, r, len(keys), len(keys))
	}
}

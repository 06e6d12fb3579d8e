package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

func TestRedisFlag(t *testing.T) {
	for _, tt := range []struct {
		flag   string
		addrs  string // comma-separated
		master string
		db     int
		read   time.Duration
		what   string
	}{
		{"localhost:6379", "localhost:6379", "", 0, 100 * time.Millisecond, "Redis (localhost:6379)"},
		{"h1:7000,h2:7000,h3:7000", "h1:7000,h2:7000,h3:7000", "", 0, 100 * time.Millisecond, "Redis Cluster (h1:7000,h2:7000,h3:7000)"},
		{"[::1]:6379", "[::1]:6379", "", 0, 100 * time.Millisecond, "Redis ([::1]:6379)"},
		{"redis://user:pw@host:6380/2", "host:6380", "", 2, 100 * time.Millisecond, "Redis (host:6380)"},
		{"redis://host:6380?read_timeout=50ms", "host:6380", "", 0, 50 * time.Millisecond, "Redis (host:6380)"},
		{"redis://h1:7000?addr=h2:7000&addr=h3:7000", "h1:7000,h2:7000,h3:7000", "", 0, 100 * time.Millisecond, "Redis Cluster (h1:7000,h2:7000,h3:7000)"},
		{"redis://s1:26379?master_name=mymaster&addr=s2:26379", "s1:26379,s2:26379", "mymaster", 0, 100 * time.Millisecond, "Redis Sentinel (master mymaster via s1:26379,s2:26379)"},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			o, err := redisOptions(tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(o.Addrs, ","); got != tt.addrs || o.MasterName != tt.master || o.DB != tt.db {
				t.Errorf("addrs %q, master %q, db %d; want %q, %q, %d", got, o.MasterName, o.DB, tt.addrs, tt.master, tt.db)
			}
			if o.DialerRetries != 1 {
				t.Errorf("%d dial attempts, want 1: a refused connection must fail within the budget, and read as refused", o.DialerRetries)
			}
			if o.MinIdleConns == 0 {
				t.Error("no idle connections kept: the first burst would wait for dials")
			}
			if o.ReadTimeout != tt.read || o.PoolTimeout == 0 || o.DialTimeout == 0 || !o.ContextTimeoutEnabled {
				t.Errorf("read timeout %v (want %v), pool %v, dial %v, context deadlines %v", o.ReadTimeout, tt.read, o.PoolTimeout, o.DialTimeout, o.ContextTimeoutEnabled)
			}
			if got := describeRedis(o); got != tt.what {
				t.Errorf("described as %q, want %q", got, tt.what)
			}
		})
	}
}

// TestRedisFlagKeepsAURLsIdleConns: min_idle_conns in a URL is the user's.
func TestRedisFlagKeepsAURLsIdleConns(t *testing.T) {
	for _, flag := range []string{"redis://host:6379?min_idle_conns=2", "redis://h1:7000?addr=h2:7000&min_idle_conns=2", "redis://s1:26379?master_name=m&min_idle_conns=2"} {
		if o, err := redisOptions(flag); err != nil || o.MinIdleConns != 2 {
			t.Errorf("-redis %s: %v idle connections (%v), want 2, as the URL says", flag, o.MinIdleConns, err)
		}
	}
}

// TestWarmRedisDialsBeforeTheFirstRequest: after warmRedis the client
// holds a connection to each master (the node, outside a Cluster) before
// any request; a Redis that refuses connections delays the start by a
// dial, not more.
func TestWarmRedisDialsBeforeTheFirstRequest(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"RATELIMIT_REDIS_ADDR", "node"},
		{"RATELIMIT_REDIS_CLUSTER_ADDRS", "cluster"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			addrs := os.Getenv(tt.env)
			if addrs == "" {
				t.Skip("set " + tt.env + " to reach a real server (.ci/run does)")
			}
			o, err := redisOptions(addrs)
			if err != nil {
				t.Fatal(err)
			}
			o.MinIdleConns = 0 // the connections counted are warmRedis's alone
			c := goredis.NewUniversalClient(o)
			defer c.Close()
			masters := 1
			if cc, ok := c.(*goredis.ClusterClient); ok {
				seen := map[string]bool{}
				for _, r := range cc.ClusterSlots(context.Background()).Val() {
					seen[r.Nodes[0].Addr] = true
				}
				masters = len(seen)
				cc.Close()
				c = goredis.NewUniversalClient(o)
			}
			warmRedis(c)
			if got := int(poolStats(c).TotalConns); got < masters {
				t.Errorf("%d connections after warmRedis, want one to each of %d masters", got, masters)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		o, err := redisOptions("127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		c := goredis.NewUniversalClient(o)
		defer c.Close()
		start := time.Now()
		warmRedis(c)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("warmRedis of a refusing address took %v, want at most its second", d)
		}
	})
}

// poolStats is c's pool statistics, summed over a Cluster's nodes.
func poolStats(c goredis.UniversalClient) *goredis.PoolStats {
	switch c := c.(type) {
	case *goredis.ClusterClient:
		return c.PoolStats()
	case *goredis.Client:
		return c.PoolStats()
	}
	return &goredis.PoolStats{}
}

func TestRedisFlagRefusesBadAddresses(t *testing.T) {
	for _, flag := range []string{"localhost", "h1:7000,,h2:7000", "h1:7000,h2", "redis://[::1", "redis://h:1?bogus=1", "ftp://h:1", "h1:"} {
		if o, err := redisOptions(flag); err == nil {
			t.Errorf("-redis %q: %+v, want an error", flag, o)
		}
	}
}

// TestRedisFlagReachesCluster serves a request through the example with
// -redis naming the real Cluster of the environment, when it names one.
func TestRedisFlagReachesCluster(t *testing.T) {
	addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("set RATELIMIT_REDIS_CLUSTER_ADDRS to reach a real Cluster (.ci/run does)")
	}
	store, what, err := newStore(addrs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(what, "Redis Cluster") {
		t.Fatalf("-redis %s made %s, want a Cluster", addrs, what)
	}
	s, err := app(config{store: store, keySecret: []byte(demoKeySecret)})
	if err != nil {
		t.Fatal(err)
	}
	// A pair of requests from a client address of its own, so that the
	// budget starts full. A request the store did not decide within the
	// example's 100 ms budget (the first loads the script; a busy machine)
	// fails open without headers: the pair is tried again, from another
	// address, up to 5 times.
	var remaining []string
	for try := range 5 {
		client := fmt.Sprintf("198.51.100.%d:1234", (time.Now().UnixNano()+int64(try))%250+1)
		remaining = remaining[:0]
		for range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
			r.RemoteAddr = client
			w := httptest.NewRecorder()
			s.handler.ServeHTTP(w, r)
			cancel()
			if w.Code != http.StatusOK {
				t.Fatalf("GET / through the Cluster: %d", w.Code)
			}
			remaining = append(remaining, w.Header().Get("X-RateLimit-Remaining"))
		}
		if remaining[0] != "" && remaining[1] != "" {
			break
		}
	}
	t.Logf("X-RateLimit-Remaining through the Cluster: %s, then %s", remaining[0], remaining[1])
	// The same budget, in the Cluster: the second request sees the first.
	if remaining[0] == "" || remaining[0] == remaining[1] {
		t.Fatalf("X-RateLimit-Remaining %q then %q; want the Cluster's budget counting down", remaining[0], remaining[1])
	}
}

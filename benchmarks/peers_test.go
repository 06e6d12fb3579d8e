package benchmarks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The suites are only fair if every library really limits under the
// budget it is given: these tests give each a budget of 3 per hour and
// check that the 4th request of a key is denied while another key passes.
var tiny = Budget{Rate: 3, Period: time.Hour}

func TestPeersLimitAtTheBudget(t *testing.T) {
	for _, name := range PeerNames {
		t.Run(name, func(t *testing.T) {
			p, err := NewPeer(name, tiny)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for i := range 3 {
				if !p.Allow("a") {
					t.Fatalf("request %d of 3 was denied", i+1)
				}
			}
			if p.Allow("a") {
				t.Error("the 4th request passed")
			}
			if !p.Allow("b") {
				t.Error("another key was denied")
			}
		})
	}
}

func TestXTimeRateLimitsAtTheBudget(t *testing.T) {
	p := XTimeRate(tiny)
	for range 3 {
		p.Allow("")
	}
	if p.Allow("") {
		t.Error("the 4th request passed")
	}
}

// checkHTTP sends four requests from one address and one from another.
func checkHTTP(t *testing.T, h http.Handler, closeFn func(), limited bool) {
	t.Helper()
	defer closeFn()
	for i := range 4 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		want := http.StatusOK
		if limited && i == 3 {
			want = http.StatusTooManyRequests
		}
		if w.Code != want {
			t.Fatalf("request %d: status %d, want %d", i+1, w.Code, want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "198.51.100.7:4321"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Errorf("another client: status %d, want 200", w.Code)
	}
}

func TestMiddlewaresLimitAtTheBudget(t *testing.T) {
	for _, name := range HTTPNames {
		t.Run("net/http/"+name, func(t *testing.T) {
			h, closeFn, err := NewHTTP(name, tiny, Noop)
			if err != nil {
				t.Fatal(err)
			}
			checkHTTP(t, h, closeFn, name != "bare")
		})
	}
	for _, name := range GinNames {
		t.Run("gin/"+name, func(t *testing.T) {
			h, closeFn, err := NewGin(name, tiny)
			if err != nil {
				t.Fatal(err)
			}
			checkHTTP(t, h, closeFn, name != "bare")
		})
	}
	for _, name := range EchoNames {
		t.Run("echo/"+name, func(t *testing.T) {
			h, closeFn, err := NewEcho(name, tiny)
			if err != nil {
				t.Fatal(err)
			}
			checkHTTP(t, h, closeFn, name != "bare")
		})
	}
}

// TestRedisPeersLimitAtTheBudget also fails when RATELIMIT_REDIS_ADDR
// names a server that does not answer.
func TestRedisPeersLimitAtTheBudget(t *testing.T) {
	addr := redisAddr(t)
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	defer client.Close()
	checkRedisPeers(t, client, RedisNames)
}

// TestClusterPeersLimitAtTheBudget is the same on a Redis Cluster
// (RATELIMIT_REDIS_CLUSTER_ADDRS), for the Cluster suite's peers.
func TestClusterPeersLimitAtTheBudget(t *testing.T) {
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: clusterAddrs(t)})
	defer client.Close()
	checkRedisPeers(t, client, ClusterNames)
}

func checkRedisPeers(t *testing.T, client goredis.UniversalClient, names []string) {
	t.Helper()
	ctx := context.Background()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis does not answer: %v", err)
	}
	for _, name := range names {
		if name == "ceiling" {
			continue // it admits everything by design
		}
		t.Run(name, func(t *testing.T) {
			p, err := NewRedisPeer(name, client, "rltest:"+time.Now().Format("150405.000000")+":", tiny)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				ok, err := p.Allow(ctx, "a")
				if err != nil {
					t.Fatal(err)
				}
				if ok != (i < 3) {
					t.Fatalf("request %d: allowed %v", i+1, ok)
				}
			}
			if ok, err := p.Allow(ctx, "b"); err != nil || !ok {
				t.Errorf("another key: allowed %v, error %v", ok, err)
			}
		})
	}
}

// TestRedisWorkloads checks the denied workload on every peer: after one
// decision per key, every decision is a denial.
func TestRedisWorkloads(t *testing.T) {
	addr := redisAddr(t)
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	defer client.Close()
	ctx := context.Background()
	denied := RedisWorkloads[1]
	for _, name := range RedisNames[1:] {
		t.Run(name, func(t *testing.T) {
			p, err := NewRedisPeer(name, client, "rltest:"+time.Now().Format("150405.000000")+":", denied.Budget)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				ok, err := p.Allow(ctx, "a")
				if err != nil {
					t.Fatal(err)
				}
				if ok != (i == 0) {
					t.Fatalf("decision %d: allowed %v", i+1, ok)
				}
			}
		})
	}
}

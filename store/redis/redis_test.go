package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// server is a Redis to test against: miniredis, or a real one named by
// RATELIMIT_REDIS_ADDR or RATELIMIT_REDIS_CLUSTER_ADDRS.
type server struct {
	name   string
	client func(t *testing.T) goredis.UniversalClient
}

// realServers returns the real servers the environment names. A named
// server that does not answer fails the test: it is never skipped.
func realServers(t *testing.T) []server {
	t.Helper()
	var out []server
	if addr := os.Getenv("RATELIMIT_REDIS_ADDR"); addr != "" {
		out = append(out, server{name: "redis-server", client: func(t *testing.T) goredis.UniversalClient {
			return reachable(t, goredis.NewClient(&goredis.Options{Addr: addr}))
		}})
	}
	if addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS"); addrs != "" {
		out = append(out, server{name: "redis-cluster", client: func(t *testing.T) goredis.UniversalClient {
			return reachable(t, goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ",")}))
		}})
	}
	return out
}

func reachable(t *testing.T, c goredis.UniversalClient) goredis.UniversalClient {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("the Redis named in the environment does not answer: %v", err)
	}
	if cc, ok := c.(*goredis.ClusterClient); ok {
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() }); err != nil {
			t.Fatalf("a cluster master does not answer: %v", err)
		}
	}
	return c
}

func requireReal(t *testing.T) []server {
	t.Helper()
	s := realServers(t)
	if len(s) == 0 {
		t.Skip("set RATELIMIT_REDIS_ADDR or RATELIMIT_REDIS_CLUSTER_ADDRS to run against a real Redis (.ci/run does)")
	}
	return s
}

// prefix is a key prefix no other test run uses.
func prefix(t *testing.T) string {
	b := make([]byte, 6)
	rand.Read(b)
	return "test:" + hex.EncodeToString(b) + ":"
}

func newMini(t *testing.T) (*miniredis.Miniredis, goredis.UniversalClient) {
	mr := miniredis.RunT(t)
	c := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { c.Close() })
	return mr, c
}

// appClock is a settable clock for WithAppClock.
type appClock struct{ ns atomic.Int64 }

func (c *appClock) Now() time.Time  { return time.Unix(0, c.ns.Load()) }
func (c *appClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

func TestConformanceMiniredis(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) ratelimit.Store {
		_, c := newMini(t)
		return redisstore.New(c)
	})
}

// TestConformanceMiniredisWithClock replays 3 random timelines per exact
// comparison instead of 10 (1 without RATELIMIT_SLOW_TESTS): miniredis
// interprets Lua in the test process, slowly under the race detector; the
// real servers replay all 10.
func TestConformanceMiniredisWithClock(t *testing.T) {
	t.Parallel()
	storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
		mr, c := newMini(t)
		return redisstore.New(c), mr.SetTime
	}, timelines(3))
}

func TestConformanceRealRedis(t *testing.T) {
	t.Parallel()
	for _, srv := range requireReal(t) {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) ratelimit.Store {
				return redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			})
		})
	}
}

// TestConformanceRealRedisWithAppClock runs the exact, clock-controlled
// suite on the real servers through the app-clock option.
func TestConformanceRealRedisWithAppClock(t *testing.T) {
	t.Parallel()
	for _, srv := range requireReal(t) {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
				c := &appClock{}
				return redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)), redisstore.WithAppClock(c.Now), redisstore.WithAppClockSlack(time.Minute)), c.Set
			}, storetest.NeverRewinds())
		})
	}
}

// servers is miniredis plus the real servers of the environment.
func servers(t *testing.T) []server {
	mini := server{name: "miniredis", client: func(t *testing.T) goredis.UniversalClient {
		_, c := newMini(t)
		return c
	}}
	return append([]server{mini}, realServers(t)...)
}

func TestScriptFlushIsHarmless(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			ctx, l := context.Background(), ratelimit.PerHour(3)
			for want := 2; want >= 0; want-- {
				res, err := s.AllowN(ctx, "k", l, 1)
				if err != nil || !res.Allowed || res.Remaining != want {
					t.Fatalf("call %d: %+v, %v; want allowed, remaining %d", 3-want, res, err, want)
				}
				flushScripts(t, c)
			}
			if res, err := s.AllowN(ctx, "k", l, 1); err != nil || res.Allowed {
				t.Fatalf("fourth call after SCRIPT FLUSH: %+v, %v; want denied", res, err)
			}
		})
	}
}

func flushScripts(t *testing.T, c goredis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	var err error
	if cc, ok := c.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.ScriptFlush(ctx).Err() })
	} else {
		err = c.ScriptFlush(ctx).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestKeyExpiresWhenFull(t *testing.T) {
	mr, c := newMini(t)
	s := redisstore.New(c)
	l := ratelimit.PerSecond(10).WithBurst(5) // full again 100 ms after one token
	if _, err := s.AllowN(context.Background(), "k", l, 1); err != nil {
		t.Fatal(err)
	}
	key := s.Key("k", ratelimit.TokenBucket)
	ttl := mr.TTL(key)
	if ttl < 100*time.Millisecond || ttl > 102*time.Millisecond {
		t.Fatalf("TTL = %v, want the time until full, 100ms, plus at most 2ms", ttl)
	}
	if !mr.Exists(key) || len(mr.Keys()) != 1 {
		t.Fatalf("keys = %v, want exactly one", mr.Keys())
	}
	mr.FastForward(ttl)
	if mr.Exists(key) {
		t.Fatal("key still there once its bucket is full")
	}
}

func TestDenyAndReportWriteNothing(t *testing.T) {
	mr, c := newMini(t)
	s := redisstore.New(c)
	ctx, l := context.Background(), ratelimit.PerHour(1)
	s.AllowN(ctx, "new", l, 0)
	if len(mr.Keys()) != 0 {
		t.Fatalf("n = 0 on a new key created %v", mr.Keys())
	}
	s.AllowN(ctx, "k", l, 1)
	key := s.Key("k", ratelimit.TokenBucket)
	before, _ := mr.Get(key)
	mr.SetTime(time.Now().Add(time.Second))
	if res, _ := s.AllowN(ctx, "k", l, 1); res.Allowed {
		t.Fatal("second call allowed at 1/h")
	}
	if after, _ := mr.Get(key); after != before {
		t.Fatalf("a denied call rewrote the state: %s -> %s", before, after)
	}
}

func TestUnreachableRedisFailsWithinDeadline(t *testing.T) {
	mr, c := newMini(t)
	mr.Close() // nothing listens there any more
	s := redisstore.New(c)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.AllowN(ctx, "k", ratelimit.PerSecond(1), 1)
	if err == nil {
		t.Fatal("AllowN against a closed server returned no error")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("AllowN took %v to fail, past the 300ms deadline", took)
	}
}

func TestNilClientIsAnError(t *testing.T) {
	// New refuses a nil client at start-up: a store that failed every call
	// would fail open forever.
	for name, client := range map[string]goredis.UniversalClient{
		"nil":                nil,
		"nil *Client":        (*goredis.Client)(nil),
		"nil *ClusterClient": (*goredis.ClusterClient)(nil),
		"nil *Ring":          (*goredis.Ring)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			redisstore.New(client)
		})
	}
	// A zero Store, which New did not make, fails each call.
	_, err := new(redisstore.Store).AllowN(context.Background(), "k", ratelimit.PerSecond(1), 1)
	if !errors.Is(err, redisstore.ErrNilClient) {
		t.Fatalf("error = %v, want ErrNilClient", err)
	}
}

func TestPrefix(t *testing.T) {
	mr, c := newMini(t)
	s := redisstore.New(c, redisstore.WithPrefix("app1:"))
	s.AllowN(context.Background(), "user:7", ratelimit.PerSecond(1), 1)
	if key := s.Key("user:7", ratelimit.TokenBucket); !strings.HasPrefix(key, "app1:tb:{") || !strings.HasSuffix(key, "}user:7") || !mr.Exists(key) {
		t.Fatalf("keys = %v, want %s: prefix, algorithm, hash tag, key", mr.Keys(), key)
	}
}

func TestClusterSpreadsKeysOverEveryMaster(t *testing.T) {
	addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("set RATELIMIT_REDIS_CLUSTER_ADDRS to run against a real Redis Cluster (.ci/run does)")
	}
	cc := reachable(t, goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ",")})).(*goredis.ClusterClient)
	p := prefix(t)
	s := redisstore.New(cc, redisstore.WithPrefix(p))
	ctx, l := context.Background(), ratelimit.PerHour(3)
	for i := range 60 {
		key := "client-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		for want := range 5 {
			res, err := s.AllowN(ctx, key, l, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Allowed != (want < 3) {
				t.Fatalf("key %s call %d: allowed %v, want exactly 3 of 5", key, want+1, res.Allowed)
			}
		}
	}
	var masters atomic.Int32 // ForEachMaster calls back concurrently
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		keys, err := m.Keys(ctx, p+"*").Result()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return errors.New(m.Options().Addr + " holds none of the keys")
		}
		masters.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := masters.Load(); n < 3 {
		t.Fatalf("cluster has %d masters, want 3", n)
	}
}

// TestConformanceRing: a goredis.Ring over two servers, each key on one of
// them, passes the suite too; the scripts' arithmetic is what the other
// runs replay at length, so one timeline per comparison covers the routing.
// The whole suite a third time takes a third of the package's run: it runs
// with RATELIMIT_SLOW_TESTS; by default the Ring is covered by
// TestAllowAllAcrossSlots.
func TestConformanceRing(t *testing.T) {
	if !slowTests() {
		t.Skip("the suite again, on a Ring of two miniredis: set RATELIMIT_SLOW_TESTS=1 to run it (.ci/run does)")
	}
	t.Parallel()
	storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
		a, b := miniredis.RunT(t), miniredis.RunT(t)
		ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}})
		t.Cleanup(func() { ring.Close() })
		return redisstore.New(ring), func(now time.Time) { a.SetTime(now); b.SetTime(now) }
	}, storetest.Timelines(1))
}

// TestClientBracesDoNotChooseTheSlot: keys made from request data keep the
// client's braces, but the store's own hash tag comes first, so 64 API keys
// "{hot}0".."{hot}63" spread over the cluster instead of landing on one slot.
func TestClientBracesDoNotChooseTheSlot(t *testing.T) {
	_, c := newMini(t)
	s := redisstore.New(c)
	tags := map[string]bool{}
	for i := range 64 {
		key := s.Key(fmt.Sprintf("x-api-key:{hot}%d", i), ratelimit.TokenBucket)
		open, close := strings.IndexByte(key, '{'), strings.IndexByte(key, '}')
		if open < 0 || close != open+9 || strings.Contains(key[:open], "hot") {
			t.Fatalf("key %q: want the store's 8-digit hash tag before the client's braces", key)
		}
		tags[key[open:close+1]] = true
	}
	if len(tags) < 60 {
		t.Fatalf("64 client keys share %d hash tags, want them spread", len(tags))
	}
	addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		return // the slots themselves are checked on a real cluster
	}
	cc := reachable(t, goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ",")})).(*goredis.ClusterClient)
	s = redisstore.New(cc, redisstore.WithPrefix(prefix(t)))
	slots := map[int64]bool{}
	for i := range 64 {
		key := fmt.Sprintf("x-api-key:{hot}%d", i)
		if _, err := s.AllowN(context.Background(), key, ratelimit.PerHour(3), 1); err != nil {
			t.Fatal(err)
		}
		slot, err := cc.ClusterKeySlot(context.Background(), s.Key(key, ratelimit.TokenBucket)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) < 60 {
		t.Fatalf("64 client keys landed on %d slots of the real cluster, want them spread", len(slots))
	}
}

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// clientTakes are two limits of one client, named as the core limiter
// names them.
func clientTakes(client string) []ratelimit.Take {
	return []ratelimit.Take{
		{Key: "api/" + client, Limit: ratelimit.PerMinute(10), N: 1},
		{Key: "api#hourly/" + client, Limit: ratelimit.PerHour(3).WithAlgorithm(ratelimit.SlidingLog), N: 1},
	}
}

func TestKeyTagComesFromTheKeyAfterItsNamespace(t *testing.T) {
	// Key needs no server: a client that never dials will do.
	s := redisstore.New(goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}))
	tag := func(key string, a ratelimit.Algorithm) string {
		k := s.Key(key, a)
		return k[strings.IndexByte(k, '{') : strings.IndexByte(k, '}')+1]
	}
	want := tag("ip:192.0.2.1", ratelimit.TokenBucket)
	for _, key := range []string{"api/ip:192.0.2.1", "api#hourly/ip:192.0.2.1", "a/ip:192.0.2.1"} {
		for _, a := range algorithms {
			if got := tag(key, a); got != want {
				t.Errorf("Key(%q, %v) has tag %s, want %s, the tag of the part after the namespace", key, a, got, want)
			}
		}
	}
	if tag("api/ip:192.0.2.1", ratelimit.TokenBucket) == tag("api/ip:192.0.2.2", ratelimit.TokenBucket) {
		t.Error("two clients of one namespace share a tag")
	}
	if k := s.Key("api/x/y", ratelimit.TokenBucket); !strings.HasSuffix(k, "}api/x/y") || tag("api/x/y", 0) != tag("other/x/y", 0) {
		t.Errorf("Key(api/x/y) = %q: want the whole key after the tag, tagged from what follows the first '/'", k)
	}
}

// TestAllowAllIsOneRoundTrip counts the commands AllowAll sends: exactly one
// per decision, with two to four limits of mixed algorithms.
func TestAllowAllIsOneRoundTrip(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			hook := &countingHook{}
			c.AddHook(hook)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			ctx := context.Background()
			decide := func() {
				for i := range 50 {
					takes := clientTakes(fmt.Sprint("client-", i%5))
					for j := range i % 3 {
						takes = append(takes, ratelimit.Take{Key: fmt.Sprint("extra", j, "/client-", i%5), Limit: ratelimit.Limit{Rate: 5, Period: time.Minute, Algorithm: algorithms[(i+j)%4]}, N: 1})
					}
					if err := s.AllowAll(ctx, takes, make([]ratelimit.Result, len(takes))); err != nil {
						t.Fatal(err)
					}
				}
			}
			decide() // loads the script on every node the keys live on
			before := hook.n.Load()
			decide()
			if got := hook.n.Load() - before; got != 50 {
				t.Errorf("50 AllowAll decisions sent %d commands, want 50", got)
			}
		})
	}
}

// TestAllowAllAcrossSlots: on a sharded client, keys with different hash
// tags are refused with ErrCrossSlot before any command is sent, and
// ratelimit.AllowAll then decides them one by one; on a single node any
// keys go in one script.
func TestAllowAllAcrossSlots(t *testing.T) {
	type client struct {
		name    string
		c       goredis.UniversalClient
		sharded bool
	}
	_, single := newMini(t)
	a, b := miniredis.RunT(t), miniredis.RunT(t)
	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}})
	t.Cleanup(func() { ring.Close() })
	clients := []client{{"single node", single, false}, {"ring", ring, true}}
	if addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS"); addrs != "" {
		cc := reachable(t, goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ",")}))
		clients = append(clients, client{"redis-cluster", cc, true})
	}
	if addr := os.Getenv("RATELIMIT_REDIS_ADDR"); addr != "" {
		clients = append(clients, client{"redis-server", reachable(t, goredis.NewClient(&goredis.Options{Addr: addr})), false})
	}
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			hook := &countingHook{}
			cl.c.AddHook(hook)
			s := redisstore.New(cl.c, redisstore.WithPrefix(prefix(t)))
			ctx := context.Background()
			takes := []ratelimit.Take{
				{Key: "a/client-1", Limit: ratelimit.PerHour(2), N: 1},
				{Key: "b/client-2", Limit: ratelimit.PerHour(1), N: 1},
			}
			results := make([]ratelimit.Result, 2)
			before := hook.n.Load()
			err := s.AllowAll(ctx, takes, results)
			if cl.sharded {
				if !errors.Is(err, ratelimit.ErrCrossSlot) {
					t.Fatalf("keys of two tags: error = %v, want ErrCrossSlot", err)
				}
				if n := hook.n.Load() - before; n != 0 {
					t.Fatalf("ErrCrossSlot after %d commands, want none", n)
				}
				err = ratelimit.AllowAll(ctx, s, takes, results)
			}
			if err != nil || !results[0].Allowed || !results[1].Allowed {
				t.Fatalf("first batch: %+v, %v; want both allowed", results, err)
			}
			if err := ratelimit.AllowAll(ctx, s, takes, results); err != nil || !results[0].Allowed || results[1].Allowed {
				t.Fatalf("second batch: %+v, %v; want denied by the second limit only (the first alone would pass)", results, err)
			}
			if res, _ := s.AllowN(ctx, "a/client-1", ratelimit.PerHour(2), 0); res.Remaining != 1 {
				t.Fatalf("the denied batch took from the first key: remaining %d, want 1", res.Remaining)
			}
			// The limits of one client share a tag: one script, on any client
			// (once the node has it: the first call may be EVALSHA and EVAL).
			s.AllowAll(ctx, clientTakes("client-3"), results)
			before = hook.n.Load()
			if err := s.AllowAll(ctx, clientTakes("client-3"), results); err != nil || !results[0].Allowed || !results[1].Allowed {
				t.Fatalf("two limits of one client: %+v, %v; want both allowed", results, err)
			}
			if n := hook.n.Load() - before; n != 1 {
				t.Fatalf("two limits of one client sent %d commands, want 1", n)
			}
		})
	}
}

func TestAllowAllAfterScriptFlush(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			results := make([]ratelimit.Result, 2)
			for want := 2; want >= 0; want-- {
				if err := s.AllowAll(context.Background(), clientTakes("c"), results); err != nil || !results[0].Allowed || results[1].Remaining != want {
					t.Fatalf("call %d: %+v, %v; want allowed, remaining %d", 3-want, results, err, want)
				}
				flushScripts(t, c)
			}
		})
	}
}

func TestLateAllowAllTakesNothing(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			s := redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			takes := clientTakes("c")
			learnClock(t, s) // the clock it sends deadlines in
			past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			err := s.AllowAll(lateContext{past}, takes, make([]ratelimit.Result, 2))
			if !errors.Is(err, redisstore.ErrLate) {
				t.Fatalf("a late call: %v, want ErrLate", err)
			}
			for _, tk := range takes {
				if res, err := s.AllowN(context.Background(), tk.Key, tk.Limit, 0); err != nil || res.Remaining != tk.Limit.Capacity() {
					t.Fatalf("after a late call, %s: %+v, %v; want its budget untouched", tk.Key, res, err)
				}
			}
		})
	}
}

// TestAllowAllEqualsMemory replays random timelines of batches of mixed
// algorithms on miniredis and on the memory store, on one clock, and fails
// on the first decision or Remaining that differs, or a RetryAfter or
// ResetAfter more than 1 µs apart (the script counts in µs).
func TestAllowAllEqualsMemory(t *testing.T) {
	t.Parallel()
	mr, c := newMini(t)
	rs := redisstore.New(c)
	var now time.Time
	ms := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithSweepInterval(0))
	defer ms.Close()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	now = time.Now().Truncate(time.Hour).Add(time.Hour + time.Minute)
	periods := []time.Duration{250 * time.Millisecond, time.Second, time.Minute}
	timelines, steps := 2, 150 // 8 with RATELIMIT_SLOW_TESTS
	if slowTests() {
		timelines = 8
	}
	for i := range timelines {
		k := 2 + rng.IntN(3)
		takes := make([]ratelimit.Take, k)
		for j := range takes {
			l := ratelimit.Limit{Rate: 1 + rng.IntN(20), Period: periods[rng.IntN(len(periods))], Burst: rng.IntN(10), Algorithm: algorithms[rng.IntN(4)]}
			takes[j] = ratelimit.Take{Key: fmt.Sprint("l", j, "/client-", i), Limit: l}
		}
		got, want := make([]ratelimit.Result, k), make([]ratelimit.Result, k)
		for step := range steps {
			now = now.Add(time.Duration(rng.Int64N(int64(300 * time.Millisecond))).Truncate(time.Microsecond))
			mr.SetTime(now)
			for j := range takes {
				takes[j].N = rng.IntN(takes[j].Limit.Capacity() + 1)
			}
			if err := rs.AllowAll(context.Background(), takes, got); err != nil {
				t.Fatal(err)
			}
			if err := ms.AllowAll(context.Background(), takes, want); err != nil {
				t.Fatal(err)
			}
			for j := range takes {
				g, w := got[j], want[j]
				if g.Allowed != w.Allowed || g.Remaining != w.Remaining ||
					(g.RetryAfter-w.RetryAfter).Abs() > time.Microsecond || (g.ResetAfter-w.ResetAfter).Abs() > time.Microsecond {
					t.Fatalf("timeline %d step %d take %d (%v, n %d): redis %+v, memory %+v", i, step, j, takes[j].Limit, takes[j].N, g, w)
				}
			}
		}
	}
}

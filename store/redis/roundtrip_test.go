package redis_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// countingHook counts the commands a client sends, but for the handshake
// of a new connection.
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *countingHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() != "hello" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *countingHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

var algorithms = []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.FixedWindow, ratelimit.SlidingWindow, ratelimit.SlidingLog}

func TestOneRoundTripPerDecision(t *testing.T) {
	_, c := newMini(t)
	hook := &countingHook{}
	c.AddHook(hook)
	s := redisstore.New(c)
	ctx := context.Background()
	for _, a := range algorithms {
		l := ratelimit.Limit{Rate: 100, Period: time.Minute, Algorithm: a}
		s.AllowN(ctx, "warm", l, 1) // loads the script: EVALSHA, NOSCRIPT, EVAL
		before := hook.n.Load()
		for i := range 50 {
			if _, err := s.AllowN(ctx, fmt.Sprint("k", i%5), l, 1+i%3); err != nil {
				t.Fatal(err)
			}
		}
		if got := hook.n.Load() - before; got != 50 {
			t.Errorf("%v: 50 decisions sent %d commands, want 50", a, got)
		}
	}
}

// TestTimeoutIsNotResent: a script that times out on the client is not
// sent again, which would count the request twice.
func TestTimeoutIsNotResent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // a server that reads and never answers
				defer conn.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := conn.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	c := goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), ReadTimeout: 100 * time.Millisecond})
	defer c.Close()
	hook := &countingHook{}
	c.AddHook(hook)
	_, err = redisstore.New(c).AllowN(context.Background(), "k", ratelimit.PerSecond(1), 1)
	if err == nil {
		t.Fatal("no error from a server that never answers")
	}
	if got := hook.n.Load(); got != 1 {
		t.Fatalf("sent %d commands after a timeout, want 1", got)
	}
}

// TestKeyMemoryUsage reports MEMORY USAGE of one key per algorithm after
// Rate requests, for docs/algorithms.md, on the real redis-server.
func TestKeyMemoryUsage(t *testing.T) {
	addr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if addr == "" {
		t.Skip("set RATELIMIT_REDIS_ADDR to measure a real redis-server (.ci/run does)")
	}
	c := reachable(t, goredis.NewClient(&goredis.Options{Addr: addr})).(*goredis.Client)
	p := prefix(t)
	s := redisstore.New(c, redisstore.WithPrefix(p))
	ctx := context.Background()
	tags := map[ratelimit.Algorithm]string{ratelimit.TokenBucket: "tb:", ratelimit.FixedWindow: "fw:", ratelimit.SlidingWindow: "sw:", ratelimit.SlidingLog: "sl:"}
	for _, rate := range []int{10, 100, 1000} {
		var usage []int64
		for _, a := range algorithms {
			l := ratelimit.Limit{Rate: rate, Period: time.Hour, Algorithm: a}
			key := fmt.Sprint("mem-", rate)
			for range rate {
				if _, err := s.AllowN(ctx, key, l, 1); err != nil {
					t.Fatal(err)
				}
			}
			n, err := c.MemoryUsage(ctx, p+tags[a]+key).Result()
			if err != nil {
				t.Fatal(err)
			}
			usage = append(usage, n)
		}
		t.Logf("rate %4d: MEMORY USAGE token bucket %d B, fixed window %d B, sliding window %d B, sliding log %d B", rate, usage[0], usage[1], usage[2], usage[3])
		for i, u := range usage[:3] {
			if u > 200 {
				t.Errorf("rate %d: %v key takes %d B, want O(1), under 200", rate, algorithms[i], u)
			}
		}
		if usage[3] < int64(rate)*8 {
			t.Errorf("rate %d: sliding log key takes %d B, less than 8 B per entry", rate, usage[3])
		}
	}
}

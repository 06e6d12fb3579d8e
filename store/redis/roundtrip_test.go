package redisstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
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

// fakeRedis answers the connection handshake and counts the script calls
// it receives, then either never answers them (hang) or drops the
// connection (the two failures after which go-redis resends a command).
type fakeRedis struct {
	ln      net.Listener
	scripts atomic.Int64
	hang    bool
	cluster bool // answer CLUSTER as a one-master Cluster holding every slot (nodeonce_test.go)
}

func startFakeRedis(t *testing.T, hang bool) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{ln: ln, hang: hang}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(conn)
		}
	}()
	return f
}

func (f *fakeRedis) serve(conn net.Conn) {
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for {
		cmd, err := readCommand(rd)
		if err != nil {
			return
		}
		switch strings.ToUpper(cmd) {
		case "EVALSHA", "EVAL":
			f.scripts.Add(1)
			if !f.hang {
				return // drop the connection after the command was sent
			}
			io.Copy(io.Discard, conn) // never answer
			return
		case "HELLO":
			conn.Write([]byte("-ERR unknown command 'HELLO'\r\n"))
		case "CLUSTER", "COMMAND":
			if !f.cluster || strings.ToUpper(cmd) == "COMMAND" {
				conn.Write([]byte("-ERR unknown command\r\n"))
				continue
			}
			host, port, _ := net.SplitHostPort(f.ln.Addr().String())
			fmt.Fprintf(conn, "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$%d\r\n%s\r\n:%s\r\n$40\r\n%040d\r\n", len(host), host, port, 1)
		default:
			conn.Write([]byte("+OK\r\n"))
		}
	}
}

// readCommand reads one RESP array of bulk strings and returns its first
// element, the command's name.
func readCommand(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "*") {
		return "", errors.New("not a command")
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	var name string
	for i := range n {
		line, err = rd.ReadString('\n')
		if err != nil {
			return "", err
		}
		size, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return "", err
		}
		if i == 0 {
			name = string(buf[:size])
		}
	}
	return name, nil
}

// TestDecisionIsSentAtMostOnce: a script call that timed out or whose
// connection broke is never sent again, whatever the client's MaxRetries,
// since a resent call could count one request twice. Counted at the server.
func TestDecisionIsSentAtMostOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		hang bool
	}{{"after a read timeout", true}, {"after a broken connection", false}} {
		t.Run(tt.name, func(t *testing.T) {
			f := startFakeRedis(t, tt.hang)
			c := goredis.NewClient(&goredis.Options{Addr: f.ln.Addr().String(), ReadTimeout: 50 * time.Millisecond, MaxRetries: 5})
			defer c.Close()
			_, err := redisstore.New(c).AllowN(context.Background(), "k", ratelimit.PerSecond(1), 1)
			if err == nil {
				t.Fatal("no error from a server that never answers")
			}
			if got := f.scripts.Load(); got != 1 {
				t.Fatalf("the server received the script %d times with MaxRetries 5, want exactly 1", got)
			}
		})
	}
}

// TestLateDecisionTakesNothing: a call that reaches Redis after its
// deadline (Redis was stalled) takes no token when it finally runs.
func TestLateDecisionTakesNothing(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			s := redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			l := ratelimit.PerHour(2)
			learnClock(t, s) // the clock it sends deadlines in
			past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			// A context already past its deadline would not be sent by
			// go-redis; a stalled Redis reads it late. Send it anyway.
			late := lateContext{past}
			_, err := s.AllowN(late, "k", l, 1)
			if !errors.Is(err, redisstore.ErrLate) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a late call: %v, want ErrLate", err)
			}
			res, err := s.AllowN(context.Background(), "k", l, 0)
			if err != nil || res.Remaining != 2 {
				t.Fatalf("after a late call: %+v, %v; want the budget untouched (remaining 2)", res, err)
			}
		})
	}
}

// lateContext has a deadline in the past but is not done, like the
// context of a call that was written to a Redis that stalled before
// reading it.
type lateContext struct{ context.Context }

func (lateContext) Done() <-chan struct{} { return nil }
func (lateContext) Err() error            { return nil }

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
			n, err := c.MemoryUsage(ctx, s.Key(key, a)).Result()
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

// TestSkewedClocksAreNotLate: an app server whose clock is behind or ahead
// of Redis's, by more than the time budget, still has its calls decided:
// deadlines travel in Redis's clock. Calls that truly come late are still
// refused.
func TestSkewedClocksAreNotLate(t *testing.T) {
	// A budget of seconds, which a busy machine under the race detector
	// keeps, and skews of twice that.
	const budget = 5 * time.Second
	for _, skew := range []time.Duration{-time.Hour, -2 * budget, 2 * budget, time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			mr, c := newMini(t)
			mr.SetTime(time.Now().Add(skew)) // Redis's TIME is off by skew
			s := redisstore.New(c)
			l := ratelimit.PerHour(100)
			for i := range 5 {
				ctx, cancel := context.WithTimeout(context.Background(), budget)
				_, err := s.AllowN(ctx, "k", l, 1)
				cancel()
				if err != nil {
					t.Fatalf("call %d with Redis's clock off by %v: %v", i+1, skew, err)
				}
			}
			learnClock(t, s) // from a quick reply: the first five may all have been slow
			past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			if _, err := s.AllowN(lateContext{past}, "k", l, 1); !errors.Is(err, redisstore.ErrLate) {
				t.Fatalf("a call a second past its deadline: %v, want ErrLate", err)
			}
			if res, _ := s.AllowN(context.Background(), "k", l, 0); res.Remaining != 95 {
				t.Fatalf("remaining %d, want 95: the late call took nothing", res.Remaining)
			}
		})
	}
}

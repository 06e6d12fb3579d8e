package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// wireLog records every script call a client writes, whole, as its bytes
// on the wire: a call written twice is a call resent.
type wireLog struct {
	mu    sync.Mutex
	calls map[string]int // a script call's RESP bytes → times written
}

// dialer is a go-redis Dialer whose connections record what they write.
func (w *wireLog) dialer(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, log: w}, nil
}

// record parses the whole RESP arrays at the start of buf, records the
// script calls among them and returns how many bytes it parsed.
func (w *wireLog) record(buf []byte) int {
	done := 0
	for {
		cmd, name, ok := nextCommand(buf[done:])
		if !ok {
			return done
		}
		done += len(cmd)
		if name == "evalsha" || name == "eval" {
			w.mu.Lock()
			w.calls[string(cmd)]++
			w.mu.Unlock()
		}
	}
}

// nextCommand is the first whole RESP array of buf and its command's
// name, lower case; ok is false if buf does not hold a whole one.
func nextCommand(buf []byte) (cmd []byte, name string, ok bool) {
	line := func(at int) (int, int, bool) { // the number after the sigil at at, and where the next line starts
		end := bytes.Index(buf[at:], []byte("\r\n"))
		if end < 0 {
			return 0, 0, false
		}
		n, err := strconv.Atoi(string(buf[at+1 : at+end]))
		return n, at + end + 2, err == nil
	}
	n, at, ok := line(0)
	if !ok || buf[0] != '*' {
		return nil, "", false
	}
	for i := range n {
		size, next, ok := line(at)
		if !ok || next+size+2 > len(buf) {
			return nil, "", false
		}
		if i == 0 {
			name = string(bytes.ToLower(buf[next : next+size]))
		}
		at = next + size + 2
	}
	return buf[:at], name, true
}

// resent is how many script calls were written more than once, and how
// many were written in all.
func (w *wireLog) resent() (resent, written int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.calls {
		written += n
		if n > 1 {
			resent++
		}
	}
	return resent, written
}

// loggedConn records, as it writes them, the commands it writes.
type loggedConn struct {
	net.Conn
	log     *wireLog
	pending []byte // written, not yet a whole command
}

func (c *loggedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.pending = append(c.pending, p[:n]...)
	c.pending = c.pending[c.log.record(c.pending):]
	return n, err
}

// warmPool waits until the client's pool of addr holds idle connections
// (MinIdleConns), so that calls to a stopped master are written on
// established connections rather than failing in a new one's handshake.
func warmPool(t *testing.T, cc *goredis.ClusterClient, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		idle := uint32(0)
		cc.ForEachMaster(context.Background(), func(ctx context.Context, c *goredis.Client) error {
			if c.Options().Addr == addr {
				idle = c.PoolStats().IdleConns
			}
			return nil
		})
		if idle >= 4 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool of %s holds %d idle connections after 10 s", addr, idle)
		}
		time.Sleep(20 * time.Millisecond) // polling the pool's state
	}
}

// TestClusterCallsAreNeverResentAfterATransportError: with a master
// stopped (kill -STOP), decisions of 16 of its slots, sent at once through
// the node script or the per-slot pipeline, fail: the calls written on the
// wire time out (the first, alone; in node-script mode often a batch
// behind it), the others within their budgets. go-redis resends a command
// after a transport error up to MaxRetries (5 here), and its cluster
// pipeline remaps commands to other nodes, unless the command says
// NoRetry; the store's calls say it, and none is written twice, which the
// wire itself shows (go-redis 9.23).
func TestClusterCallsAreNeverResentAfterATransportError(t *testing.T) {
	pc := startCluster(t)
	for _, tt := range []struct {
		name string
		opts []redisstore.Option
	}{{"node script", nil}, {"per-slot pipeline", []redisstore.Option{redisstore.WithPerSlotBatches()}}} {
		t.Run(tt.name, func(t *testing.T) {
			w := &wireLog{calls: map[string]int{}}
			cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: pc.addrs, Dialer: w.dialer,
				MaxRetries: 5, ReadTimeout: 200 * time.Millisecond, MaxRedirects: 8, MinIdleConns: 8})
			defer cc.Close()
			s := redisstore.New(cc, append(tt.opts, redisstore.WithPrefix(prefix(t)))...)
			l := ratelimit.PerHour(100)
			// Keys of master 0, each in a slot of its own.
			var keys []string
			slots := map[int64]bool{}
			for i := 0; len(keys) < 16; i++ {
				k := fmt.Sprintf("once-%d", i)
				sk := s.Key(k, ratelimit.TokenBucket)
				slot, err := cc.ClusterKeySlot(context.Background(), sk).Result()
				if err != nil {
					t.Fatal(err)
				}
				if pc.master(t, cc, sk) == 0 && !slots[slot] {
					slots[slot] = true
					keys = append(keys, k)
				}
			}
			for _, k := range keys { // scripts loaded, routes known
				if _, err := s.AllowN(context.Background(), k, l, 0); err != nil {
					t.Fatal(err)
				}
			}
			warmPool(t, cc, pc.addrs[0])
			_, before := w.resent()
			pc.procs[0].Stop()
			var wg sync.WaitGroup
			errs := make(chan error, len(keys))
			for _, k := range keys {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					_, err := s.AllowN(ctx, k, l, 1)
					errs <- err
				})
			}
			wg.Wait()
			pc.procs[0].Cont()
			pc.waitOK(t)
			close(errs)
			for err := range errs {
				if err == nil {
					t.Error("a decision was answered by a stopped master")
				}

			}
			resent, written := w.resent()
			if written == before {
				t.Fatal("no script call was written while the master was stopped: the test proved nothing")
			}
			if resent != 0 {
				t.Fatalf("%d script calls were written more than once (%d written while the master was stopped)", resent, written-before)
			}
			t.Logf("%d script calls written while the master was stopped, none twice", written-before)
		})
	}
	// The control: a call written twice is seen as resent.
	w := &wireLog{calls: map[string]int{}}
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: pc.addrs, Dialer: w.dialer})
	defer cc.Close()
	for range 2 {
		if err := cc.Eval(context.Background(), "return 1", []string{"control"}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if resent, written := w.resent(); resent != 1 || written != 2 {
		t.Fatalf("one EVAL written twice: %d resent of %d written, want 1 of 2", resent, written)
	}
}

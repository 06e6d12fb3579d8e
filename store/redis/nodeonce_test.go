package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
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

// fakeClusterNode is a fakeRedis that says it is a one-master Cluster
// holding every slot, for a ClusterClient.
func fakeClusterNode(t *testing.T, hang bool) *fakeRedis {
	f := startFakeRedis(t, hang)
	f.cluster = true
	return f
}

// TestClusterCallsAreNeverResentAfterATransportError: through a
// ClusterClient with MaxRetries 5, decisions sent at once (a lone call and
// the batch behind it) to a master that drops the connection after a
// script call, or never answers it, fail; none of the store's calls is
// written twice, on the wire, through the node script or the per-slot
// pipeline. go-redis resends a command after such an error, and its
// cluster pipeline remaps commands, unless the command says NoRetry, as
// the store's do; with NoRetry off, this test fails (go-redis 9.23).
func TestClusterCallsAreNeverResentAfterATransportError(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []redisstore.Option
	}{{"node script", nil}, {"per-slot pipeline", []redisstore.Option{redisstore.WithPerSlotBatches()}}} {
		for _, hang := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/hang=%v", mode.name, hang), func(t *testing.T) {
				f := fakeClusterNode(t, hang)
				w := &wireLog{calls: map[string]int{}}
				cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{f.ln.Addr().String()}, Dialer: w.dialer,
					MaxRetries: 5, ReadTimeout: 200 * time.Millisecond, MaxRedirects: 8})
				defer cc.Close()
				s := redisstore.New(cc, mode.opts...)
				var wg sync.WaitGroup
				var answered atomic.Int64
				for i := range 8 {
					wg.Go(func() {
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						if _, err := s.AllowN(ctx, fmt.Sprintf("k%d", i), ratelimit.PerHour(10), 1); err == nil {
							answered.Add(1)
						}
					})
				}
				wg.Wait()
				if answered.Load() != 0 {
					t.Errorf("%d decisions answered by a node that answers no script", answered.Load())
				}
				resent, written := w.resent()
				if written == 0 || f.scripts.Load() == 0 {
					t.Fatalf("%d script calls written, %d received: the test proved nothing", written, f.scripts.Load())
				}
				if resent != 0 {
					t.Fatalf("%d of %d script calls written more than once", resent, written)
				}
			})
		}
	}
}

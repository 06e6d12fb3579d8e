package benchmarks

import (
	"bytes"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// What the Redis suites read around each run: the client's writes to its
// sockets, and the servers' INFO.

// wire counts the writes a client makes to its connections: go-redis
// buffers a command, or a pipeline of them, and writes it at once, so a
// write is one message that reaches the wire, whatever path inside the
// client (plain commands, pipelines, auto-pipelining, a script per batch)
// sent it. That makes writes per decision the round trips per decision.
// Writes that begin with a command go-redis sends to set a connection up
// or to learn a Cluster's layout are counted apart: they serve no decision,
// and how many a run makes depends on when the pool dials.
type wire struct {
	writes atomic.Int64
	setup  atomic.Int64
}

// dial opens a TCP connection as go-redis's own dialer does and counts its
// writes.
func (w *wire) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 5 * time.Minute}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, w: w}, nil
}

// countingConn counts Write calls. It passes SyscallConn through, so that
// go-redis still checks a pooled connection's health as it does on a bare
// TCP connection.
type countingConn struct {
	net.Conn
	w *wire
}

func (c *countingConn) Write(p []byte) (int, error) {
	if setupCommand(p) {
		c.w.setup.Add(1)
	} else {
		c.w.writes.Add(1)
	}
	return c.Conn.Write(p)
}

// setupCommand reports whether p, the start of a RESP array, begins with a
// command of connection set-up or Cluster discovery.
func setupCommand(p []byte) bool {
	// *<count>\r\n$<length>\r\n<name>\r\n
	_, rest, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok || len(p) == 0 || p[0] != '*' {
		return false
	}
	_, rest, ok = bytes.Cut(rest, []byte("\r\n"))
	if !ok {
		return false
	}
	name, _, ok := bytes.Cut(rest, []byte("\r\n"))
	return ok && setupNames[strings.ToLower(string(name))]
}

// setupNames are the commands go-redis sends to set up a connection, or
// to learn a Cluster's slots.
var setupNames = map[string]bool{"hello": true, "auth": true, "client": true, "select": true, "readonly": true, "cluster": true}

func (c *countingConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// redisAddr returns RATELIMIT_REDIS_ADDR. Unset, the Redis suites skip;
// set, a server that does not answer fails them.
func redisAddr(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv("RATELIMIT_REDIS_ADDR")
	if addr == "" {
		tb.Skip("RATELIMIT_REDIS_ADDR is not set: the Redis suites need a real redis-server (run.sh starts one)")
	}
	return addr
}

// clusterAddrs returns RATELIMIT_REDIS_CLUSTER_ADDRS, split at commas, as
// redisAddr does.
func clusterAddrs(tb testing.TB) []string {
	tb.Helper()
	v := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if v == "" {
		tb.Skip("RATELIMIT_REDIS_CLUSTER_ADDRS is not set: the Cluster suite needs a real Redis Cluster (run.sh starts one)")
	}
	return strings.Split(v, ",")
}

// poolSize is every library's connection pool for g goroutines: one
// connection per goroutine, and go-redis's default (10 per core) if that
// is more, so that no library waits for a connection of its own pool.
func poolSize(g int) int { return max(g, 10*runtimeProcs()) }

// serverStats is what the benchmarks read from one or more servers' INFO.
type serverStats struct {
	cpu      float64               // used_cpu_sys + used_cpu_user, seconds
	commands float64               // total_commands_processed
	cmds     map[string][2]float64 // commandstats: name -> calls, µs
}

// readStats sums INFO cpu, stats and commandstats over admins, one client
// per server.
func readStats(ctx context.Context, admins []*goredis.Client) (serverStats, error) {
	s := serverStats{cmds: make(map[string][2]float64)}
	for _, a := range admins {
		info, err := a.Info(ctx, "cpu", "stats", "commandstats").Result()
		if err != nil {
			return s, err
		}
		parseInfo(info, &s)
	}
	return s, nil
}

// parseInfo adds the fields of one INFO reply to s.
func parseInfo(info string, s *serverStats) {
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch name {
		case "used_cpu_sys", "used_cpu_user":
			f, _ := strconv.ParseFloat(rest, 64)
			s.cpu += f
			continue
		case "total_commands_processed":
			f, _ := strconv.ParseFloat(rest, 64)
			s.commands += f
			continue
		}
		cmd, found := strings.CutPrefix(name, "cmdstat_")
		if !found {
			continue
		}
		var calls, usec float64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = f
			case "usec":
				usec = f
			}
		}
		c := s.cmds[cmd]
		s.cmds[cmd] = [2]float64{c[0] + calls, c[1] + usec}
	}
}

package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// phase is a stretch of a fault test: before the fault, during it, after;
// edge holds the requests that began in one and ended in another (one
// that began just before Redis resumed may be answered by it), which no
// phase's assertions count.
type phase int

const (
	before phase = iota
	during
	after
	edge
)

var phaseNames = [...]string{"before", "during", "after", "across a phase's edge"}

// load sends requests through a handler from several goroutines and keeps
// statistics per phase, by the phase in which each request started and
// ended (edge if they differ).
type load struct {
	phase atomic.Int32
	stats [4]struct {
		requests atomic.Int64
		codes    [600]atomic.Int64
		maxNs    atomic.Int64
	}
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// startLoad runs workers goroutines that each send a request for key
// through h, then sleep pace, until Stop or the end of the test.
func startLoad(t *testing.T, h http.Handler, key string, workers int, pace time.Duration) *load {
	ctx, cancel := context.WithCancel(context.Background())
	ld := &load{stop: cancel}
	t.Cleanup(ld.Stop)
	for range workers {
		ld.wg.Add(1)
		go func() {
			defer ld.wg.Done()
			for ctx.Err() == nil {
				p := ld.phase.Load()
				start := time.Now()
				code := request(h, key, -1)
				took := int64(time.Since(start))
				if ld.phase.Load() != p {
					p = int32(edge)
				}
				st := &ld.stats[p]
				st.requests.Add(1)
				st.codes[code].Add(1)
				for {
					m := st.maxNs.Load()
					if took <= m || st.maxNs.CompareAndSwap(m, took) {
						break
					}
				}
				if pace > 0 {
					time.Sleep(pace)
				}
			}
		}()
	}
	return ld
}

func (ld *load) set(p phase) { ld.phase.Store(int32(p)) }

// Stop stops the workers and waits for them.
func (ld *load) Stop() { ld.stop(); ld.wg.Wait() }

func (ld *load) requests(p phase) int64 { return ld.stats[p].requests.Load() }
func (ld *load) code(p phase, c int) int64 {
	return ld.stats[p].codes[c].Load()
}
func (ld *load) max(p phase) time.Duration { return time.Duration(ld.stats[p].maxNs.Load()) }

// maxAll is the slowest request of any phase.
func (ld *load) maxAll() time.Duration {
	return max(ld.max(before), ld.max(during), ld.max(after), ld.max(edge))
}

// codes lists the statuses of phase p, such as "200×310 503×2".
func (ld *load) codes(p phase) string {
	var b strings.Builder
	for c := range ld.stats[p].codes {
		if n := ld.stats[p].codes[c].Load(); n > 0 {
			fmt.Fprintf(&b, " %d×%d", c, n)
		}
	}
	return strings.TrimSpace(b.String())
}

func (ld *load) report(t *testing.T, name string) {
	t.Helper()
	for p := before; p <= edge; p++ {
		t.Logf("%s %s: %d requests, %s, slowest %v", name, phaseNames[p], ld.requests(p), ld.codes(p), ld.max(p).Round(time.Millisecond))
	}
}

// waitFor polls cond every 10 ms for at most limit and reports how long it
// took to hold.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// commandCalls returns the calls of each command INFO commandstats counts,
// such as "evalsha" → 12.
func commandCalls(t *testing.T, c *goredis.Client) map[string]int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out
}

// scriptCalls is the number of EVALSHA and EVAL calls Redis has run.
func scriptCalls(t *testing.T, c *goredis.Client) int64 {
	t.Helper()
	m := commandCalls(t, c)
	return m["evalsha"] + m["eval"]
}

// keepFull lowers the maxmemory of a Redis just filled to its limit under
// what it uses: the last piece's query buffer counted until Redis shrinks
// it, which can bring memory back under the limit, so a limit well under
// what the data alone takes keeps Redis full whatever its buffers do.
func keepFull(t *testing.T, admin *goredis.Client) {
	t.Helper()
	info, err := admin.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			used, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if err := admin.ConfigSet(context.Background(), "maxmemory", strconv.FormatInt(used-256<<10, 10)).Err(); used == 0 || err != nil {
		t.Fatalf("lowering maxmemory under the %d bytes used: %v", used, err)
	}
}

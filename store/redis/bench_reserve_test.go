package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// BenchmarkReserveVsAllowN is ReserveN, with no wait (bound 0, as AllowN
// decides) and with a bound of a second, against AllowN on 10,000 keys
// whose budgets never run out (the allowed path, every call writes), from
// 1 and 64 goroutines, in one run: the three take turns in slices of
// 2,000 decisions, each first in its turn once in three, so that a noisy
// machine slows them alike. It reports each one's time, Redis's time and
// script calls per decision, and the ratios of ReserveN's times to
// AllowN's (reserve0/allow, reserve1s/allow).
func BenchmarkReserveVsAllowN(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	keys := benchKeyNames()
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	allow := redisstore.New(c, redisstore.WithPrefix("bench-rva-allow:"))
	reserve := redisstore.New(c, redisstore.WithPrefix("bench-rva-reserve:"))
	reserveWait := redisstore.New(c, redisstore.WithPrefix("bench-rva-wait:"))
	turns := []turn{
		{"allow", func(i int64) error {
			_, err := allow.AllowN(ctx, keys[i%benchKeys], l, 1)
			return err
		}},
		{"reserve0", func(i int64) error {
			_, err := reserve.ReserveN(ctx, keys[i%benchKeys], l, 1, 0)
			return err
		}},
		{"reserve1s", func(i int64) error {
			_, err := reserveWait.ReserveN(ctx, keys[i%benchKeys], l, 1, time.Second)
			return err
		}},
	}
	for _, t := range turns {
		if err := t.f(0); err != nil { // loads the scripts
			b.Fatal(err)
		}
	}
	for _, par := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(par), func(b *testing.B) {
			takeTurns(b, c, par, turns)
		})
	}
}

// turn is one of the loads takeTurns compares: f makes decision i.
type turn struct {
	name string
	f    func(i int64) error
}

// turnSlice is the number of decisions of one load in a turn.
const turnSlice = 2000

// takeTurns runs the loads ts in turns of turnSlice decisions each, from
// clients goroutines, and reports each one's time, Redis's time and script
// calls per decision, and each one's time against the first's.
func takeTurns(b *testing.B, c *goredis.Client, clients int, ts []turn) {
	spent := make([]time.Duration, len(ts))
	usec := make([]float64, len(ts))
	calls := make([]float64, len(ts))
	var next atomic.Int64
	run := func(f func(int64) error) {
		if clients == 1 {
			for range turnSlice {
				if err := f(next.Add(1)); err != nil {
					b.Fatal(err)
				}
			}
			return
		}
		var left atomic.Int64
		left.Store(turnSlice)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for left.Add(-1) >= 0 {
					if err := f(next.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	for k := 0; b.Loop(); k++ {
		for j := range ts {
			i := (j + k) % len(ts)
			c0, u0 := scriptStats(b, c)
			t0 := time.Now()
			run(ts[i].f)
			spent[i] += time.Since(t0)
			c1, u1 := scriptStats(b, c)
			calls[i] += c1 - c0
			usec[i] += u1 - u0
		}
	}
	n := float64(b.N * turnSlice)
	for i, t := range ts {
		b.ReportMetric(float64(spent[i])/n, t.name+"-ns/op")
		b.ReportMetric(usec[i]/n, t.name+"-server-µs/op")
		b.ReportMetric(calls[i]/n, t.name+"-scripts/op")
		if i > 0 {
			b.ReportMetric(float64(spent[i])/float64(spent[0]), t.name+"/"+ts[0].name)
		}
	}
}

// scriptStats reads the server's script calls (EVALSHA and EVAL) and their
// time in µs from INFO commandstats.
func scriptStats(b *testing.B, c *goredis.Client) (calls, usec float64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:")
		if !ok {
			if rest, ok = strings.CutPrefix(line, "cmdstat_eval:"); !ok {
				continue
			}
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls += f
			case "usec":
				usec += f
			}
		}
	}
	return calls, usec
}

package memory_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestLogsInTheirCellDecideAsLogs: a sliding log of one request per period
// (a block's) is kept in its cell alone, and decides, with AllowN and
// AllowAll, as a brute-force log does, also as its rate goes from 1 to 3
// and back on the same key (a plan changed), over random steps; a refund
// of its one request gives the key back whole.
func TestLogsInTheirCellDecideAsLogs(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	s := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithSweepInterval(0))
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	const period = time.Second
	type entry struct {
		at time.Time
		n  int
	}
	for timeline := range 200 {
		key := "log-" + string(rune('a'+timeline%26)) + string(rune('a'+timeline/26))
		var history []entry
		in := func() int { // tokens in the trailing period (now − period, now]
			sum := 0
			for _, e := range history {
				if e.at.After(now.Add(-period)) && !e.at.After(now) {
					sum += e.n
				}
			}
			return sum
		}
		for step := range 60 {
			now = now.Add(time.Duration(rng.Int64N(int64(period))))
			rate := 1
			if rng.IntN(5) == 0 {
				rate = 1 + rng.IntN(3) // now and then, another plan's rate
			}
			l := ratelimit.Limit{Rate: rate, Period: period, Algorithm: ratelimit.SlidingLog}
			n := rng.IntN(rate + 1)
			var res ratelimit.Result
			var err error
			if rng.IntN(2) == 0 {
				res, err = s.AllowN(ctx, key, l, n)
			} else {
				all := []ratelimit.Result{{}}
				err = s.AllowAll(ctx, []ratelimit.Take{{Key: key, Limit: l, N: n}}, all)
				res = all[0]
			}
			if err != nil {
				t.Fatal(err)
			}
			want := in()+n <= rate
			if want && n > 0 {
				history = append(history, entry{now, n})
			}
			if res.Allowed != want || res.Remaining != max(0, rate-in()) {
				t.Fatalf("timeline %d step %d (rate %d, n %d): allowed %v remaining %d; a log: %v %d",
					timeline, step, rate, n, res.Allowed, res.Remaining, want, max(0, rate-in()))
			}
			if rng.IntN(10) == 0 && in() == 1 && rate == 1 {
				// The one request given back: the key is a new one's.
				if _, err := s.RefundN(ctx, key, l, 1, now.Sub(history[len(history)-1].at)); err != nil {
					t.Fatal(err)
				}
				history = history[:len(history)-1]
				if res, _ := s.AllowN(ctx, key, l, 0); res.Remaining != 1 {
					t.Fatalf("timeline %d step %d: Remaining %d after its one request was refunded, want 1", timeline, step, res.Remaining)
				}
			}
		}
	}
}

// TestABlockCostsACell: 100,000 keys of a log of one request per period
// (ratelimit.WithBlock's blocks) hold at most 80 bytes a key, as token
// buckets do (a log's ring beside the table held 150 to 200).
func TestABlockCostsACell(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(0))
	defer s.Close()
	const n = 100_000
	block := ratelimit.Limit{Rate: 1, Period: 15 * time.Minute, Algorithm: ratelimit.SlidingLog}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		if res, _ := s.AllowN(context.Background(), "block-"+strconv.Itoa(i), block, 1); !res.Allowed {
			t.Fatal("a new block not started")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 80 {
		t.Fatalf("a block holds %d bytes, want at most 80", per)
	}
	if s.Len() != n {
		t.Fatalf("%d keys held, want %d", s.Len(), n)
	}
}

package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestCalendarAllocs: a calendar quota's decision allocates nothing for a
// key the store holds.
func TestCalendarAllocs(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	s := memory.New()
	defer s.Close()
	l := ratelimit.PerDay(1<<30, berlin)
	ctx := context.Background()
	s.AllowN(ctx, "k", l, 1)
	if allocs := testing.AllocsPerRun(1000, func() { s.AllowN(ctx, "k", l, 1) }); allocs != 0 {
		t.Fatalf("%v allocations per decision, want 0", allocs)
	}
}

// BenchmarkCalendarQuota is BenchmarkHotKey for a daily quota in Berlin
// and, as its baseline in the same run, a fixed window of 24 hours.
func BenchmarkCalendarQuota(b *testing.B) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, c := range []struct {
		name string
		l    ratelimit.Limit
	}{
		{"fixed window 24h", ratelimit.Limit{Rate: 1 << 30, Period: 24 * time.Hour, Algorithm: ratelimit.FixedWindow}},
		{"per day Europe/Berlin", ratelimit.PerDay(1<<30, berlin)},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := memory.New()
			defer s.Close()
			ctx := context.Background()
			s.AllowN(ctx, "hot", c.l, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.AllowN(ctx, "hot", c.l, 1)
			}
		})
	}
}

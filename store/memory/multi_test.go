package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestAllowAllDoesNotAllocateForExistingKeys(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(0))
	defer s.Close()
	ctx := context.Background()
	takes := []ratelimit.Take{
		{Key: "api/ip:192.0.2.1", Limit: ratelimit.PerSecond(1e9), N: 1},
		{Key: "api#hourly/ip:192.0.2.1", Limit: ratelimit.PerHour(1e9), N: 1},
		{Key: "api#window/ip:192.0.2.1", Limit: ratelimit.PerHour(1e9).WithAlgorithm(ratelimit.SlidingWindow), N: 1},
	}
	results := make([]ratelimit.Result, len(takes))
	if err := s.AllowAll(ctx, takes, results); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := s.AllowAll(ctx, takes, results); err != nil || !results[0].Allowed {
			t.Fatalf("AllowAll: %+v, %v", results, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("AllowAll on existing keys: %v allocs, want 0", allocs)
	}
}

// TestAllowAllAcrossShardsNeverDeadlocks: batches of keys spread over many
// shards, named in random orders, from many goroutines at once.
func TestAllowAllAcrossShardsNeverDeadlocks(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(time.Millisecond))
	defer s.Close()
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = fmt.Sprint("ns", i, "/client")
	}
	l := ratelimit.PerSecond(1e6)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 300 {
				perm := rng.Perm(len(keys))[:2+rng.IntN(10)]
				takes := make([]ratelimit.Take, len(perm))
				for i, k := range perm {
					takes[i] = ratelimit.Take{Key: keys[k], Limit: l, N: 1}
				}
				if err := s.AllowAll(context.Background(), takes, make([]ratelimit.Result, len(takes))); err != nil {
					t.Error(err)
					return
				}
				s.AllowN(context.Background(), keys[perm[0]], l, 1)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("AllowAll batches did not finish in 30s: a deadlock")
	}
}

// TestAllowAllUnderMaxKeys: new keys of a batch make room as AllowN's do,
// and the bound holds.
func TestAllowAllUnderMaxKeys(t *testing.T) {
	c := newClock()
	const max = 4
	s := memory.New(memory.WithClock(c.Now), memory.WithMaxKeys(max), memory.WithSweepInterval(0))
	defer s.Close()
	ctx := context.Background()
	algs := []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.FixedWindow, ratelimit.SlidingWindow, ratelimit.SlidingLog}
	for i := range 200 {
		takes := make([]ratelimit.Take, 3)
		for j := range takes {
			l := ratelimit.PerMinute(10).WithAlgorithm(algs[(i+j)%len(algs)])
			takes[j] = ratelimit.Take{Key: fmt.Sprint("ns", j, "/flood-", i), Limit: l, N: 1 + j}
		}
		results := make([]ratelimit.Result, len(takes))
		if err := s.AllowAll(ctx, takes, results); err != nil {
			t.Fatal(err)
		}
		for j, res := range results {
			if !res.Allowed || res.Remaining != 10-(1+j) {
				t.Fatalf("batch %d take %d on a new key: %+v, want allowed with %d left", i, j, res, 10-(1+j))
			}
		}
		if n := s.Len(); n > max {
			t.Fatalf("after batch %d the store holds %d keys, bound %d", i, n, max)
		}
	}
}

package memory_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestFloodNeverFreesALimitedClient drives clients to their limit (or one
// request short of it), then sends a flood of new keys, each taking one
// token, through a store bounded far below the flood: for every algorithm,
// and with the clients and the flood under different algorithms and limits
// in one store. No client may get any of its budget back, and the store
// must stay within its bound. The flood is 16 times the bound with
// RATELIMIT_SLOW_TESTS, 4 times otherwise: each shard's table is still
// filled and replaced over and over.
func TestFloodNeverFreesALimitedClient(t *testing.T) {
	const (
		maxKeys = 4096
		clients = 32
	)
	flood := sized(16*maxKeys, 4*maxKeys)
	perMinute := func(a ratelimit.Algorithm) ratelimit.Limit {
		return ratelimit.Limit{Rate: 10, Period: time.Minute, Algorithm: a}
	}
	perHour := func(a ratelimit.Algorithm) ratelimit.Limit {
		return ratelimit.Limit{Rate: 100, Period: time.Hour, Algorithm: a}
	}
	type test struct {
		name            string
		client, flooder ratelimit.Limit
	}
	var tests []test
	for _, a := range algorithms {
		tests = append(tests, test{a.String() + " alone", perMinute(a), perMinute(a)})
	}
	for _, pair := range [][2]ratelimit.Algorithm{
		{ratelimit.TokenBucket, ratelimit.SlidingWindow},
		{ratelimit.SlidingWindow, ratelimit.TokenBucket},
		{ratelimit.TokenBucket, ratelimit.FixedWindow},
		{ratelimit.FixedWindow, ratelimit.SlidingLog},
		{ratelimit.SlidingLog, ratelimit.TokenBucket},
		{ratelimit.SlidingWindow, ratelimit.SlidingLog},
	} {
		tests = append(tests, test{
			fmt.Sprintf("%v clients, %v flood of another limit", pair[0], pair[1]),
			perMinute(pair[0]), perHour(pair[1]),
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newClock() // on a window edge: no window ends during the test
			s := memory.New(memory.WithClock(c.Now), memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
			defer s.Close()
			ctx := context.Background()
			allow := func(key string, l ratelimit.Limit, n int) ratelimit.Result {
				t.Helper()
				res, err := s.AllowN(ctx, key, l, n)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			// Half the clients spend all their budget, half all but one
			// request, one request at a time.
			left := func(i int) int { return i % 2 }
			for i := range clients {
				for range tt.client.Rate - left(i) {
					if res := allow(fmt.Sprint("client-", i), tt.client, 1); !res.Allowed {
						t.Fatalf("client %d was denied before its limit", i)
					}
				}
			}
			for i := range flood {
				c.Add(time.Microsecond)
				allow("flood-"+strconv.Itoa(i), tt.flooder, 1)
				if i%1024 == 0 {
					if n := s.Len(); n > maxKeys {
						t.Fatalf("the store holds %d keys, bound %d", n, maxKeys)
					}
				}
			}
			if n := s.Len(); n > maxKeys {
				t.Fatalf("the store holds %d keys, bound %d", n, maxKeys)
			}
			freed := 0
			for i := range clients {
				if res := allow(fmt.Sprint("client-", i), tt.client, 0); res.Remaining != left(i) {
					freed++
					t.Logf("client %d has %d requests left after the flood, want %d", i, res.Remaining, left(i))
				}
			}
			if freed > 0 {
				t.Fatalf("the flood gave %d of %d clients budget back", freed, clients)
			}
		})
	}
}

// TestSmallBoundsStillKeepALimitedClient: a store bounded below
// 256·64 keys has fewer shards, each of at least 64 keys (or the whole
// bound), so that eviction always has keys to compare: with 256 shards a
// bound of 64 made shards of one key, and every new key pushed out the
// spent one beside it. A flood of five times the bound, each new key using
// 1 of 5, leaves the spent client denied (a bound of one key can hold only
// the newest).
func TestSmallBoundsStillKeepALimitedClient(t *testing.T) {
	ctx := context.Background()
	login := ratelimit.Limit{Rate: 5, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
	for _, bound := range []int{64, 300, 1024} {
		now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
		s := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithMaxKeys(bound), memory.WithSweepInterval(0))
		for range 5 {
			s.AllowN(ctx, "victim", login, 1)
		}
		for i := range 5 * bound {
			if _, err := s.AllowN(ctx, "flood-"+strconv.Itoa(i), login, 1); err != nil {
				t.Fatal(err)
			}
			if res, _ := s.AllowN(ctx, "victim", login, 0); res.Remaining != 0 {
				t.Fatalf("bound %d: after %d new keys the spent client has %d of 5 back", bound, i+1, res.Remaining)
			}
		}
		if n := s.Len(); n > bound {
			t.Errorf("bound %d: %d keys held", bound, n)
		}
		s.Close()
	}
}

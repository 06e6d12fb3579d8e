package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// A take is decided by one of several scripts: one.lua alone, batch.lua in
// a batch, onemulti.lua as an AllowAll of one take, batch.lua's AllowAll,
// and for the token bucket reserve.lua's and batch.lua's bookings with no
// wait. They share each algorithm's functions; TestScriptsDecideAlike
// proves they still do, whatever is edited: the same timeline through
// each gives the same results and leaves the same bytes in Redis.

// driftStep is one decision of a timeline: after advancing the clock by
// after, a take of n.
type driftStep struct {
	after time.Duration
	n     int
}

// driftTimeline takes, is denied, reports (n = 0), refills partly and
// fully, on a budget of 5 per second.
var driftTimeline = []driftStep{
	{0, 1}, {0, 2}, {time.Millisecond, 2}, {0, 1}, {0, 0},
	{130 * time.Millisecond, 1}, {70 * time.Millisecond, 1}, {333 * time.Millisecond, 3},
	{990 * time.Millisecond, 2}, {0, 0}, {5 * time.Second, 5}, {time.Microsecond, 1},
}

// driftPath decides take n of key through one script; pad is a key of the
// same slot for the batches' second decision.
type driftPath struct {
	name    string
	booking bool // a booking: the timeline's reports (n = 0) are skipped, as x/time/rate writes them
	decide  func(s *redisstore.Store, key, pad string, l ratelimit.Limit, n int) (ratelimit.Result, error)
}

var driftPaths = []driftPath{
	{name: "alone", decide: func(s *redisstore.Store, key, _ string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
		return s.AllowN(context.Background(), key, l, n)
	}},
	{name: "batched", decide: func(s *redisstore.Store, key, pad string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
		ctx := context.Background()
		res, errs := redisstore.DecideBatch(s, []redisstore.BatchTake{
			{Ctx: ctx, Key: key, Limit: l, N: n},
			{Ctx: ctx, Key: pad, Limit: l, N: 1},
		})
		return res[0], errs[0]
	}},
	{name: "AllowAll alone", decide: func(s *redisstore.Store, key, _ string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
		results := make([]ratelimit.Result, 1)
		err := s.AllowAll(context.Background(), []ratelimit.Take{{Key: key, Limit: l, N: n}}, results)
		return results[0], err
	}},
	{name: "AllowAll batched", decide: func(s *redisstore.Store, key, pad string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
		ctx := context.Background()
		results := make([]ratelimit.Result, 1)
		_, errs := redisstore.DecideBatch(s, []redisstore.BatchTake{
			{Ctx: ctx, All: []ratelimit.Take{{Key: key, Limit: l, N: n}}, Results: results},
			{Ctx: ctx, Key: pad, Limit: l, N: 1},
		})
		return results[0], errs[0]
	}},
	{name: "booking alone", booking: true, decide: func(s *redisstore.Store, key, _ string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
		r, err := s.ReserveN(context.Background(), key, l, n, 0)
		return r.Result, err
	}},
	{name: "booking batched", booking: true, decide: func(s *redisstore.Store, key, pad string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
		ctx := context.Background()
		rs, errs := redisstore.DecideMixed(s, []redisstore.BatchTake{
			{Ctx: ctx, Key: key, Limit: l, N: n, Reserve: true},
			{Ctx: ctx, Key: pad, Limit: l, N: 1},
		})
		return rs[0].Result, errs[0]
	}},
}

func TestScriptsDecideAlike(t *testing.T) {
	for _, srv := range servers(t) {
		for _, encoding := range []string{"detected", "strings"} {
			if encoding == "strings" && srv.name == "miniredis" {
				continue // miniredis has strings only
			}
			t.Run(srv.name+"/"+encoding, func(t *testing.T) {
				c := srv.client(t)
				clock := &appClock{}
				clock.Set(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
				opts := []redisstore.Option{redisstore.WithPrefix(prefix(t)), redisstore.WithAppClock(clock.Now)}
				if encoding == "strings" {
					opts = append(opts, redisstore.WithStringEncoding())
				}
				s := redisstore.New(c, opts...)
				for _, a := range algorithms {
					l := ratelimit.Limit{Rate: 5, Period: time.Second, Algorithm: a}
					t.Run(a.String(), func(t *testing.T) {
						decideAlike(t, c, s, clock, l)
					})
				}
			})
		}
	}
}

// decideAlike runs driftTimeline through every path of l's algorithm, each
// on a key of its own, and compares each step's result and state with the
// lone script's.
func decideAlike(t *testing.T, c goredis.UniversalClient, s *redisstore.Store, clock *appClock, l ratelimit.Limit) {
	t.Helper()
	var paths []driftPath
	for _, p := range driftPaths {
		if !p.booking || l.Algorithm == ratelimit.TokenBucket {
			paths = append(paths, p)
		}
	}
	start := clock.Now()
	at := start
	for i, step := range driftTimeline {
		at = at.Add(step.after)
		var want ratelimit.Result
		var wantState string
		for j, p := range paths {
			if p.booking && step.n == 0 {
				continue
			}
			clock.Set(at)
			key := fmt.Sprintf("%s-%d/client", l.Algorithm, j)
			pad := fmt.Sprintf("%s-%d-pad/client", l.Algorithm, j)
			res, err := p.decide(s, key, pad, l, step.n)
			if err != nil {
				t.Fatalf("step %d, %s: %v", i, p.name, err)
			}
			state := driftState(t, c, s.Key(key, l.Algorithm), l.Algorithm)
			if j == 0 {
				want, wantState = res, state
				continue
			}
			if res != want {
				t.Errorf("step %d (n=%d), %s: %+v; alone: %+v", i, step.n, p.name, res, want)
			}
			if state != wantState {
				t.Errorf("step %d (n=%d), %s: state %q; alone: %q", i, step.n, p.name, state, wantState)
			}
		}
	}
	if want := driftState(t, c, s.Key(fmt.Sprintf("%s-0/client", l.Algorithm), l.Algorithm), l.Algorithm); want == "" {
		t.Fatal("the timeline left no state: nothing was compared")
	}
}

// driftState is the state of a key: its value, or a sliding log's entries
// and scores.
func driftState(t *testing.T, c goredis.UniversalClient, key string, a ratelimit.Algorithm) string {
	t.Helper()
	ctx := context.Background()
	if a == ratelimit.SlidingLog {
		zs, err := c.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(zs)
	}
	v, err := c.Get(ctx, key).Result()
	if err != nil && err != goredis.Nil {
		t.Fatal(err)
	}
	return v
}

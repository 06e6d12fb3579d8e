package ratelimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// sharedRemote is a memory store that is not Local, shared by the
// limiters of several app servers, counting the decisions asked of it.
type sharedRemote struct {
	calendarRemote
	calls atomic.Int64
}

func (s *sharedRemote) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	s.calls.Add(1)
	return s.calendarRemote.AllowN(ctx, key, l, n)
}

func (s *sharedRemote) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	s.calls.Add(1)
	return s.calendarRemote.AllowAll(ctx, takes, results)
}

// TestResetReachesOtherDenyCaches: an app server whose deny cache holds a
// key's denial (Retry-After 900 and more) serves the key again at most
// the cache's max age after a Reset made on another app server, without
// asking the store before then.
func TestResetReachesOtherDenyCaches(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit ratelimit.Limit
		opts  []ratelimit.Option
		seen  time.Duration // how long after the reset the other server serves the key
	}{
		{"4 an hour, the default max age", ratelimit.PerHour(4), nil, 10 * time.Second},
		{"a daily quota, the default max age", ratelimit.PerDay(4, nil), nil, 10 * time.Second},
		{"a block of 15 minutes", ratelimit.PerHour(4), []ratelimit.Option{ratelimit.WithBlock(15 * time.Minute)}, 10 * time.Second},
		{"a max age of 2 s", ratelimit.PerHour(4), []ratelimit.Option{ratelimit.WithDenyCacheMaxAge(2 * time.Second)}, 2 * time.Second},
		{"no max age: the denial's wait", ratelimit.PerHour(4), []ratelimit.Option{ratelimit.WithDenyCacheMaxAge(0)}, 15 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
			mem := memory.New(memory.WithClock(clock.Now))
			t.Cleanup(func() { mem.Close() })
			store := &sharedRemote{calendarRemote: calendarRemote{mem}}
			server := func() *ratelimit.Limiter {
				l, err := ratelimit.New(store, c.limit, append(c.opts, ratelimit.WithName("api"), ratelimit.WithPlainKeys())...)
				if err != nil {
					t.Fatal(err)
				}
				ratelimit.SetClock(l, clock.Now)
				return l
			}
			a, b := server(), server()
			for i, want := range []bool{true, true, true, true, false} {
				if res, err := a.Allow(context.Background(), "cust"); err != nil || res.Allowed != want {
					t.Fatalf("request %d: %+v, %v; want allowed %v", i+1, res, err, want)
				}
			}
			if err := b.Reset(context.Background(), "cust"); err != nil {
				t.Fatal(err)
			}
			calls := store.calls.Load()
			clock.Add(c.seen - time.Millisecond)
			if res, _ := a.Allow(context.Background(), "cust"); res.Allowed || store.calls.Load() != calls {
				t.Fatalf("%v after the reset: %+v, %d store calls; want the cached denial", c.seen-time.Millisecond, res, store.calls.Load()-calls)
			}
			clock.Add(time.Millisecond)
			if res, err := a.Allow(context.Background(), "cust"); err != nil || !res.Allowed || res.Remaining != 3 {
				t.Fatalf("%v after the reset: %+v, %v; want allowed, 3 left", c.seen, res, err)
			}
		})
	}
	if _, err := ratelimit.New(memory.New(), ratelimit.PerHour(1), ratelimit.WithDenyCacheMaxAge(-time.Second)); err == nil {
		t.Fatal("a negative max age accepted")
	}
}

package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// dirty is a Result no decision makes: AllowJoinedTo must overwrite all
// of it.
var dirty = ratelimit.Result{Allowed: true, Limit: ratelimit.PerSecond(99), Remaining: -7, RetryAfter: -1, ResetAfter: -1}

// joinedTo is AllowJoinedTo as a call that returns its Result, given res
// dirty first.
func joinedTo(store *memory.Store, ctx context.Context, prefix, key string, limit ratelimit.Limit, n int) (ratelimit.Result, error) {
	res := dirty
	err := store.AllowJoinedTo(ctx, prefix, key, &limit, n, &res)
	return res, err
}

// TestAllowJoinedIsAllowNOfTheJoin: a key given in two parts has the
// budget of the joined key, for every algorithm and for keys that cross
// the hash's 128-byte blocks at any point, and AllowJoined and
// AllowJoinedTo refuse what AllowN refuses, AllowJoinedTo leaving nothing
// of what res held.
func TestAllowJoinedIsAllowNOfTheJoin(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("x", 300)
	for _, alg := range []ratelimit.Algorithm{ratelimit.TokenBucket, ratelimit.FixedWindow, ratelimit.SlidingWindow, ratelimit.SlidingLog} {
		limit := ratelimit.Limit{Rate: 4, Period: time.Minute, Algorithm: alg}
		for _, tt := range []struct{ prefix, key string }{
			{"api/", "user-1"},
			{"", "user-1"},
			{"api/", ""},
			{long[:127], "ab"}, // the join crosses the first block
			{long[:128], "ab"},
			{"api/", long},
			{long, long[:50]},
		} {
			store := memory.New()
			for i := range 7 {
				// in parts, in place, whole, in turn: one budget
				var res ratelimit.Result
				var err error
				switch i % 3 {
				case 0:
					res, err = store.AllowJoined(ctx, tt.prefix, tt.key, limit, 1)
				case 1:
					res, err = joinedTo(store, ctx, tt.prefix, tt.key, limit, 1)
				default:
					res, err = store.AllowN(ctx, tt.prefix+tt.key, limit, 1)
				}
				if err != nil || res.Allowed != (i < 4) || res.Remaining != max(3-i, 0) || res.Limit != limit || res.Allowed != (res.RetryAfter == 0) {
					t.Fatalf("%v, %d+%d bytes, take %d: %+v %v; want allowed %v, remaining %d", alg, len(tt.prefix), len(tt.key), i, res, err, i < 4, max(3-i, 0))
				}
			}
			if store.Len() != 1 {
				t.Errorf("%v, %d+%d bytes: %d keys, want 1", alg, len(tt.prefix), len(tt.key), store.Len())
			}
			store.Close()
		}
	}
	store := memory.New()
	defer store.Close()
	for _, tt := range []struct {
		prefix, key string
		limit       ratelimit.Limit
		n           int
		want        error
	}{
		{"", "", ratelimit.PerMinute(1), 1, ratelimit.ErrEmptyKey},
		{"api/", "k", ratelimit.Limit{}, 1, ratelimit.ErrInvalidLimit},
		{"api/", "k", ratelimit.PerMinute(1), -1, ratelimit.ErrInvalidCost},
		{"api/", "k", ratelimit.PerMinute(1), 2, ratelimit.ErrCostExceedsCapacity},
	} {
		_, err := store.AllowJoined(ctx, tt.prefix, tt.key, tt.limit, tt.n)
		res, errTo := joinedTo(store, ctx, tt.prefix, tt.key, tt.limit, tt.n)
		_, whole := store.AllowN(ctx, tt.prefix+tt.key, tt.limit, tt.n)
		if !errors.Is(err, tt.want) || err.Error() != whole.Error() {
			t.Errorf("AllowJoined(%q, %q, %v, %d) = %v; want %v, as AllowN's %v", tt.prefix, tt.key, tt.limit, tt.n, err, tt.want, whole)
		}
		if !errors.Is(errTo, tt.want) || errTo.Error() != whole.Error() || res != (ratelimit.Result{}) {
			t.Errorf("AllowJoinedTo(%q, %q, %v, %d) = %+v, %v; want the zero Result and %v, as AllowN's %v", tt.prefix, tt.key, tt.limit, tt.n, res, errTo, tt.want, whole)
		}
	}
}

// TestAllowJoinedAllocatesNothing: a key in two parts is hashed where it
// is, never joined.
func TestAllowJoinedAllocatesNothing(t *testing.T) {
	store := memory.New()
	defer store.Close()
	ctx, limit := context.Background(), ratelimit.PerHour(1000)
	keys := []string{"a", "b", "c", "d"}
	i := 0
	var res ratelimit.Result
	if n := testing.AllocsPerRun(100, func() {
		store.AllowJoined(ctx, "api/", keys[i%len(keys)], limit, 1)
		store.AllowJoinedTo(ctx, "api/", keys[i%len(keys)], &limit, 1, &res)
		i++
	}); n != 0 {
		t.Errorf("%v allocations a decision, want 0", n)
	}
}

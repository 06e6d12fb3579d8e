package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	"github.com/ratelimit-go/ratelimit/store/storetest"
)

// The scripts pack state and replies as binary where the server's Lua has
// struct (a real Redis), and use strings where it has not (miniredis). The
// conformance suites run on miniredis and the real servers by default;
// these run the string encoding on the real servers too, and the store
// without batching, so that every variant is proven by the same oracles.

// These suites run one at a time, before the parallel ones: their timing
// cases (32 goroutines on one key for 2 s) would otherwise share the
// machine with every other suite's.

func TestConformanceRealRedisStringEncoding(t *testing.T) {
	for _, srv := range requireReal(t) {
		t.Run(srv.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) ratelimit.Store {
				return redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)), redisstore.WithStringEncoding())
			})
			storetest.RunWithClock(t, func(t *testing.T) (ratelimit.Store, func(time.Time)) {
				c := &appClock{}
				return redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)), redisstore.WithStringEncoding(), redisstore.WithAppClock(c.Now), redisstore.WithAppClockSlack(time.Minute)), c.Set
			}, storetest.NeverRewinds())
		})
	}
}

func TestConformanceWithoutBatching(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			if srv.name == "miniredis" && !slowTests() {
				t.Skip("the suite again, on miniredis without batching: set RATELIMIT_SLOW_TESTS=1 to run it (.ci/run does)")
			}
			storetest.Run(t, func(t *testing.T) ratelimit.Store {
				return redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)), redisstore.WithoutBatching())
			})
		})
	}
}

// TestEncodingByServer: a real Redis gets the binary state (the byte 1
// first), miniredis the string one; the forced string encoding writes
// strings on a real Redis.
func TestEncodingByServer(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers(t) {
		for _, forced := range []bool{false, true} {
			if forced && srv.name == "miniredis" {
				continue
			}
			name := srv.name
			if forced {
				name += "/string encoding"
			}
			t.Run(name, func(t *testing.T) {
				c := srv.client(t)
				opts := []redisstore.Option{redisstore.WithPrefix(prefix(t))}
				if forced {
					opts = append(opts, redisstore.WithStringEncoding())
				}
				s := redisstore.New(c, opts...)
				wantBinary := srv.name != "miniredis" && !forced
				for _, a := range algorithms[:3] {
					l := ratelimit.Limit{Rate: 10, Period: time.Minute, Algorithm: a}
					if _, err := s.AllowN(ctx, "k", l, 1); err != nil {
						t.Fatal(err)
					}
					v, err := c.Get(ctx, s.Key("k", a)).Result()
					if err != nil {
						t.Fatal(err)
					}
					if binary := v != "" && v[0] == 1; binary != wantBinary {
						t.Errorf("%v: state %q, binary %v; want binary %v", a, v, binary, wantBinary)
					}
				}
			})
		}
	}
}

// TestStateOfEarlierVersionsIsRead: keys written in the string encoding of
// earlier versions keep their budgets under every variant, so a deploy
// resets nothing.
func TestStateOfEarlierVersionsIsRead(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			hour := ratelimit.Limit{Rate: 10, Period: time.Hour}
			window := hour
			window.Algorithm = ratelimit.FixedWindow
			sliding := hour
			sliding.Algorithm = ratelimit.SlidingWindow
			hourUs := time.Hour.Microseconds()
			us := now.UnixMicro()
			start := us - us%hourUs
			for _, tt := range []struct {
				limit ratelimit.Limit
				old   string
				want  int // remaining after one more take
			}{
				// 3 tokens left a moment ago (10 an hour: no refill to speak of)
				{hour, formatInt(us) + ":3", 2},
				// 7 counted in the current window
				{window, formatInt(start+hourUs) + ":7", 2},
				// none in the last window, 4 in this one
				{sliding, formatInt(start) + ":0:4", 5},
			} {
				key := "old-" + tt.limit.Algorithm.String()
				if err := c.Set(ctx, s.Key(key, tt.limit.Algorithm), tt.old, time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
				res, err := s.AllowN(ctx, key, tt.limit, 1)
				if err != nil || !res.Allowed || res.Remaining != tt.want {
					t.Errorf("%v from %q: %+v, %v; want allowed, remaining %d", tt.limit.Algorithm, tt.old, res, err, tt.want)
				}
			}
		})
	}
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// TestAppClockSlack: the test-only slack reaches the scripts, so that a
// key outlives a test's app clock standing still (the real-server runs
// above use it).
func TestAppClockSlack(t *testing.T) {
	mr, c := newMini(t)
	clock := &appClock{}
	clock.Set(time.Unix(1_700_000_000, 0))
	s := redisstore.New(c, redisstore.WithAppClock(clock.Now), redisstore.WithAppClockSlack(time.Minute))
	if _, err := s.AllowN(context.Background(), "k", ratelimit.PerSecond(10), 1); err != nil {
		t.Fatal(err)
	}
	if ttl := mr.TTL(s.Key("k", ratelimit.TokenBucket)); ttl < time.Minute || ttl > time.Minute+time.Second {
		t.Fatalf("TTL %v, want the time until full plus a minute", ttl)
	}
}

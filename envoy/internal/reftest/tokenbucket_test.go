package reftest

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/envoy/rls"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	"golang.org/x/time/rate"
)

// bucketConfig is a token bucket of 5 tokens a second, 8 deep, and one of
// 3 a minute, 3 deep: rate = requests_per_unit per unit, capacity burst.
const bucketConfig = `
domain: buckets
descriptors:
  - key: fast
    rate_limit: {unit: second, requests_per_unit: 5, algorithm: token_bucket, burst: 8}
  - key: slow
    rate_limit: {unit: minute, requests_per_unit: 3, algorithm: token_bucket}
`

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// TestTokenBucketAgainstXTimeRate sends ratelimitd's Service a random
// stream of hits at injected times, on the memory store and on each real
// Redis the environment names (the scripts on the app's clock), and
// asserts each answer and limit_remaining equal golang.org/x/time/rate's
// AllowN and TokensAt on the same timeline.
func TestTokenBucketAgainstXTimeRate(t *testing.T) {
	type storeCase struct {
		name string
		make func(t *testing.T, now func() time.Time) ratelimit.Store
	}
	stores := []storeCase{{"memory", func(t *testing.T, now func() time.Time) ratelimit.Store {
		s := memory.New(memory.WithClock(now))
		t.Cleanup(func() { s.Close() })
		return s
	}}}
	if addr := os.Getenv("RATELIMIT_REDIS_ADDR"); addr != "" {
		for _, srv := range servers(addr) {
			stores = append(stores, storeCase{srv.name, func(t *testing.T, now func() time.Time) ratelimit.Store {
				c := srv.client()
				prefix := "reftest-bucket-" + token() + ":"
				t.Cleanup(func() { deleteKeys(t, srv, prefix); c.Close() })
				return redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithAppClock(now))
			}})
		}
	}
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			clk := &clock{now: time.Unix(1_800_000_000, 0)}
			limiter, err := ratelimit.New(sc.make(t, clk.Now), ratelimit.PerSecond(1),
				ratelimit.WithPlainKeys(), ratelimit.WithDenyCache(0), ratelimit.WithFailClosed(), ratelimit.WithTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := rls.LoadFiles([]rls.File{{Name: "config/buckets.yaml", Data: []byte(bucketConfig)}}, false)
			if err != nil {
				t.Fatal(err)
			}
			svc := rls.NewService(limiter, cfg, rls.Options{Now: clk.Now})
			refs := map[string]*rate.Limiter{
				"fast": rate.NewLimiter(5, 8),
				"slow": rate.NewLimiter(rate.Limit(3.0/60), 3),
			}
			rng := rand.New(rand.NewPCG(1, 2))
			allowedN := 0
			for i := range 600 {
				clk.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
				key := "fast"
				if rng.IntN(4) == 0 {
					key = "slow"
				}
				hits := 1 + rng.IntN(4)
				if rng.IntN(50) == 0 {
					hits = 9 // above either capacity: refused, nothing taken
				}
				resp, err := svc.ShouldRateLimit(context.Background(), step{hits: uint32(hits), descs: []string{key + "=x"}}.request("buckets"))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				now := clk.Now()
				allowed := refs[key].AllowN(now, hits)
				if allowed {
					allowedN++
				}
				st := resp.GetStatuses()[0]
				if got := st.GetCode() == resp.GetOverallCode() && st.GetCode().String() == "OK"; got != allowed {
					t.Fatalf("request %d (%s, %d hits at +%v): ratelimitd %v, x/time/rate allowed %v", i, key, hits, now.Sub(time.Unix(1_800_000_000, 0)), st.GetCode(), allowed)
				}
				// x/time/rate's float tokens, floored: ratelimitd's remaining
				// follows them even where exact arithmetic would have a
				// hair more (0.9999999999999987 for 1 at request 420).
				if want := uint32(math.Floor(refs[key].TokensAt(now))); allowed && st.GetLimitRemaining() != want {
					t.Fatalf("request %d (%s, %d hits): limit_remaining %d, x/time/rate has %d tokens left (%v)", i, key, hits, st.GetLimitRemaining(), want, refs[key].TokensAt(now))
				}
			}
			if allowedN < 100 || allowedN > 500 {
				t.Errorf("%d of 600 allowed: the stream should both pass and refuse often", allowedN)
			}
		})
	}
}

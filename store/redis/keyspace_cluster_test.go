package redisstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// scriptCounter counts the script calls a go-redis client sends (only
// those only accepts, if set).
type scriptCounter struct {
	calls atomic.Int64
	only  func(goredis.Cmder) bool
}

func (c *scriptCounter) count(cmd goredis.Cmder) {
	if name := cmd.Name(); (name == "evalsha" || name == "eval") && (c.only == nil || c.only(cmd)) {
		c.calls.Add(1)
	}
}

func (*scriptCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *scriptCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}

func (c *scriptCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// TestLongKeysKeepTheirPoliciesInOneSlot: on a real Redis Cluster, a
// limiter's client whose key is 200 bytes (a JWT, a long API key) is decided under
// two policies in one script call, as a short key is.
func TestLongKeysKeepTheirPoliciesInOneSlot(t *testing.T) {
	addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("set RATELIMIT_REDIS_CLUSTER_ADDRS to run against a real Redis Cluster (.ci/run does)")
	}
	t.Run("redis-cluster", func(t *testing.T) {
		cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() }); err != nil {
			t.Fatalf("the cluster named in the environment does not answer: %v", err)
		}
		var counter scriptCounter
		cc.AddHook(&counter)
		prefix := "ratelimit-test-" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
		store := redisstore.New(cc, redisstore.WithPrefix(prefix))
		for _, n := range []int{20, 200} {
			key := "x-api-key:" + strings.Repeat("j", n-len("x-api-key:"))
			// A budget of a minute: the first call loads the script on a
			// real cluster, on a machine that may be busy.
			var storeErr error
			l, err := ratelimit.New(store, ratelimit.PerSecond(10), ratelimit.WithName("api"),
				ratelimit.WithKeySecret([]byte("0123456789abcdef0123456789abcdef")),
				ratelimit.WithTimeout(time.Minute),
				ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")),
				ratelimit.WithErrorHandler(func(_ *http.Request, err error) { storeErr = err }),
				ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(100)}))
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-API-Key", strings.TrimPrefix(key, "x-api-key:"))
			if !l.Admit(httptest.NewRecorder(), r) || storeErr != nil { // loads the script on the key's node
				t.Fatalf("%d-byte key, first request: denied or failed (%v)", n, storeErr)
			}
			counter.calls.Store(0)
			if !l.Admit(httptest.NewRecorder(), r) || storeErr != nil {
				t.Fatalf("%d-byte key, second request: denied or failed (%v)", n, storeErr)
			}
			if got := counter.calls.Load(); got != 1 {
				t.Fatalf("%d-byte key: %d script calls for two policies, want 1 (one slot, one atomic call)", n, got)
			}
		}
	})
}

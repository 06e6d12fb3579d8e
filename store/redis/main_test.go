package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// quiet drops go-redis's own log lines (dial retries), which would bury the
// one message that says what is wrong.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// TestMain checks once that the Redis servers the environment names
// answer: if one does not, the run fails at once with one message, rather
// than every test waiting on it.
//
// It also drops what the library logs with slog's default logger: limiters
// that tests make without WithLogger would write their breakers' and error
// handlers' lines amid the test output. Tests that read the lines pass a
// logger of their own.
func TestMain(m *testing.M) {
	goredis.SetLogger(quiet{})
	slog.SetDefault(slog.New(slog.DiscardHandler))
	if err := checkNamedServers(); err != nil {
		fmt.Fprintln(os.Stderr, "store/redis:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func checkNamedServers() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if addr := os.Getenv("RATELIMIT_REDIS_ADDR"); addr != "" {
		c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
		defer c.Close()
		if err := c.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("RATELIMIT_REDIS_ADDR=%s does not answer (%v): start that Redis or unset the variable", addr, err)
		}
	}
	if addrs := os.Getenv("RATELIMIT_REDIS_CLUSTER_ADDRS"); addrs != "" {
		for _, addr := range strings.Split(addrs, ",") {
			c := goredis.NewClient(&goredis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
			err := c.Ping(ctx).Err()
			c.Close()
			if err != nil {
				return fmt.Errorf("RATELIMIT_REDIS_CLUSTER_ADDRS: %s does not answer (%v): start that cluster or unset the variable", addr, err)
			}
		}
	}
	return nil
}

package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestMisconfigurationIsReportedExactly: answers no retry can cure (a
// read-only replica, a server that wants a password, a key of another
// type) are ErrMisconfiguredStore errors that name the address, what it
// answered and what to change, and the limiter logs them apart from
// passing failures.
func TestMisconfigurationIsReportedExactly(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		setUp  func(t *testing.T) *goredis.Client // returns the store's client
		answer string                             // Redis's error
		fix    string                             // what the error says to change
	}{
		{"a read-only replica", func(t *testing.T) *goredis.Client {
			master := startRedis(t)
			replica := startRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))
			return goredis.NewClient(&goredis.Options{Addr: replica.Addr()})
		}, "READONLY", "read-only replica"},
		{"a server that wants a password", func(t *testing.T) *goredis.Client {
			p := startRedis(t)
			admin := goredis.NewClient(&goredis.Options{Addr: p.Addr()})
			defer admin.Close()
			if err := admin.ConfigSet(ctx, "requirepass", "secret").Err(); err != nil {
				t.Fatal(err)
			}
			return goredis.NewClient(&goredis.Options{Addr: p.Addr()})
		}, "NOAUTH", "Username and Password"},
		{"a key of another type", func(t *testing.T) *goredis.Client {
			p := startRedis(t)
			c := goredis.NewClient(&goredis.Options{Addr: p.Addr()})
			// The store's first call makes the key; then other data takes it.
			if _, err := redisstore.New(c).AllowN(ctx, "w/k", ratelimit.PerMinute(10), 1); err != nil {
				t.Fatal(err)
			}
			keys, err := c.Keys(ctx, "*").Result()
			if err != nil || len(keys) != 1 {
				t.Fatalf("keys %q, %v; want the store's one", keys, err)
			}
			c.Del(ctx, keys[0])
			c.LPush(ctx, keys[0], "other data")
			return c
		}, "WRONGTYPE", "prefix of its own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := tt.setUp(t)
			defer client.Close()
			addr := client.Options().Addr
			_, err := redisstore.New(client).AllowN(ctx, "w/k", ratelimit.PerMinute(10), 1)
			if !errors.Is(err, ratelimit.ErrMisconfiguredStore) {
				t.Fatalf("error %v, want an ErrMisconfiguredStore", err)
			}
			for _, want := range []string{addr, tt.answer, tt.fix} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}

			var logs syncBuffer
			l, err := ratelimit.New(redisstore.New(client), ratelimit.PerMinute(10), ratelimit.WithName("w"),
				ratelimit.WithPlainKeys(), // the key "k" reaches Redis as it is
				ratelimit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for range 20 {
				l.Allow(ctx, "k") // fails open, and is logged
			}
			// One line a second at most: one for calls well under a second,
			// one more for each second a busy machine took.
			most := 1 + int(time.Since(start)/time.Second)
			lines := strings.Count(logs.String(), "the store is misconfigured")
			if lines < 1 || lines > most || !strings.Contains(logs.String(), tt.answer) {
				t.Errorf("%d misconfiguration lines for 20 requests in %v, want 1 to %d naming %s:\n%s", lines, time.Since(start), most, tt.answer, logs.String())
			}
		})
	}
}

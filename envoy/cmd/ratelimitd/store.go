package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	goredis "github.com/redis/go-redis/v9"
)

// newStore returns the store the settings name: Redis (single, Cluster or
// Sentinel, as REDIS_TYPE says) at REDIS_URL, or without REDIS_URL the
// memory store; what closes it; and for Redis, what pings it.
func newStore(s settings) (ratelimit.Store, func() error, func(context.Context) error, error) {
	if s.redisURL == "" {
		m := memory.New()
		return m, func() error { m.Close(); return nil }, nil, nil
	}
	addrs := strings.Split(s.redisURL, ",")
	for i := range addrs {
		addrs[i] = strings.TrimSpace(strings.TrimPrefix(addrs[i], "redis://"))
	}
	// Every client keeps its context deadlines on its sockets
	// (ContextTimeoutEnabled), as docs/redis.md recommends: the limiter
	// then calls the store on the request's goroutine, bounded by its
	// budget, and the store sheds what it cannot send in time.
	var client goredis.UniversalClient
	switch s.redisType {
	case "CLUSTER":
		client = goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, Password: s.redisAuth, PoolSize: s.redisPoolSize, ContextTimeoutEnabled: true})
	case "SENTINEL":
		// The reference's form: the master's name, then the sentinels.
		if len(addrs) < 2 {
			return nil, nil, nil, fmt.Errorf("ratelimitd: REDIS_TYPE=SENTINEL: want REDIS_URL=master,sentinel[,sentinel...]")
		}
		client = goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: addrs[0], SentinelAddrs: addrs[1:], Password: s.redisAuth, PoolSize: s.redisPoolSize, ContextTimeoutEnabled: true})
	default:
		client = goredis.NewClient(&goredis.Options{Network: s.redisSocketType, Addr: addrs[0], Password: s.redisAuth, PoolSize: s.redisPoolSize, ContextTimeoutEnabled: true})
	}
	var opts []redisstore.Option
	if s.cacheKeyPrefix != "" {
		opts = append(opts, redisstore.WithPrefix(s.cacheKeyPrefix))
	}
	ping := func(ctx context.Context) error { return client.Ping(ctx).Err() }
	return redisstore.New(client, opts...), client.Close, ping, nil
}

// startupPingBudget is how long ratelimitd waits for Redis's first answer
// before it says so in its log.
const startupPingBudget = 5 * time.Second

// redisProblem is nil when ping answers within startupPingBudget, else
// what a log should say: the error, and a hint for the likely cause of a
// Redis that never answers, REDIS_SOCKET_TYPE left at its default "unix"
// (the reference's) beside a host:port REDIS_URL.
func redisProblem(ctx context.Context, ping func(context.Context) error, s settings) error {
	ctx, cancel := context.WithTimeout(ctx, startupPingBudget)
	defer cancel()
	err := ping(ctx)
	if err == nil {
		return nil
	}
	if s.redisSocketType == "unix" && s.redisType != "CLUSTER" && s.redisType != "SENTINEL" && !strings.HasPrefix(s.redisURL, "/") {
		return fmt.Errorf("REDIS_SOCKET_TYPE is unix (the default) but REDIS_URL %q looks like host:port: set REDIS_SOCKET_TYPE=tcp: %w", s.redisURL, err)
	}
	return err
}

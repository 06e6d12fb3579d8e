package main

import (
	"fmt"
	"strings"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
	goredis "github.com/redis/go-redis/v9"
)

// newStore returns the store the settings name: Redis (single, Cluster or
// Sentinel, as REDIS_TYPE says) at REDIS_URL, or without REDIS_URL the
// memory store, and what closes it.
func newStore(s settings) (ratelimit.Store, func() error, error) {
	if s.redisURL == "" {
		m := memory.New()
		return m, func() error { m.Close(); return nil }, nil
	}
	addrs := strings.Split(s.redisURL, ",")
	for i := range addrs {
		addrs[i] = strings.TrimSpace(strings.TrimPrefix(addrs[i], "redis://"))
	}
	var client goredis.UniversalClient
	switch s.redisType {
	case "CLUSTER":
		client = goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, Password: s.redisAuth, PoolSize: s.redisPoolSize})
	case "SENTINEL":
		// The reference's form: the master's name, then the sentinels.
		if len(addrs) < 2 {
			return nil, nil, fmt.Errorf("ratelimitd: REDIS_TYPE=SENTINEL: want REDIS_URL=master,sentinel[,sentinel...]")
		}
		client = goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: addrs[0], SentinelAddrs: addrs[1:], Password: s.redisAuth, PoolSize: s.redisPoolSize})
	default:
		client = goredis.NewClient(&goredis.Options{Network: s.redisSocketType, Addr: addrs[0], Password: s.redisAuth, PoolSize: s.redisPoolSize})
	}
	var opts []redisstore.Option
	if s.cacheKeyPrefix != "" {
		opts = append(opts, redisstore.WithPrefix(s.cacheKeyPrefix))
	}
	return redisstore.New(client, opts...), client.Close, nil
}

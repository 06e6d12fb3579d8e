package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

// redisOptions reads the -redis flag into the options of
// goredis.NewUniversalClient, which makes a Client for one address, a
// ClusterClient for several, and a Sentinel-backed FailoverClient for a
// master name:
//
//	localhost:6379                          one node
//	host1:7000,host2:7000,host3:7000        a Cluster (any of its nodes)
//	redis://user:pass@host:6379/2           one node, with go-redis's URL options
//	redis://host1:7000?addr=host2:7000      a Cluster, by URL
//	redis://sentinel1:26379?master_name=mymaster&addr=sentinel2:26379
//	                                        Sentinel, by URL
//
// Timeouts the URL does not set get the ones docs/redis.md recommends:
// short, so that a Redis that hangs frees its connections soon (the
// limiter's own 100 ms budget bounds every decision whatever they are).
func redisOptions(flag string) (*goredis.UniversalOptions, error) {
	var o *goredis.UniversalOptions
	switch {
	case flag == "":
		return nil, errors.New("-redis: empty address")
	case strings.Contains(flag, "://"):
		u, err := url.Parse(flag)
		if err != nil {
			return nil, fmt.Errorf("-redis: %w", err)
		}
		q := u.Query()
		switch {
		case q.Has("master_name"):
			f, err := goredis.ParseFailoverURL(flag)
			if err != nil {
				return nil, fmt.Errorf("-redis: %w", err)
			}
			o = &goredis.UniversalOptions{
				Addrs: f.SentinelAddrs, MasterName: f.MasterName, DB: f.DB,
				Username: f.Username, Password: f.Password,
				SentinelUsername: f.SentinelUsername, SentinelPassword: f.SentinelPassword,
				TLSConfig:   f.TLSConfig,
				DialTimeout: f.DialTimeout, ReadTimeout: f.ReadTimeout, WriteTimeout: f.WriteTimeout, PoolTimeout: f.PoolTimeout,
				MinIdleConns: f.MinIdleConns,
			}
		case q.Has("addr"):
			c, err := goredis.ParseClusterURL(flag)
			if err != nil {
				return nil, fmt.Errorf("-redis: %w", err)
			}
			o = &goredis.UniversalOptions{
				Addrs: c.Addrs, Username: c.Username, Password: c.Password, TLSConfig: c.TLSConfig,
				DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout, PoolTimeout: c.PoolTimeout,
				MinIdleConns: c.MinIdleConns,
			}
		default:
			s, err := goredis.ParseURL(flag)
			if err != nil {
				return nil, fmt.Errorf("-redis: %w", err)
			}
			o = &goredis.UniversalOptions{
				Addrs: []string{s.Addr}, DB: s.DB, Username: s.Username, Password: s.Password, TLSConfig: s.TLSConfig,
				DialTimeout: s.DialTimeout, ReadTimeout: s.ReadTimeout, WriteTimeout: s.WriteTimeout, PoolTimeout: s.PoolTimeout,
				MinIdleConns: s.MinIdleConns,
			}
		}
	default:
		addrs := strings.Split(flag, ",")
		for _, a := range addrs {
			if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
				return nil, fmt.Errorf("-redis: %q is not host:port", a)
			}
		}
		o = &goredis.UniversalOptions{Addrs: addrs}
	}
	// go-redis fills a URL's missing timeouts with its defaults; only the
	// ones it left unset (0) are ours to choose.
	setDefault(&o.DialTimeout, 200*time.Millisecond)
	setDefault(&o.ReadTimeout, 100*time.Millisecond)
	setDefault(&o.WriteTimeout, 100*time.Millisecond)
	setDefault(&o.PoolTimeout, 100*time.Millisecond)
	o.ContextTimeoutEnabled = true
	// One dial attempt: a refused connection fails at once, within the
	// limiter's budget, and its log says "connection refused" (go-redis's
	// 5 attempts 100 ms apart outlast it, and read as a timeout).
	if o.DialerRetries <= 0 {
		o.DialerRetries = 1
	}
	// Connections kept dialled (per node, on a Cluster), so that a burst of
	// requests does not wait for dials the budget may not hold.
	if o.MinIdleConns == 0 {
		o.MinIdleConns = 4
	}
	return o, nil
}

// warmRedis dials c's connections before the first request, as
// docs/redis.md recommends: on a busy machine, a burst at start-up that
// waits for the dials (and, on a Cluster, for its slots) sends part of its
// decisions to the fallback. It pings every master of a Cluster, else the
// node. A Redis that does not answer within a second is left to the
// limiter, whose fallback decides until it does.
func warmRedis(c goredis.UniversalClient) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if cc, ok := c.(*goredis.ClusterClient); ok {
		cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() })
		return
	}
	c.Ping(ctx)
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d == 0 {
		*d = v
	}
}

// quietRedisLog silences go-redis's own log, which writes a line per failed
// dial, several a second while Redis is down: the limiter logs the failures
// itself, at most one line a second, saying what failed.
func quietRedisLog() { goredis.SetLogger(&logging.VoidLogger{}) }

// describeRedis names what o reaches, for the log.
func describeRedis(o *goredis.UniversalOptions) string {
	switch {
	case o.MasterName != "":
		return fmt.Sprintf("Redis Sentinel (master %s via %s)", o.MasterName, strings.Join(o.Addrs, ","))
	case len(o.Addrs) > 1:
		return "Redis Cluster (" + strings.Join(o.Addrs, ",") + ")"
	}
	return "Redis (" + o.Addrs[0] + ")"
}

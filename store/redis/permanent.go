package redisstore

import (
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// permanent is the answers of Redis that no retry cures, by the prefix of
// the error, with what to change.
var permanent = []struct{ prefix, fix string }{
	{"MOVED", "it is a Redis Cluster node: use goredis.NewClusterClient with the cluster's addresses"},
	{"ASK", "it is a Redis Cluster node: use goredis.NewClusterClient with the cluster's addresses"},
	{"READONLY", "it is a read-only replica: point the client at the master, or use goredis.NewFailoverClient"},
	{"NOAUTH", "it wants authentication: set the client's Username and Password"},
	{"WRONGPASS", "it refused the client's Username and Password"},
	{"NOPERM", "its ACL does not let the client's user run EVALSHA, EVAL and TIME on the store's keys"},
	{"WRONGTYPE", "a key under the store's prefix holds other data: give the store a prefix of its own (WithPrefix)"},
	// Redis 6+ refuses a long command from a client that has not
	// authenticated before it can answer NOAUTH.
	{"Protocol error: unauthenticated", "it wants authentication (NOAUTH): set the client's Username and Password"},
	// go-redis's HasErrorPrefix drops the "ERR " these errors start with.
	{"unknown command", "it does not run Lua scripts (EVALSHA, EVAL), which the store needs"},
}

// classify marks err, an error of the Redis at addr, as a
// ratelimit.ErrMisconfiguredStore when no retry can cure it, saying which
// address answered what and what to change; other errors are returned as
// they are.
func classify(err error, addr string) error {
	for _, p := range permanent {
		if goredis.HasErrorPrefix(err, p.prefix) {
			return fmt.Errorf("%w: %s answered %w: %s", ratelimit.ErrMisconfiguredStore, addr, err, p.fix)
		}
	}
	return err
}

// addr names the server the store's client talks to, for errors.
func (s *Store) addr() string {
	switch c := s.client.(type) {
	case *goredis.Client:
		return c.Options().Addr
	case *goredis.ClusterClient:
		return "the cluster"
	case *goredis.Ring:
		return "the ring"
	}
	return "Redis"
}

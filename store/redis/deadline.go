package redisstore

import goredis "github.com/redis/go-redis/v9"

// KeepsDeadlines reports whether the store's calls return by their
// context's deadline: true when its client has ContextTimeoutEnabled (a
// *goredis.Client, *goredis.ClusterClient or *goredis.Ring; the
// recommended setting, see docs/redis.md). A limiter then calls the
// store on the request's own goroutine, with its time budget as the
// context's deadline, rather than on a goroutine of its own. A decision
// queued for a batch leaves the queue unsent when its context ends (an
// error that wraps [ratelimit.ErrNotSent]); one sent returns when Redis
// answers or at its deadline, the socket's; one carried in a batch at the
// latest deadline of the batch's decisions, which for the decisions of
// one limiter is at most one budget later. Without ContextTimeoutEnabled,
// go-redis waits for its own read timeout whatever the context, and
// KeepsDeadlines is false.
func (s *Store) KeepsDeadlines() bool {
	switch c := s.client.(type) {
	case *goredis.Client:
		return c.Options().ContextTimeoutEnabled
	case *goredis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *goredis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

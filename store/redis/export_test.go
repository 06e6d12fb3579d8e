package redis

import (
	"context"

	"github.com/ratelimit-go/ratelimit"
)

// WithStringEncoding forces the scripts' string encoding, the one servers
// without Lua's struct get, so that tests prove it on real servers too.
func WithStringEncoding() Option {
	return func(s *Store) { s.scripts = &stringsOnly }
}

// BatchTake is one decision of DecideBatch.
type BatchTake struct {
	Ctx   context.Context
	Key   string
	Limit ratelimit.Limit
	N     int
}

// DecideBatch sends takes as one batch, in order, as the group commit
// does, and returns each one's outcome.
func DecideBatch(s *Store, takes []BatchTake) ([]ratelimit.Result, []error) {
	batch := make([]*pending, len(takes))
	for i, t := range takes {
		batch[i] = &pending{ctx: t.Ctx, key: s.Key(t.Key, t.Limit.Algorithm), limit: t.Limit, n: t.N, deadline: s.deadlineArg(t.Ctx)}
	}
	s.send(batch)
	res, errs := make([]ratelimit.Result, len(takes)), make([]error, len(takes))
	for i, p := range batch {
		res[i], errs[i] = p.res, p.err
	}
	return res, errs
}

// Queued is the number of decisions waiting in the store's batcher (one
// node).
func Queued(s *Store) int {
	s.batchers.one.mu.Lock()
	defer s.batchers.one.mu.Unlock()
	return len(s.batchers.one.queue)
}

// MaxSenders and MaxQueued are the batcher's bounds.
const (
	MaxSenders = maxSenders
	MaxQueued  = maxQueued
)

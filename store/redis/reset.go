package redisstore

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Resetter = (*Store)(nil)

// Reset implements [ratelimit.Resetter] with one DEL of key's Redis key
// under limit's algorithm: the budget is full again on every app server
// at once. It is sent at most once, like a decision.
func (s *Store) Reset(ctx context.Context, key string, limit ratelimit.Limit) error {
	if err := ratelimit.ValidateCall(key, limit, 0); err != nil {
		return err
	}
	if s.client == nil {
		return ErrNilClient
	}
	cmd := onceCmd{goredis.NewCmd(ctx, "del", s.Key(key, limit.Algorithm))}
	if err := s.client.Process(ctx, cmd); err != nil {
		return fmt.Errorf("ratelimit/redis: reset: %w", classify(err, s.addr()))
	}
	return nil
}

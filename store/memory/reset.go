package memory

import (
	"context"

	"github.com/ratelimit-go/ratelimit"
)

var _ ratelimit.Resetter = (*Store)(nil)

// Reset implements [ratelimit.Resetter]: it forgets key's budget under
// limit, which is then full again, as a key never seen.
func (s *Store) Reset(ctx context.Context, key string, limit ratelimit.Limit) error {
	if err := ratelimit.ValidateCall(key, limit, 0); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h := s.hash(key, limit.Algorithm)
	sh := &s.shards[h>>s.shift]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if i, found := sh.cells.find(h); found {
		sh.cells.deleteAt(i)
	}
	if len(sh.logs) > 0 {
		delete(sh.logs, h)
	}
	return nil
}

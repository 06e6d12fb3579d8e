package ratelimit

import (
	"errors"
	"fmt"
)

// WithFallback decides on store, a local one such as memory.New(), while
// the limiter's own store fails or its [Breaker] is open, so that an outage
// neither lets every request through nor refuses everyone. With instances
// app servers sharing the main store, each enforces its share of the
// limit, Envoy's local_cluster_rate_limit idea: Rate and Burst divided by
// instances, rounded up, so that the fleet as a whole stays near the limit
// (a request whose cost exceeds the share gets a share of its cost). The
// failure is still told to the error handler. Without a fallback the
// limiter fails open, or closed with [WithFailClosed].
func WithFallback(store Store, instances int) Option {
	return func(l *Limiter) error {
		if store == nil {
			return errors.New("ratelimit: WithFallback(nil, ...)")
		}
		if instances < 1 {
			return fmt.Errorf("ratelimit: WithFallback: %d instances, want at least 1", instances)
		}
		l.fallback, l.instances = store, instances
		return nil
	}
}

// share is limit divided between instances app servers, rounded up, with
// room for a request of cost n.
func share(limit Limit, instances, n int) Limit {
	if instances <= 1 {
		return limit
	}
	limit.Rate = max(ceilDiv(limit.Rate, instances), 1)
	if limit.Burst > 0 {
		limit.Burst = max(ceilDiv(limit.Burst, instances), 1)
	}
	if c := limit.Capacity(); n > c {
		if limit.Algorithm == TokenBucket {
			limit.Burst = n
		} else {
			limit.Rate = n
		}
	}
	return limit
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Package reference is the baseline of the Redis suite: the course's token
// bucket script (HMGET tokens, ts / HSET / EXPIRE), run as its users run it.
package reference

import (
	"context"
	_ "embed"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

//go:embed reference.lua
var lua string

var script = goredis.NewScript(lua)

// Bucket is a token bucket of Capacity tokens refilled at Rate per second,
// kept in Redis by the reference script.
type Bucket struct {
	Client   goredis.Scripter
	Prefix   string
	Capacity int
	Rate     float64
}

// Allow takes one token from key's bucket and reports whether it did.
func (b *Bucket) Allow(ctx context.Context, key string) (bool, error) {
	now := float64(time.Now().UnixMicro()) / 1e6
	v, err := script.Run(ctx, b.Client, []string{b.Prefix + key}, b.Capacity, b.Rate, now, 1).Int64Slice()
	if err != nil {
		return false, err
	}
	return v[0] == 1, nil
}

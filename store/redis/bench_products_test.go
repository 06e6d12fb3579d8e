package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// BenchmarkLimiterProducts measures, in one run on a real redis-server, a
// Limiter's decision plain, with a block (its report rides the decision:
// AllowAll), and a charge (one booking), over 10,000 keys, each allowed.
// Report with/plain ratios.
func BenchmarkLimiterProducts(b *testing.B) {
	c := benchClient(b)
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	limit := ratelimit.PerSecond(1_000_000)
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
		op   func(l *ratelimit.Limiter, key string) error
	}{
		{"allow", nil, allow},
		{"allow-with-block", []ratelimit.Option{ratelimit.WithBlock(time.Minute)}, allow},
		{"charge", nil, func(l *ratelimit.Limiter, key string) error {
			return l.Charge(context.Background(), key, 1)
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			store := redisstore.New(c, redisstore.WithPrefix(prefix(nil)))
			l, err := ratelimit.New(store, limit, append(tt.opts, ratelimit.WithName("bench"), ratelimit.WithPlainKeys())...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := tt.op(l, keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

var errDenied = errors.New("denied")

func allow(l *ratelimit.Limiter, key string) error {
	res, err := l.Allow(context.Background(), key)
	if err == nil && !res.Allowed {
		return errDenied
	}
	return err
}

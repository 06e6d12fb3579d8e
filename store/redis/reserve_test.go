package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestReserveSeenByOtherInstances: a booking made through one store is in
// Redis, so another store on the same server (another instance of the
// service) waits behind it, and a cancellation through the other gives
// the tokens back to both.
func TestReserveSeenByOtherInstances(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			p := redisstore.WithPrefix(prefix(t))
			c := srv.client(t) // one server; two stores, as two instances have
			a, b := redisstore.New(c, p), redisstore.New(c, p)
			ctx, l := context.Background(), ratelimit.PerHour(2)
			first, err := a.ReserveN(ctx, "k", l, 2, 0)
			if err != nil || !first.Allowed || first.Delay != 0 {
				t.Fatalf("a.ReserveN = %+v, %v; want booked now", first, err)
			}
			second, err := a.ReserveN(ctx, "k", l, 1, time.Hour)
			if err != nil || !second.Allowed || second.Delay < 29*time.Minute {
				t.Fatalf("a.ReserveN = %+v, %v; want booked in 30 minutes", second, err)
			}
			res, err := b.AllowN(ctx, "k", l, 1)
			if err != nil || res.Allowed || res.RetryAfter < 59*time.Minute {
				t.Fatalf("b.AllowN = %+v, %v; want denied for an hour behind a's booking", res, err)
			}
			if err := b.CancelReservation(ctx, "k", l, second); err != nil {
				t.Fatal(err)
			}
			res, err = b.AllowN(ctx, "k", l, 0)
			if err != nil || res.RetryAfter != 0 || res.ResetAfter > time.Hour+time.Second || res.ResetAfter < 59*time.Minute {
				t.Fatalf("after the cancellation, b.AllowN(0) = %+v, %v; want the bucket back at empty", res, err)
			}
			r, err := a.ReserveN(ctx, "k", l, 1, 31*time.Minute)
			if err != nil || !r.Allowed || r.Delay > 31*time.Minute {
				t.Fatalf("a.ReserveN after the cancellation = %+v, %v; want booked within 30 minutes", r, err)
			}
		})
	}
}

// BenchmarkReserveN is ReserveN (no wait) on 10,000 keys whose budgets
// never run out, from 1 and 64 goroutines: the load of BenchmarkStore,
// whose AllowN it is compared with when both run together.
func BenchmarkReserveN(b *testing.B) {
	c := benchClient(b)
	s := redisstore.New(c, redisstore.WithPrefix("bench-reserve:"))
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	ctx := context.Background()
	keys := benchKeyNames()
	for _, par := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(par), func(b *testing.B) {
			measure(b, c, par, func(i int64) error {
				_, err := s.ReserveN(ctx, keys[i%benchKeys], l, 1, 0)
				return err
			})
		})
	}
}

package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// BenchmarkAllowAllVsAllowN is AllowAll of 2 and of 4 takes (the limits
// of one client: a shared hash tag) against AllowN on 10,000 clients
// whose budgets never run out (every call writes), from 1 and 64
// goroutines, in one run, taking turns as BenchmarkReserveVsAllowN's
// loads do. It reports each one's time, Redis's time and script calls
// per decision, and the ratios of AllowAll's times to AllowN's
// (all2/allow, all4/allow).
func BenchmarkAllowAllVsAllowN(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	keys := benchKeyNames()
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	allow := redisstore.New(c, redisstore.WithPrefix("bench-ava-allow:"))
	all := redisstore.New(c, redisstore.WithPrefix("bench-ava-all:"))
	names := []string{"a/", "b/", "c/", "d/"}
	allOf := func(k int) func(int64) error {
		return func(i int64) error {
			client := keys[i%benchKeys]
			takes := make([]ratelimit.Take, k)
			for j := range takes {
				takes[j] = ratelimit.Take{Key: names[j] + client, Limit: l, N: 1}
			}
			return all.AllowAll(ctx, takes, make([]ratelimit.Result, k))
		}
	}
	turns := []turn{
		{"allow", func(i int64) error {
			_, err := allow.AllowN(ctx, keys[i%benchKeys], l, 1)
			return err
		}},
		{"all2", allOf(2)},
		{"all4", allOf(4)},
	}
	for _, t := range turns {
		if err := t.f(0); err != nil { // loads the scripts
			b.Fatal(err)
		}
	}
	for _, par := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(par), func(b *testing.B) {
			takeTurns(b, c, par, turns)
		})
	}
}

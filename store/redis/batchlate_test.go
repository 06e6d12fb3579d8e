package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestBatchFindsItsLateTakesWhereverTheyAre: batch.lua reads the takes'
// own deadlines only when the batch's earliest one has passed, so the
// earliest must be the earliest wherever it sits: before, between or after
// takes with no deadline and takes with a deadline far ahead. A late take
// answers ErrLate and takes nothing; the others are decided.
func TestBatchFindsItsLateTakesWhereverTheyAre(t *testing.T) {
	bg := context.Background()
	ahead, cancel := context.WithTimeout(bg, time.Hour)
	defer cancel()
	past, cancelPast := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancelPast()
	late := lateContext{past}
	ctxs := map[byte]context.Context{'-': bg, 'A': ahead, 'L': late}
	for _, tt := range []string{"L", "AL", "LA", "-AL", "A-L-A", "ALA", "-L-", "AAA", "---"} {
		t.Run(tt, func(t *testing.T) {
			for _, srv := range servers(t) {
				t.Run(srv.name, func(t *testing.T) {
					s := redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
					learnClock(t, s)
					l := ratelimit.Limit{Rate: 10, Period: time.Hour}
					takes := make([]redisstore.BatchTake, len(tt))
					for i := range takes {
						takes[i] = redisstore.BatchTake{Ctx: ctxs[tt[i]], Key: "k", Limit: l, N: 1}
					}
					res, errs := redisstore.DecideBatch(s, takes)
					taken := 0
					for i := range takes {
						if tt[i] == 'L' {
							if !errors.Is(errs[i], redisstore.ErrLate) {
								t.Errorf("take %d of %s: %+v, %v; want ErrLate", i, tt, res[i], errs[i])
							}
							continue
						}
						taken++
						if errs[i] != nil || !res[i].Allowed || res[i].Remaining != 10-taken {
							t.Errorf("take %d of %s: %+v, %v; want allowed, remaining %d", i, tt, res[i], errs[i], 10-taken)
						}
					}
					// the late takes took nothing
					if r, err := s.AllowN(bg, "k", l, 0); err != nil || r.Remaining != 10-taken {
						t.Errorf("after %s: %+v, %v; want remaining %d", tt, r, err, 10-taken)
					}
				})
			}
		})
	}
}

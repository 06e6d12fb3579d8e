package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// TestBatchedBookingsDecideAsAlone: takes, bookings and cancellations
// sent as one batch decide exactly as the same calls sent one by one at
// the same instant (the app's clock, fixed), on two keys of one slot: the
// same bookings, delays, instants and results, and the same state after.
func TestBatchedBookingsDecideAsAlone(t *testing.T) {
	bg := context.Background()
	l := ratelimit.Limit{Rate: 10, Period: time.Second, Burst: 5}
	for _, srv := range servers(t) {
		for _, strs := range []bool{false, true} {
			name := srv.name
			if strs {
				name += "/string encoding"
			}
			t.Run(name, func(t *testing.T) {
				c := srv.client(t)
				clock := &appClock{}
				clock.Set(time.Unix(1_700_000_000, 123_456_000))
				store := func() *redisstore.Store {
					opts := []redisstore.Option{redisstore.WithPrefix(prefix(t)), redisstore.WithAppClock(clock.Now)}
					if strs {
						opts = append(opts, redisstore.WithStringEncoding())
					}
					return redisstore.New(c, opts...)
				}
				alone, batched := store(), store()
				// Each step's Cancel is the booking of an earlier step, in the
				// run (alone or batched) it is part of.
				type step struct {
					take   redisstore.BatchTake
					cancel int // 1 + the step whose booking it cancels; 0: none
				}
				rounds := [][]step{{
					{take: redisstore.BatchTake{Key: "a/k", N: 3}},
					{take: redisstore.BatchTake{Key: "a/k", N: 4, Reserve: true, MaxWait: time.Second}},
					{take: redisstore.BatchTake{Key: "a/k", N: 2, Reserve: true}},
					{take: redisstore.BatchTake{Key: "b/k", N: 5, Reserve: true}},
					{take: redisstore.BatchTake{Key: "a/k", N: 1, Reserve: true, MaxWait: ratelimit.MaxPeriod}},
					{take: redisstore.BatchTake{Key: "b/k", N: 2, Reserve: true, MaxWait: 150 * time.Millisecond}},
					{take: redisstore.BatchTake{Key: "b/k", N: 1}},
				}, {
					{take: redisstore.BatchTake{Key: "a/k", N: 0}},
					{take: redisstore.BatchTake{Key: "a/k"}, cancel: 5}, // the last booking: all back
					{take: redisstore.BatchTake{Key: "a/k"}, cancel: 2}, // one before it: part back
					{take: redisstore.BatchTake{Key: "a/k", N: 0}},
					{take: redisstore.BatchTake{Key: "b/k"}, cancel: 4}, // its instant has passed
					{take: redisstore.BatchTake{Key: "a/k", N: 2, Reserve: true, MaxWait: time.Second}},
					{take: redisstore.BatchTake{Key: "a/k", N: 1}},
					{take: redisstore.BatchTake{Key: "b/k", N: 3, Reserve: true, MaxWait: time.Second}},
				}}
				var aloneBooked, batchBooked []ratelimit.Reservation
				for r, round := range rounds {
					clock.Set(clock.Now().Add(time.Duration(r) * 50 * time.Millisecond))
					takes := make([]redisstore.BatchTake, len(round))
					var want []ratelimit.Reservation
					for i, st := range round {
						tk := st.take
						tk.Ctx, tk.Limit = bg, l
						takes[i] = tk
						var got ratelimit.Reservation
						var err error
						switch {
						case st.cancel > 0:
							err = alone.CancelReservation(bg, tk.Key, l, aloneBooked[st.cancel-1])
							takes[i].Cancel = &batchBooked[st.cancel-1]
						case tk.Reserve:
							got, err = alone.ReserveN(bg, tk.Key, l, tk.N, tk.MaxWait)
						default:
							got.Result, err = alone.AllowN(bg, tk.Key, l, tk.N)
						}
						if err != nil {
							t.Fatalf("round %d step %d alone: %v", r, i, err)
						}
						want = append(want, got)
					}
					got, errs := redisstore.DecideMixed(batched, takes)
					for i := range round {
						if errs[i] != nil {
							t.Fatalf("round %d step %d batched: %v", r, i, errs[i])
						}
						if round[i].cancel > 0 {
							continue // nothing to compare but the error
						}
						if !got[i].At.Equal(want[i].At) || got[i].Result != want[i].Result || got[i].Tokens != want[i].Tokens || got[i].Delay != want[i].Delay {
							t.Errorf("round %d step %d (%+v): batched %+v, alone %+v", r, i, round[i].take, got[i], want[i])
						}
					}
					if r == 0 {
						aloneBooked, batchBooked = want, got
					}
				}
				// The state after: the same for every key.
				for _, k := range []string{"a/k", "b/k"} {
					g, err1 := batched.ReserveN(bg, k, l, 1, time.Hour)
					w, err2 := alone.ReserveN(bg, k, l, 1, time.Hour)
					if err1 != nil || err2 != nil || g.Result != w.Result || g.Delay != w.Delay {
						t.Errorf("%s after the batches: batched %+v, %v; alone %+v, %v", k, g, err1, w, err2)
					}
				}
			})
		}
	}
}

// TestLateBookingInBatchTakesNothing: a booking or a cancellation that
// reaches Redis after its deadline, in the middle of a batch, takes and
// gives back nothing, and the bookings after it are decided with their
// own bounds.
func TestLateBookingInBatchTakesNothing(t *testing.T) {
	bg := context.Background()
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			s := redisstore.New(srv.client(t), redisstore.WithPrefix(prefix(t)))
			learnClock(t, s)
			past, cancel := context.WithDeadline(bg, time.Now().Add(-time.Second))
			defer cancel()
			late := lateContext{past}
			l := ratelimit.PerHour(2)
			book := func(ctx context.Context, n int, maxWait time.Duration) redisstore.BatchTake {
				return redisstore.BatchTake{Ctx: ctx, Key: "k", Limit: l, N: n, Reserve: true, MaxWait: maxWait}
			}
			got, errs := redisstore.DecideMixed(s, []redisstore.BatchTake{
				book(bg, 2, 0),
				book(late, 1, 0),
				book(bg, 1, time.Hour),
			})
			if errs[0] != nil || !got[0].Allowed || got[0].Delay != 0 {
				t.Fatalf("first booking: %+v, %v; want booked now", got[0], errs[0])
			}
			if !errors.Is(errs[1], redisstore.ErrLate) {
				t.Fatalf("late booking: %+v, %v; want ErrLate", got[1], errs[1])
			}
			if errs[2] != nil || !got[2].Allowed || got[2].Delay < 29*time.Minute || got[2].Delay > 30*time.Minute {
				t.Fatalf("booking after the late one: %+v, %v; want booked in 30 minutes, with its own bound", got[2], errs[2])
			}
			third := got[2]
			for _, c := range []struct {
				maxWait time.Duration
				booked  bool
			}{
				{2 * time.Hour, true}, // behind the third: an hour
				{0, false},
			} {
				got, errs = redisstore.DecideMixed(s, []redisstore.BatchTake{
					{Ctx: late, Key: "k", Limit: l, Cancel: &third},
					book(bg, 1, c.maxWait),
				})
				if !errors.Is(errs[0], redisstore.ErrLate) {
					t.Fatalf("late cancellation: %v; want ErrLate", errs[0])
				}
				if errs[1] != nil || got[1].Allowed != c.booked {
					t.Fatalf("booking with bound %v after a late cancellation: %+v, %v; want booked %v", c.maxWait, got[1], errs[1], c.booked)
				}
			}
		})
	}
}

// TestConcurrentBookingsAreBatchedAndExact: 64 goroutines booking (with
// no wait), cancelling and taking on 8 keys send fewer script calls than
// decisions, at most one each, and every key admits exactly its budget.
// A cancellation comes after its booking's instant (Redis's clock has
// moved on), so it gives nothing back.
func TestConcurrentBookingsAreBatchedAndExact(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			hook := &countingHook{}
			c.AddHook(hook)
			s := redisstore.New(c, redisstore.WithPrefix(prefix(t)))
			const workers, calls, keys, budget = 64, 40, 8, 200
			l := ratelimit.Limit{Rate: 1, Period: 24 * time.Hour, Burst: budget}
			ctx := context.Background()
			if _, err := s.ReserveN(ctx, "warm", l, 1, 0); err != nil { // loads the scripts
				t.Fatal(err)
			}
			if _, err := s.AllowN(ctx, "warm", l, 1); err != nil {
				t.Fatal(err)
			}
			before := hook.n.Load()
			var admitted [keys]atomic.Int64
			var decisions atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range calls {
						k := (w + i) % keys
						key := fmt.Sprint("k", k)
						if i%2 == 0 {
							res, err := s.AllowN(ctx, key, l, 1)
							decisions.Add(1)
							if err != nil {
								t.Error(err)
								return
							}
							if res.Allowed {
								admitted[k].Add(1)
							}
							continue
						}
						r, err := s.ReserveN(ctx, key, l, 1, 0)
						decisions.Add(1)
						if err != nil {
							t.Error(err)
							return
						}
						if !r.Allowed {
							continue
						}
						if r.Delay != 0 {
							t.Errorf("a booking with no wait: %+v", r)
						}
						admitted[k].Add(1)
						if i%4 == 1 {
							if err := s.CancelReservation(ctx, key, l, r); err != nil {
								t.Error(err)
								return
							}
							decisions.Add(1)
						}
					}
				})
			}
			wg.Wait()
			sent, made := hook.n.Load()-before, decisions.Load()
			t.Logf("%d decisions in %d script calls", made, sent)
			if sent > made {
				t.Errorf("%d decisions sent %d commands, want at most one each", made, sent)
			}
			if sent == made {
				t.Errorf("%d decisions from %d goroutines sent %d calls: none was batched", made, workers, sent)
			}
			for k := range keys {
				if got := admitted[k].Load(); got != budget {
					t.Errorf("key %d admitted %d of %d takes and bookings, want exactly its budget %d", k, got, workers*calls/keys, budget)
				}
			}
		})
	}
}

package inflight_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// restartingSlots is a shared (not Local) store over memory slots that can
// restart without its data, as a Redis restarted empty: the slots taken
// before are gone, and renewing one answers an error wrapping
// inflight.ErrSlotLost, as store/redis's Renew does.
type restartingSlots struct {
	mu     sync.Mutex
	slots  *memory.Slots
	key    string // the store key of the last Acquire
	renews atomic.Int32
}

func (s *restartingSlots) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slots = memory.NewSlots()
}

func (s *restartingSlots) current() *memory.Slots {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slots
}

func (s *restartingSlots) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (inflight.Slot, error) {
	s.mu.Lock()
	s.key = key
	s.mu.Unlock()
	return s.current().Acquire(ctx, key, limit, lease)
}

// running is how many slots of the last key the current store holds.
func (s *restartingSlots) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slots.Running(s.key)
}

func (s *restartingSlots) Renew(ctx context.Context, key string, slot inflight.Slot, lease time.Duration) error {
	s.renews.Add(1)
	if s.current().Running(key) == 0 {
		return fmt.Errorf("slot %s: %w", slot.ID, inflight.ErrSlotLost)
	}
	return nil
}

func (s *restartingSlots) Release(ctx context.Context, key string, slot inflight.Slot) error {
	return s.current().Release(ctx, key, slot)
}

// TestInFlightLostSlotsKeepTheBreakerClosed: after the store restarts
// without its data, the renewals of the slots held before it are answered
// "lost": an answer, so the breaker stays closed and new requests take
// the new store's slots (up to twice the limit run until the old requests
// end, as WithLease says), and a lost slot is not renewed again. Counted as
// failures, they opened the breaker, and every request then ran without a
// slot while the store answered.
func TestInFlightLostSlotsKeepTheBreakerClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &restartingSlots{slots: memory.NewSlots()}
		var opened atomic.Bool
		var lost atomic.Int32
		f := newReportLimit(t, s, inflight.WithBreaker(ratelimit.NewBreaker(2, time.Hour)),
			inflight.WithLease(3*time.Second),
			inflight.WithErrorHandler(func(_ *http.Request, err error) {
				if errors.Is(err, inflight.ErrSlotLost) {
					lost.Add(1)
				}
			}),
			inflight.WithObserver(ratelimit.Observer{BreakerChange: func(_ string, st ratelimit.BreakerState) {
				if st == ratelimit.BreakerOpen {
					opened.Store(true)
				}
			}}))
		release := make(chan struct{})
		var wg sync.WaitGroup
		serve := func(codes chan<- int) {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release })).
					ServeHTTP(rec, keyed("a"))
				if codes != nil {
					codes <- rec.Code
				}
			})
		}
		for range 2 { // the limit: both held through the restart
			serve(nil)
		}
		synctest.Wait()
		s.restart()
		time.Sleep(10 * time.Second) // three renewal periods of the 3 s lease
		synctest.Wait()
		if opened.Load() {
			t.Error("the breaker opened on slots the store answered were lost")
		}
		if r, l := s.renews.Load(), lost.Load(); r != 2 || l != 2 {
			t.Errorf("%d renewals, %d told lost; want 2 and 2: a lost slot is renewed no more", r, l)
		}
		// The new store's slots: two more run, the third is refused.
		codes := make(chan int, 3)
		for range 3 {
			serve(codes)
		}
		synctest.Wait()
		if len(codes) != 1 || <-codes != http.StatusTooManyRequests || s.running() != 2 {
			t.Errorf("after the restart, %d requests answered (want 1, 429) and %d slots held (want 2)",
				len(codes), s.running())
		}
		close(release)
		wg.Wait()
	})
}

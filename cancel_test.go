package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestHungUpShapedClientsGiveTheirTokensBack: 12 shaped clients that book
// a token each and hang up before it is theirs give every token back, so
// the next client waits one token's time, not the 12 before it.
func TestHungUpShapedClientsGiveTheirTokensBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New(memory.WithSweepInterval(0))
		defer store.Close()
		l, err := ratelimit.New(store, ratelimit.PerSecond(1).WithBurst(1), ratelimit.WithMaxDelay(time.Minute),
			ratelimit.WithKeyFunc(func(*http.Request) (string, error) { return "k", nil }))
		if err != nil {
			t.Fatal(err)
		}
		h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		serve := func(ctx context.Context) int {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			return w.Code
		}
		if c := serve(context.Background()); c != http.StatusOK { // the bucket's one token
			t.Fatalf("first request: %d", c)
		}
		ctx, hangUp := context.WithCancel(context.Background())
		for range 12 {
			go serve(ctx)
		}
		synctest.Wait() // the 12 have booked and wait for their tokens
		hangUp()
		synctest.Wait() // and gave them back
		start := time.Now()
		if c := serve(context.Background()); c != http.StatusOK {
			t.Fatalf("the next client: %d", c)
		}
		if waited := time.Since(start); waited > time.Second {
			t.Fatalf("the next client waited %v, want at most one token's time (1s)", waited)
		}
	})
}

// TestCancelledWaitsGiveTheirTokensBack: 1,000 Waits booked at once and
// cancelled while they wait leave nothing booked: the key's budget is as
// if they had never come. A token comes back a minute after the budget is
// spent, so that however slowly a busy machine books the 1,000, none is
// served before they are all cancelled.
func TestCancelledWaitsGiveTheirTokensBack(t *testing.T) {
	store := memory.New(memory.WithSweepInterval(0))
	defer store.Close()
	const waiters = 1000
	ctx, cancel := context.WithCancel(context.Background())
	var booked atomic.Int64
	l, err := ratelimit.New(store, ratelimit.PerHour(60), ratelimit.WithObserver(ratelimit.Observer{
		Decision: func(d ratelimit.Decision) {
			if d.Delay > 0 && booked.Add(1) == waiters {
				cancel() // every waiter has booked: they all give up
			}
		}}))
	if err != nil {
		t.Fatal(err)
	}
	for range 60 { // the budget spent
		if err := l.Wait(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			if err := l.Wait(ctx, "k"); err == nil {
				t.Error("a cancelled Wait succeeded")
			}
		})
	}
	wg.Wait()
	res, err := l.AllowN(context.Background(), "k", 0)
	if err != nil || res.ResetAfter > time.Hour+time.Second {
		t.Fatalf("after %d cancelled waits: %+v, %v; want the bucket full again within its hour, nothing booked", waiters, res, err)
	}
}

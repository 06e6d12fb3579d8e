package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// queueStore is a shared store that, while hold is set, sends one call at
// a time, as a group commit does: the first call is sent and held until
// release is closed; the calls behind it wait in its queue, marked
// ratelimit.Queued, and once released are sent only if ratelimit.Sending
// still lets them. With keeps, it keeps its deadlines, as store/redis over a
// client with ContextTimeoutEnabled: a call returns when its context ends,
// never sent if it was queued.
type queueStore struct {
	mem     *memory.Store
	keeps   bool
	hold    atomic.Bool
	release chan struct{}
	busy    atomic.Bool
	sent    atomic.Int64 // calls sent to the store
}

func (*queueStore) Local() bool { return false }

func (s *queueStore) KeepsDeadlines() bool { return s.keeps }

// wait waits for release, or with keeps for the end of ctx too.
func (s *queueStore) wait(ctx context.Context) error {
	if !s.keeps {
		<-s.release
		return nil
	}
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *queueStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if !s.hold.Load() {
		s.sent.Add(1)
		return s.mem.AllowN(ctx, key, l, n)
	}
	if s.busy.CompareAndSwap(false, true) {
		s.sent.Add(1)
		if err := s.wait(ctx); err != nil {
			return ratelimit.Result{}, fmt.Errorf("sent, no answer: %w", err)
		}
		return s.mem.AllowN(context.Background(), key, l, n)
	}
	ratelimit.Queued(ctx)
	if err := s.wait(ctx); err != nil {
		return ratelimit.Result{}, fmt.Errorf("queued: %w: %w", ratelimit.ErrNotSent, err)
	}
	if !ratelimit.Sending(ctx) {
		return ratelimit.Result{}, fmt.Errorf("queued: %w", ratelimit.ErrNotSent)
	}
	s.sent.Add(1)
	return s.mem.AllowN(context.Background(), key, l, n)
}

// TestShedDecisionsDoNotOpenTheBreaker: decisions that wait behind a call
// in flight past their budget are never sent and fail alone, answered by
// the fallback; while the store answers within a budget they do not count
// against it, nor does the call that was sent and not answered in time.
// Behind a store that answered nothing for a budget (it hangs), that call
// counts, and so do the decisions shed behind it. A store that keeps its deadlines, called on the
// request's goroutine, is held to them alike.
func TestShedDecisionsDoNotOpenTheBreaker(t *testing.T) {
	for _, keeps := range []bool{false, true} {
		t.Run(map[bool]string{false: "on a goroutine", true: "a store that keeps deadlines"}[keeps], func(t *testing.T) {
			testShed(t, keeps)
		})
	}
}

func testShed(t *testing.T, keeps bool) {
	const budget = 20 * time.Millisecond
	for _, tc := range []struct {
		name     string
		failures int           // the breaker's
		silence  time.Duration // since the store's last answer when the held call goes out
		want     ratelimit.BreakerState
	}{
		{"fifty shed decisions leave a breaker of two failures closed", 2, 0, ratelimit.BreakerClosed},
		// a store answering within the budget fails in part at most (a
		// Cluster master that hangs): the failure policy answers the call
		{"a sent decision that timed out as the store answered leaves a breaker of one failure closed", 1, 0, ratelimit.BreakerClosed},
		{"the sent decision that timed out after a budget's silence opens a breaker of one failure", 1, budget + time.Millisecond, ratelimit.BreakerOpen},
		{"shed decisions behind a store silent for a budget open the breaker", 5, budget + time.Millisecond, ratelimit.BreakerOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const queued = 50
			mem := memory.New()
			defer mem.Close()
			s := &queueStore{mem: mem, keeps: keeps, release: make(chan struct{})}
			var fallback atomic.Int64
			obs := ratelimit.Observer{Decision: func(d ratelimit.Decision) {
				if d.Source == ratelimit.FromFallback {
					fallback.Add(1)
				}
			}}
			l, err := ratelimit.New(s, ratelimit.PerMinute(20), ratelimit.WithPlainKeys(),
				ratelimit.WithTimeout(budget), ratelimit.WithBreaker(ratelimit.NewBreaker(tc.failures, time.Hour)),
				ratelimit.WithObserver(obs), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
			if err != nil {
				t.Fatal(err)
			}
			clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
			ratelimit.SetClock(l, clock.Now)
			if _, err := l.Allow(context.Background(), "warm"); err != nil {
				t.Fatal(err)
			}
			clock.Add(tc.silence)
			s.hold.Store(true)
			defer close(s.release)
			if _, err := l.Allow(context.Background(), "sent"); !errors.Is(err, ratelimit.ErrTimeout) || errors.Is(err, ratelimit.ErrNotSent) {
				t.Fatalf("the held call: %v, want a timeout of a sent call", err)
			}
			var wg sync.WaitGroup
			errs := make([]error, queued)
			allowed := make([]bool, queued)
			for i := range queued {
				wg.Go(func() {
					var res ratelimit.Result
					res, errs[i] = l.Allow(context.Background(), fmt.Sprint("fresh-", i))
					allowed[i] = res.Allowed
				})
			}
			wg.Wait()
			if tc.want == ratelimit.BreakerClosed {
				for i, err := range errs {
					if !errors.Is(err, ratelimit.ErrNotSent) || !errors.Is(err, ratelimit.ErrTimeout) || !allowed[i] {
						t.Fatalf("queued decision %d: allowed %v, %v; want allowed by the fallback, ErrNotSent", i, allowed[i], err)
					}
				}
			}
			if got := l.Breaker().State(); got != tc.want {
				t.Fatalf("breaker %v, want %v", got, tc.want)
			}
			if got := s.sent.Load(); got != 2 {
				t.Fatalf("%d calls sent, want 2: the first and the held one", got)
			}
			if got := fallback.Load(); got != 1+queued {
				t.Fatalf("the fallback decided %d, want %d", got, 1+queued)
			}
		})
	}
}

// queuingStore is a shared store that holds every call in its queue before
// it sends it, asking ratelimit.Sending as a group commit does, and that
// decides several takes with several calls (it is no MultiStore): a
// decision of more than one take makes more than one call.
type queuingStore struct{ mem *memory.Store }

func (*queuingStore) Local() bool { return false }

func (s *queuingStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	ratelimit.Queued(ctx)
	if !ratelimit.Sending(ctx) {
		return ratelimit.Result{}, fmt.Errorf("queued: %w", ratelimit.ErrNotSent)
	}
	return s.mem.AllowN(ctx, key, l, n)
}

// TestEveryCallOfASentDecisionIsSent: a decision that takes several store
// calls (AllowTakes over a store that is no MultiStore, as store/redis is
// across Cluster slots) is sent call after call; once its first call is
// sent, Sending lets the others go too. It once refused them, and the
// failure policy answered a healthy store's decisions.
func TestEveryCallOfASentDecisionIsSent(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	l, err := ratelimit.New(&queuingStore{mem: mem}, ratelimit.PerMinute(10), ratelimit.WithPlainKeys(), ratelimit.WithFailClosed())
	if err != nil {
		t.Fatal(err)
	}
	takes := []ratelimit.Take{{Key: "a", Limit: ratelimit.PerHour(1000), N: 1}, {Key: "b", Limit: ratelimit.PerHour(3), N: 1}}
	res := make([]ratelimit.Result, 2)
	for i := range 5 {
		ok, err := l.AllowTakes(context.Background(), takes, res)
		if err != nil {
			t.Fatalf("decision %d: %v; want the store's answer", i, err)
		}
		if want := i < 3; ok != want {
			t.Fatalf("decision %d: allowed %v, want %v (b holds 3)", i, ok, want)
		}
	}
}

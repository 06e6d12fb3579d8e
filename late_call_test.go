package ratelimit_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// lateMultiStore answers AllowAll only once released, then reads its
// takes, as a store whose answer comes after the limiter's time budget.
type lateMultiStore struct {
	entered chan struct{} // a call reached the store
	release chan struct{}
	mu      sync.Mutex
	seen    [][]string // the keys each call read
	done    sync.WaitGroup
}

func (s *lateMultiStore) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	return ratelimit.Result{Allowed: true, Limit: l, Remaining: l.Capacity() - n}, nil
}

func (s *lateMultiStore) AllowAll(ctx context.Context, takes []ratelimit.Take, results []ratelimit.Result) error {
	s.done.Add(1)
	defer s.done.Done()
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for _, t := range takes {
		keys = append(keys, t.Key)
	}
	s.seen = append(s.seen, keys)
	for i := range results {
		results[i] = ratelimit.Result{Allowed: true, Limit: takes[i].Limit, Remaining: takes[i].Limit.Capacity() - takes[i].N}
	}
	return nil
}

// TestLateStoreCallReadsItsOwnTakes: a store call that answers after the
// budget reads the takes it was given, not the ones the next decision
// writes into the reused pass (under -race, a reuse is a reported race).
func TestLateStoreCallReadsItsOwnTakes(t *testing.T) {
	s := &lateMultiStore{entered: make(chan struct{}, 1), release: make(chan struct{})}
	l, err := ratelimit.New(s, ratelimit.PerMinute(10), ratelimit.WithPlainKeys(), ratelimit.WithFailOpen(),
		ratelimit.WithTimeout(time.Millisecond), ratelimit.WithBreaker(nil),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "second", Limit: ratelimit.PerHour(100)}),
		ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	// A call the budget ends before it is sent is shed, never sent: try
	// until one reaches the store (on a busy machine the first may not).
	for sent := false; !sent; {
		if _, err := l.AllowN(context.Background(), "first", 1); err == nil {
			t.Fatal("a store that never answers in time: want the budget's error")
		}
		select {
		case <-s.entered:
			sent = true
		default:
		}
	}
	// The next decisions rewrite pooled passes while the first call waits.
	close(s.release)
	for range 50 {
		l.AllowN(context.Background(), "second-key", 1)
	}
	s.done.Wait()
	for _, keys := range s.seen {
		if strings.Contains(keys[0], "first") {
			for _, k := range keys {
				if !strings.Contains(k, "first") {
					t.Fatalf("the late call of key first read the takes %q", keys)
				}
			}
			return
		}
	}
	t.Fatalf("no call read the takes of key first: %q", s.seen)
}

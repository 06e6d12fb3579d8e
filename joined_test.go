package ratelimit_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestLimiterOnMemoryMakesNoKey: on the memory store a Limiter leaves a
// key it keeps as it is to the store to join (AllowJoinedTo), so that a
// decision allocates nothing for a key the store holds, however many keys
// there are (the limiter's key cache holds 4,096).
func TestLimiterOnMemoryMakesNoKey(t *testing.T) {
	skipUnderRace(t)
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
	}{
		{"alone", nil},
		// an observer not told the keys reads none
		{"observed", []ratelimit.Option{ratelimit.WithObserver(ratelimit.Observer{Decision: func(ratelimit.Decision) {}})}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			l, _ := apiLimiter(t, tt.opts...)
			keys := make([]string, 10_000)
			for i := range keys {
				keys[i] = "user-" + strconv.Itoa(i)
				if _, err := l.Allow(ctx, keys[i]); err != nil {
					t.Fatal(err)
				}
			}
			i := 0
			if n := testing.AllocsPerRun(len(keys)-1, func() {
				l.Allow(ctx, keys[i])
				i++
			}); n != 0 {
				t.Errorf("Allow of keys the store holds: %v allocations a decision, want 0", n)
			}
		})
	}
}

// TestAnObserverToldKeysSeesTheStoreKey: an observer told the keys
// (Observer.Keys) gets a decision's store key, joined, however the store
// is asked.
func TestAnObserverToldKeysSeesTheStoreKey(t *testing.T) {
	var seen []string
	l, _ := apiLimiter(t, ratelimit.WithObserver(ratelimit.Observer{Keys: true, Decision: func(d ratelimit.Decision) {
		seen = append(seen, d.Key)
	}}))
	for range 2 {
		if _, err := l.Allow(context.Background(), "user-0"); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 || seen[0] != "api/user-0" || seen[1] != "api/user-0" {
		t.Errorf("the observer saw keys %q, want api/user-0 twice", seen)
	}
}

// TestLimiterOnMemoryKeepsOneBudgetAKey: a key the store joins has one
// budget whichever way the limiter reaches it (Allow, Charge, WaitN,
// Reset, AllowN), the one the store's own AllowN finds under the joined
// key; and keys the limiter bounds never reach the store as they are.
func TestLimiterOnMemoryKeepsOneBudgetAKey(t *testing.T) {
	ctx := context.Background()
	l, store := apiLimiter(t)
	steps := []struct {
		what      string
		do        func() error
		remaining int // user-0's after the step, by the store's own AllowN
	}{
		{"Allow", func() error { _, err := l.Allow(ctx, "user-0"); return err }, 4}, // a new key
		{"Allow", func() error { _, err := l.Allow(ctx, "user-0"); return err }, 3}, // one the store holds
		{"Charge", func() error { return l.Charge(ctx, "user-0", 1) }, 2},
		{"WaitN", func() error { return l.WaitN(ctx, "user-0", 1) }, 1},
		{"Reset", func() error { return l.Reset(ctx, "user-0") }, 5},
		{"AllowN", func() error { _, err := l.AllowN(ctx, "user-0", 2); return err }, 3},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		res, err := store.AllowN(ctx, "api/user-0", ratelimit.PerHour(5), 0)
		if err != nil || res.Remaining != s.remaining {
			t.Fatalf("after %s: the store's api/user-0 has %d left (%v), want %d", s.what, res.Remaining, err, s.remaining)
		}
	}

	long := strings.Repeat("k", ratelimit.MaxKeyLen+1)
	for _, key := range []string{long, "sha256:" + strings.Repeat("0", 64)} {
		if _, err := l.Allow(ctx, key); err != nil {
			t.Fatal(err)
		}
		if res, _ := store.AllowN(ctx, "api/"+key, ratelimit.PerHour(5), 0); res.Remaining != 5 {
			t.Errorf("key of %d bytes (%.10q...) reached the store as it is", len(key), key)
		}
	}
}

// apiLimiter is a limiter named "api" of 5 per hour on a memory store of
// its own, with opts.
func apiLimiter(t *testing.T, opts ...ratelimit.Option) (*ratelimit.Limiter, *memory.Store) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	l, err := ratelimit.New(store, ratelimit.PerHour(5), append([]ratelimit.Option{ratelimit.WithName("api")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l, store
}

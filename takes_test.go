package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// takesStep is one request of a takesCase: the costs of takes "a" and
// "b", and what the request and each take should answer.
type takesStep struct {
	na, nb        int
	allowed       bool
	remA, remB    int
	allowA, allow bool // allowA: take a's own result
}

func TestAllowTakes(t *testing.T) {
	window := ratelimit.Limit{Rate: 3, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
	bucket := ratelimit.PerMinute(3)
	cases := []struct {
		name   string
		each   bool // CountTakes
		la, lb ratelimit.Limit
		steps  []takesStep
	}{
		{
			name: "all or nothing takes nothing from any take of a denied request",
			la:   window, lb: window,
			steps: []takesStep{
				{na: 1, nb: 3, allowed: true, remA: 2, remB: 0, allowA: true},
				{na: 1, nb: 1, allowed: false, remA: 2, remB: 0, allowA: true},
				{na: 2, nb: 0, allowed: true, remA: 0, remB: 0, allowA: true},
			},
		},
		{
			name: "count each fills a denied window and counts the allowed take",
			each: true,
			la:   window, lb: window,
			steps: []takesStep{
				{na: 1, nb: 2, allowed: true, remA: 2, remB: 1, allowA: true},
				{na: 1, nb: 2, allowed: false, remA: 1, remB: 0, allowA: true},
				{na: 0, nb: 0, allowed: true, remA: 1, remB: 0, allowA: true},
				{na: 3, nb: 0, allowed: false, remA: 0, remB: 0, allowA: false},
			},
		},
		{
			name: "count each takes nothing from a denied token bucket",
			each: true,
			la:   bucket, lb: bucket,
			steps: []takesStep{
				{na: 2, nb: 1, allowed: true, remA: 1, remB: 2, allowA: true},
				{na: 2, nb: 1, allowed: false, remA: 1, remB: 1, allowA: false},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0).Truncate(time.Minute)
			store := memory.New(memory.WithClock(func() time.Time { return now }))
			defer store.Close()
			l, err := ratelimit.New(store, ratelimit.PerSecond(1))
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range c.steps {
				takes := []ratelimit.Take{{Key: "a", Limit: c.la, N: s.na}, {Key: "b", Limit: c.lb, N: s.nb}}
				res := make([]ratelimit.Result, 2)
				decide := l.AllowTakes
				if c.each {
					decide = l.CountTakes
				}
				ok, err := decide(context.Background(), takes, res)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if ok != s.allowed || res[0].Remaining != s.remA || res[1].Remaining != s.remB || res[0].Allowed != s.allowA {
					t.Errorf("step %d: allowed %v, a %+v, b %+v; want allowed %v, remaining %d and %d, a allowed %v",
						i, ok, res[0], res[1], s.allowed, s.remA, s.remB, s.allowA)
				}
				now = now.Add(time.Second)
			}
		})
	}
}

func TestAllowTakesRefusesBadArguments(t *testing.T) {
	store := memory.New()
	defer store.Close()
	l, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	lim := ratelimit.PerMinute(2)
	cases := []struct {
		name  string
		takes []ratelimit.Take
		want  error
	}{
		{"an empty key", []ratelimit.Take{{Key: "", Limit: lim, N: 1}}, ratelimit.ErrEmptyKey},
		{"an invalid limit", []ratelimit.Take{{Key: "a", N: 1}}, ratelimit.ErrInvalidLimit},
		{"a negative cost", []ratelimit.Take{{Key: "a", Limit: lim, N: -1}}, ratelimit.ErrInvalidCost},
		{"a cost above capacity", []ratelimit.Take{{Key: "a", Limit: lim, N: 3}}, ratelimit.ErrCostExceedsCapacity},
		{"one key twice", []ratelimit.Take{{Key: "a", Limit: lim, N: 1}, {Key: "a", Limit: lim, N: 1}}, ratelimit.ErrDuplicateKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, err := l.AllowTakes(context.Background(), c.takes, make([]ratelimit.Result, len(c.takes)))
			if ok || !errors.Is(err, c.want) {
				t.Errorf("got %v, %v; want false, %v", ok, err, c.want)
			}
		})
	}
}

// A failing remote store: the fallback decides each take at its own
// cost, and the store's error is returned.
func TestAllowTakesFallsBackAtEachTakesCost(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	store := &remoteStore{Store: mem}
	store.down.Store(true)
	var told error
	l, err := ratelimit.New(store, ratelimit.PerSecond(1), ratelimit.WithPlainKeys(), ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = err }))
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.PerMinute(5)
	takes := []ratelimit.Take{{Key: "a", Limit: lim, N: 4}, {Key: "b", Limit: lim, N: 1}}
	res := make([]ratelimit.Result, 2)
	ok, err := l.AllowTakes(context.Background(), takes, res)
	if !ok || !errors.Is(err, errDown) || told == nil {
		t.Fatalf("got %v, %v (told %v); want allowed by the fallback with the store's error", ok, err, told)
	}
	if res[0].Remaining != 1 || res[1].Remaining != 4 {
		t.Errorf("remaining %d and %d, want 1 and 4: each take at its own cost", res[0].Remaining, res[1].Remaining)
	}
}

func TestRefundTakes(t *testing.T) {
	now := time.Unix(1_700_000_000, 0).Truncate(time.Minute).Add(10 * time.Second)
	store := memory.New(memory.WithClock(func() time.Time { return now }))
	defer store.Close()
	l, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	cases := []struct {
		name  string
		limit ratelimit.Limit
	}{
		{"a fixed window's count drops", ratelimit.Limit{Rate: 4, Period: time.Minute, Algorithm: ratelimit.FixedWindow}},
		{"a token bucket gains tokens", ratelimit.PerMinute(4)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := c.name
			res := make([]ratelimit.Result, 1)
			if ok, err := l.AllowTakes(context.Background(), []ratelimit.Take{{Key: key, Limit: c.limit, N: 3}}, res); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if err := l.RefundTakes(context.Background(), []ratelimit.Take{{Key: key, Limit: c.limit, N: 2}}); err != nil {
				t.Fatal(err)
			}
			l.AllowTakes(context.Background(), []ratelimit.Take{{Key: key, Limit: c.limit}}, res)
			if res[0].Remaining != 3 {
				t.Errorf("remaining %d after a refund of 2 of 3, want 3", res[0].Remaining)
			}
			if err := l.RefundTakes(context.Background(), []ratelimit.Take{{Key: key, Limit: c.limit, N: 4}}); err != nil {
				t.Fatal(err)
			}
			l.AllowTakes(context.Background(), []ratelimit.Take{{Key: key, Limit: c.limit}}, res)
			if res[0].Remaining != 4 {
				t.Errorf("remaining %d after refunding more than taken, want the capacity 4", res[0].Remaining)
			}
		})
	}
}

func ExampleLimiter_AllowTakes() {
	// Two budgets of one request: a route's 100 per minute, a user's 2.
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	window := func(n int) ratelimit.Limit {
		return ratelimit.Limit{Rate: n, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
	}
	takes := []ratelimit.Take{{Key: "route:/api", Limit: window(100), N: 1}, {Key: "user:42", Limit: window(2), N: 1}}
	results := make([]ratelimit.Result, len(takes))
	for range 3 {
		ok, _ := limiter.AllowTakes(context.Background(), takes, results)
		fmt.Println(ok, results[0].Remaining, results[1].Remaining)
	}
	// Output:
	// true 99 1
	// true 98 0
	// false 98 0
}

func ExampleLimiter_RefundTakes() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	take := []ratelimit.Take{{Key: "user:42", Limit: ratelimit.PerMinute(10), N: 4}}
	results := make([]ratelimit.Result, 1)
	limiter.AllowTakes(context.Background(), take, results)
	fmt.Println(results[0].Remaining)
	limiter.RefundTakes(context.Background(), take) // the work was not done
	take[0].N = 0
	limiter.AllowTakes(context.Background(), take, results)
	fmt.Println(results[0].Remaining)
	// Output:
	// 6
	// 10
}

func ExampleLimiter_CountTakes() {
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	window := ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: ratelimit.FixedWindow}
	results := make([]ratelimit.Result, 1)
	for _, n := range []int{2, 2, 0} {
		// Refused, the request of 2 still counts the 1 its window holds.
		take := []ratelimit.Take{{Key: "k", Limit: window, N: n}}
		ok, _ := limiter.CountTakes(context.Background(), take, results)
		fmt.Println(ok, results[0].Remaining)
	}
	// Output:
	// true 1
	// false 0
	// true 0
}

// failsAfter is a remote store (not Local) that answers its first calls
// and fails the others while down is set; calls counts them.
type failsAfter struct {
	ratelimit.Store
	answers atomic.Int64 // how many more calls it answers while down
	down    atomic.Bool
}

func (s *failsAfter) AllowN(ctx context.Context, key string, l ratelimit.Limit, n int) (ratelimit.Result, error) {
	if s.down.Load() && s.answers.Add(-1) < 0 {
		return ratelimit.Result{}, errDown
	}
	return s.Store.AllowN(ctx, key, l, n)
}

// TestCountTakesCountsEachAdmissionOnce: the store fails partway through
// a CountTakes, after it counted the first take. The fallback counts only
// the takes the store did not, and once the store is back it is charged
// the fallback's admissions as AllowN's are, and nothing twice: each take
// counted exactly once on the store in the end.
func TestCountTakesCountsEachAdmissionOnce(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	store := &failsAfter{Store: mem}
	l, err := ratelimit.New(store, ratelimit.PerSecond(1), ratelimit.WithPlainKeys(), ratelimit.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.PerHour(5)
	takes := []ratelimit.Take{{Key: "a", Limit: lim, N: 1}, {Key: "b", Limit: lim, N: 1}}
	res := make([]ratelimit.Result, 2)
	store.answers.Store(1) // a is counted, then the store fails
	store.down.Store(true)
	ok, err := l.CountTakes(context.Background(), takes, res)
	if !ok || !errors.Is(err, errDown) {
		t.Fatalf("during the failure: %v, %v; want allowed, a by the store and b by the fallback, with the store's error", ok, err)
	}
	if res[0].Remaining != 4 {
		t.Errorf("a: remaining %d, want the store's 4", res[0].Remaining)
	}
	store.down.Store(false)
	if ok, err := l.CountTakes(context.Background(), takes, res); !ok || err != nil {
		t.Fatalf("after the failure: %v, %v", ok, err)
	}
	for i, want := range []int{3, 3} { // two admissions each, counted once
		if res[i].Remaining != want {
			t.Errorf("take %s after the failure: remaining %d, want %d: each admission counted once on the store", takes[i].Key, res[i].Remaining, want)
		}
	}
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelimit-go/ratelimit"
)

// The cases of [ratelimit.MultiStore], run for stores that implement it.
// Their keys are "<namespace>/<key>" with one key part per batch, as the
// core limiter builds the keys of one client's limits, so that a store
// that needs a batch's keys together (Redis Cluster) can have them.

// isMulti reports whether probe, a store of the suite's factory,
// implements ratelimit.MultiStore.
func isMulti(probe ratelimit.Store) bool {
	_, ok := probe.(ratelimit.MultiStore)
	return ok
}

func multiCases() []testCase {
	return []testCase{
		{name: "AllowAll/a denied batch takes nothing from any key", everyAlgorithm: true, run: multiAllOrNothing},
		{name: "AllowAll/each algorithm with its own limit and cost in one batch", run: multiMixed},
		{name: "AllowAll/bad input is an error and takes nothing", run: multiBadInput},
		{name: "AllowAll/a done context is an error and takes nothing", run: multiDoneContext},
		{name: "AllowAll/concurrent batches admit the smaller budget and never part of a batch", everyAlgorithm: true, run: multiConcurrent},
		{name: "AllowAll/a denied batch reports exact waits", clock: true, run: multiExactDurations},
	}
}

// allowAll calls AllowAll with a background context and fails the test on
// error.
func (e *env) allowAll(takes ...ratelimit.Take) []ratelimit.Result {
	e.t.Helper()
	results := make([]ratelimit.Result, len(takes))
	if err := e.store.(ratelimit.MultiStore).AllowAll(context.Background(), takes, results); err != nil {
		e.t.Fatalf("AllowAll(%v): %v", takes, err)
	}
	for i, res := range results {
		if res.Limit != takes[i].Limit {
			e.t.Fatalf("result %d: Limit = %v, want %v", i, res.Limit, takes[i].Limit)
		}
		if res.Allowed != (res.RetryAfter == 0) {
			e.t.Fatalf("result %d: allowed %v with RetryAfter %v", i, res.Allowed, res.RetryAfter)
		}
		if res.Remaining < 0 || res.ResetAfter < 0 {
			e.t.Fatalf("result %d: negative Remaining %d or ResetAfter %v", i, res.Remaining, res.ResetAfter)
		}
	}
	return results
}

// expectAll checks a batch's results: each take's Allowed and Remaining.
func (e *env) expectAll(takes []ratelimit.Take, allowed []bool, remaining []int) []ratelimit.Result {
	e.t.Helper()
	results := e.allowAll(takes...)
	for i, res := range results {
		if res.Allowed != allowed[i] || res.Remaining != remaining[i] {
			e.t.Fatalf("AllowAll take %d (%q, %v, n %d): allowed %v, remaining %d; want allowed %v, remaining %d",
				i, takes[i].Key, takes[i].Limit, takes[i].N, res.Allowed, res.Remaining, allowed[i], remaining[i])
		}
	}
	return results
}

// remains checks with a report (n = 0) how much key has left.
func (e *env) remains(key string, l ratelimit.Limit, want int) {
	e.t.Helper()
	if res := e.allow(key, l, 0); res.Remaining != want {
		e.t.Fatalf("report of %q: remaining %d, want %d", key, res.Remaining, want)
	}
}

func multiAllOrNothing(e *env) {
	big, small := e.slowLimit(5), e.slowLimit(2)
	take := func(nBig, nSmall int) []ratelimit.Take {
		return []ratelimit.Take{{Key: "big/c", Limit: big, N: nBig}, {Key: "small/c", Limit: small, N: nSmall}}
	}
	e.expectAll(take(1, 1), []bool{true, true}, []int{4, 1})
	// The second limit denies: the first, which alone would pass, takes nothing.
	res := e.expectAll(take(1, 2), []bool{true, false}, []int{4, 1})
	if res[1].RetryAfter <= 0 {
		e.t.Fatalf("denied take: RetryAfter %v, want > 0", res[1].RetryAfter)
	}
	e.remains("big/c", big, 4)
	e.remains("small/c", small, 1)
	// The first denies, the second alone would pass: neither takes.
	e.expectAll(take(5, 1), []bool{false, true}, []int{4, 1})
	e.remains("big/c", big, 4)
	e.remains("small/c", small, 1)
	// A batch of reports takes nothing and is allowed.
	e.expectAll(take(0, 0), []bool{true, true}, []int{4, 1})
	e.expectAll(take(2, 1), []bool{true, true}, []int{2, 0})
	e.expectAll(take(1, 1), []bool{true, false}, []int{2, 0})
	e.remains("big/c", big, 2)
	// Alone, the first still has its tokens.
	e.expect("big/c", big, 2, true, 0)
}

func multiMixed(e *env) {
	day := 24 * time.Hour
	takes := []ratelimit.Take{
		{Key: "tb/c", Limit: slow(8), N: 2},
		{Key: "fw/c", Limit: ratelimit.Limit{Rate: 5, Period: day, Algorithm: ratelimit.FixedWindow}, N: 1},
		{Key: "sw/c", Limit: ratelimit.Limit{Rate: 9, Period: day, Algorithm: ratelimit.SlidingWindow}, N: 3},
		{Key: "sl/c", Limit: ratelimit.Limit{Rate: 7, Period: day, Algorithm: ratelimit.SlidingLog}, N: 2},
	}
	e.expectAll(takes, []bool{true, true, true, true}, []int{6, 4, 6, 5})
	e.expectAll(takes, []bool{true, true, true, true}, []int{4, 3, 3, 3})
	e.expectAll(takes, []bool{true, true, true, true}, []int{2, 2, 0, 1})
	// The sliding window is spent and the log short: nobody takes.
	e.expectAll(takes, []bool{true, true, false, false}, []int{2, 2, 0, 1})
	want := []int{2, 2, 0, 1}
	for i, t := range takes {
		e.remains(t.Key, t.Limit, want[i])
	}
	// Without it, the rest pass; then the log (1 left, cost 2) denies.
	e.expectAll(takes[:2], []bool{true, true}, []int{0, 1})
	e.expectAll([]ratelimit.Take{takes[1], takes[3]}, []bool{true, false}, []int{1, 1})
	e.expectAll([]ratelimit.Take{takes[1], {Key: "sl/c", Limit: takes[3].Limit, N: 1}}, []bool{true, true}, []int{0, 0})
}

func multiBadInput(e *env) {
	ms := e.store.(ratelimit.MultiStore)
	good := ratelimit.Take{Key: "good/c", Limit: slow(3), N: 1}
	bad := []struct {
		name string
		take ratelimit.Take
		want error
	}{
		{"a zero limit", ratelimit.Take{Key: "bad/c", N: 1}, ratelimit.ErrInvalidLimit},
		{"an unknown algorithm", ratelimit.Take{Key: "bad/c", Limit: ratelimit.PerSecond(1).WithAlgorithm(9), N: 1}, ratelimit.ErrInvalidLimit},
		{"a negative cost", ratelimit.Take{Key: "bad/c", Limit: slow(3), N: -1}, ratelimit.ErrInvalidCost},
		{"a cost above the capacity", ratelimit.Take{Key: "bad/c", Limit: slow(3), N: 4}, ratelimit.ErrCostExceedsCapacity},
		{"an empty key", ratelimit.Take{Limit: slow(3), N: 1}, ratelimit.ErrEmptyKey},
	}
	for _, b := range bad {
		for _, takes := range [][]ratelimit.Take{{good, b.take}, {b.take, good}} {
			err := ms.AllowAll(context.Background(), takes, make([]ratelimit.Result, 2))
			if !errors.Is(err, b.want) {
				e.t.Fatalf("%s: error = %v, want %v", b.name, err, b.want)
			}
		}
	}
	dups := [][]ratelimit.Take{
		{good, good},
		{good, {Key: "other/c", Limit: slow(3), N: 1}, {Key: good.Key, Limit: slow(5), N: 0}},
		{good, {Key: good.Key, Limit: ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: ratelimit.FixedWindow}, N: 1}},
	}
	for i, takes := range dups {
		if err := ms.AllowAll(context.Background(), takes, make([]ratelimit.Result, len(takes))); err == nil {
			e.t.Fatalf("batch %d with a key twice: no error", i)
		}
	}
	if err := ms.AllowAll(context.Background(), []ratelimit.Take{good}, nil); err == nil {
		e.t.Fatal("AllowAll with no room for the results: no error")
	}
	if err := ms.AllowAll(context.Background(), nil, nil); err != nil {
		e.t.Fatalf("AllowAll of no takes: %v", err)
	}
	e.remains(good.Key, good.Limit, 3)
	e.remains("other/c", slow(3), 3)
}

func multiDoneContext(e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	takes := []ratelimit.Take{{Key: "a/c", Limit: slow(2), N: 1}, {Key: "b/c", Limit: slow(2), N: 1}}
	err := e.store.(ratelimit.MultiStore).AllowAll(ctx, takes, make([]ratelimit.Result, 2))
	if !errors.Is(err, context.Canceled) {
		e.t.Fatalf("AllowAll with a cancelled context: error = %v, want context.Canceled", err)
	}
	e.remains("a/c", slow(2), 2)
	e.remains("b/c", slow(2), 2)
}

func multiConcurrent(e *env) {
	const workers, calls, small, big = 16, 10, 20, 50
	ls, lb := e.slowLimit(small), e.slowLimit(big)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, failures := 0, []error{}
	ms := e.store.(ratelimit.MultiStore)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half the workers name the keys in the other order.
			takes := []ratelimit.Take{{Key: "small/c", Limit: ls, N: 1}, {Key: "big/c", Limit: lb, N: 1}}
			if w%2 == 1 {
				takes[0], takes[1] = takes[1], takes[0]
			}
			results := make([]ratelimit.Result, 2)
			for range calls {
				err := ms.AllowAll(context.Background(), takes, results)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err)
				case !(results[0].Allowed && results[1].Allowed) &&
					(results[0].Allowed != (results[0].Remaining >= 1) || results[1].Allowed != (results[1].Remaining >= 1)):
					// Denied, nothing taken: each take passes alone iff its budget has a token.
					failures = append(failures, fmt.Errorf("denied batch reports %+v", results))
				case results[0].Allowed && results[1].Allowed:
					admitted++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		e.t.Fatalf("%d calls failed, first: %v", len(failures), failures[0])
	}
	if admitted != small {
		e.t.Fatalf("%d concurrent batches admitted %d, want exactly the smaller budget, %d", workers*calls, admitted, small)
	}
	// No partial consumption: the big budget lost exactly what was admitted.
	e.remains("big/c", lb, big-small)
	e.remains("small/c", ls, 0)
}

func multiExactDurations(e *env) {
	a := ratelimit.PerSecond(10).WithBurst(2) // a token every 100 ms
	b := ratelimit.PerSecond(4)               // a token every 250 ms, burst 4
	takes := []ratelimit.Take{{Key: "a/c", Limit: a, N: 2}, {Key: "b/c", Limit: b, N: 3}}
	res := e.expectAll(takes, []bool{true, true}, []int{0, 1})
	near(e.t, "ResetAfter of a", res[0].ResetAfter, 200*time.Millisecond)
	near(e.t, "ResetAfter of b", res[1].ResetAfter, 750*time.Millisecond)
	e.wait(100 * time.Millisecond)
	// a holds 1 of 2, b 1.4 of 3: both short, nothing taken.
	res = e.expectAll(takes, []bool{false, false}, []int{1, 1})
	near(e.t, "RetryAfter of a", res[0].RetryAfter, 100*time.Millisecond)
	near(e.t, "RetryAfter of b", res[1].RetryAfter, 400*time.Millisecond)
	near(e.t, "ResetAfter of a", res[0].ResetAfter, 100*time.Millisecond)
	near(e.t, "ResetAfter of b", res[1].ResetAfter, 650*time.Millisecond)
	e.wait(100 * time.Millisecond)
	// a is full, b still short: a alone would pass; its report is its full budget.
	res = e.expectAll(takes, []bool{true, false}, []int{2, 1})
	if res[0].RetryAfter != 0 || res[0].ResetAfter != 0 {
		e.t.Fatalf("full bucket in a denied batch: RetryAfter %v, ResetAfter %v, want 0 and 0", res[0].RetryAfter, res[0].ResetAfter)
	}
	near(e.t, "RetryAfter of b", res[1].RetryAfter, 300*time.Millisecond)
	e.wait(300 * time.Millisecond)
	e.expectAll(takes, []bool{true, true}, []int{0, 0})
}

// multiOracle replays random timelines of batches of two or three token
// buckets with their own rates and bursts, for one client, on store and on
// one golang.org/x/time/rate Limiter per limit: a batch passes iff every
// Limiter would allow its take (decided with TokensAt, without consuming),
// and then every Limiter takes (AllowN). It fails on the first decision,
// Remaining, RetryAfter or ResetAfter that differs (the durations by more
// than 1 ms), and returns the number of batches compared.
func multiOracle(t *testing.T, store ratelimit.Store, set func(time.Time), start time.Time, timelines, steps int) int {
	t.Helper()
	ms := store.(ratelimit.MultiStore)
	rng := newRand(t)
	now, compared := start, 0
	for i := range timelines {
		k := 2 + rng.IntN(2)
		takes := make([]ratelimit.Take, k)
		refs := make([]*rate.Limiter, k)
		slowest := time.Duration(0)
		for j := range takes {
			l := ratelimit.Limit{Rate: 1 + rng.IntN(100), Period: periods[rng.IntN(len(periods))], Burst: rng.IntN(21)}
			takes[j] = ratelimit.Take{Key: "oracle" + strconv.Itoa(j) + "/client-" + strconv.Itoa(i), Limit: l}
			refs[j] = rate.NewLimiter(rate.Limit(l.PerSecondRate()), l.Capacity())
			slowest = max(slowest, time.Duration(float64(time.Second)/l.PerSecondRate()))
		}
		results := make([]ratelimit.Result, k)
		before := make([]float64, k)
		for step := range steps {
			now = now.Add(logUniform(rng, time.Microsecond, 2*slowest).Truncate(time.Microsecond))
			set(now)
			pass := true
			for j := range takes {
				takes[j].N = rng.IntN(takes[j].Limit.Capacity() + 1)
				before[j] = refs[j].TokensAt(now)
				pass = pass && wouldPass(before[j], takes[j].N, takes[j].Limit.PerSecondRate())
			}
			if err := ms.AllowAll(context.Background(), takes, results); err != nil {
				t.Fatalf("timeline %d step %d: AllowAll: %v", i, step, err)
			}
			for j, tk := range takes {
				if pass && tk.N > 0 && !refs[j].AllowN(now, tk.N) {
					t.Fatalf("timeline %d step %d: x/time/rate denied take %d, which TokensAt said would pass", i, step, j)
				}
				perSecond := tk.Limit.PerSecondRate()
				alone := wouldPass(before[j], tk.N, perSecond)
				after := refs[j].TokensAt(now)
				wantRemaining := 0
				if after >= 1 {
					wantRemaining = int(after)
				}
				got := results[j]
				if got.Allowed != alone || got.Remaining != wantRemaining {
					t.Fatalf("timeline %d step %d take %d (limit %v, n %d, %.9f tokens, batch passes %v): allowed %v remaining %d, want allowed %v remaining %d",
						i, step, j, tk.Limit, tk.N, before[j], pass, got.Allowed, got.Remaining, alone, wantRemaining)
				}
				wantRetry := time.Duration(0)
				if !alone {
					wantRetry = secondsToDuration((float64(tk.N) - before[j]) / perSecond)
				}
				wantReset := secondsToDuration((float64(tk.Limit.Capacity()) - after) / perSecond)
				if !within(got.RetryAfter, wantRetry, time.Millisecond) || !within(got.ResetAfter, wantReset, time.Millisecond) {
					t.Fatalf("timeline %d step %d take %d (limit %v, n %d): RetryAfter %v ResetAfter %v, want %v and %v (±1ms)",
						i, step, j, tk.Limit, tk.N, got.RetryAfter, got.ResetAfter, wantRetry, wantReset)
				}
			}
			compared++
		}
	}
	return compared
}

// wouldPass is x/time/rate's AllowN decision for n tokens out of tokens
// refilled at perSecond: enough tokens, or a wait for the missing part that
// truncates to 0 ns.
func wouldPass(tokens float64, n int, perSecond float64) bool {
	left := tokens - float64(n)
	return n == 0 || left >= 0 || time.Duration(-left/perSecond*float64(time.Second)) <= 0
}

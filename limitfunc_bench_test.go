package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

const contractCustomers = 5000

type contractLimit struct{}

// contractFleet returns a limiter with a LimitFunc policy (each customer's
// contract) on a memory store whose clock moves a second per decision, so
// none is denied, and one request per customer: 5,000 customers whose
// contracts are all different (distinct limits), or one of 4.
func contractFleet(tb testing.TB, distinct int) (*ratelimit.Limiter, []*http.Request) {
	tb.Helper()
	var now atomic.Int64
	store := memory.New(memory.WithClock(func() time.Time { return time.Unix(0, now.Add(int64(time.Second))) }))
	tb.Cleanup(func() { store.Close() })
	l, err := ratelimit.New(store, ratelimit.PerSecond(1000), ratelimit.WithName("api"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Customer")), ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "contract", LimitFunc: func(ctx context.Context) (ratelimit.Limit, error) {
			return ctx.Value(contractLimit{}).(ratelimit.Limit), nil
		}}))
	if err != nil {
		tb.Fatal(err)
	}
	rs := make([]*http.Request, contractCustomers)
	for i := range rs {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Customer", "customer-"+strconv.Itoa(i))
		rs[i] = r.WithContext(context.WithValue(r.Context(), contractLimit{}, ratelimit.PerMinute(600+i%distinct)))
	}
	return l, rs
}

// BenchmarkLimitFuncLimits is one request of each of 5,000 customers in
// turn, under 4 distinct contracts or 5,000: the header values of many
// distinct limits cost no more than those of a few.
func BenchmarkLimitFuncLimits(b *testing.B) {
	for _, distinct := range []int{4, contractCustomers} {
		b.Run(strconv.Itoa(distinct)+" distinct limits", func(b *testing.B) {
			l, rs := contractFleet(b, distinct)
			w := &headerWriter{h: http.Header{}}
			for _, r := range rs {
				l.Admit(w, r)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if !l.Admit(w, rs[i%len(rs)]) {
					b.Fatal("denied")
				}
				i++
			}
		})
	}
}

// TestManyLimitFuncLimitsAllocateAsFew: once every customer has been seen,
// a request under one of 5,000 distinct contracts allocates no more than
// one under one of 4.
func TestManyLimitFuncLimitsAllocateAsFew(t *testing.T) {
	skipUnderRace(t)
	allocs := func(distinct int) float64 {
		l, rs := contractFleet(t, distinct)
		w := &headerWriter{h: http.Header{}}
		for _, r := range rs {
			l.Admit(w, r)
		}
		i := 0
		return testing.AllocsPerRun(len(rs), func() {
			if !l.Admit(w, rs[i%len(rs)]) {
				t.Fatal("denied")
			}
			i++
		})
	}
	few, many := allocs(4), allocs(contractCustomers)
	if many > few {
		t.Fatalf("%v allocations per request under 5,000 distinct limits, %v under 4; want no more", many, few)
	}
	t.Logf("%v allocations per request under 5,000 distinct limits, %v under 4", many, few)
}

// TestManyLimitFuncLimitsHeaders: the headers of 20,000 distinct limits,
// more than a policy keeps, each right, with one LimitFunc policy or two
// (whose RateLimit-Policy lists are made apart); the values kept stay
// bounded. With two policies, 2,000 limits show the lists made apart
// (20,000 with RATELIMIT_SLOW_TESTS); the bound is shown by the first.
func TestManyLimitFuncLimitsHeaders(t *testing.T) {
	type capacityKey struct{}
	capacity := func(ctx context.Context) (ratelimit.Limit, error) {
		return ratelimit.PerMinute(ctx.Value(capacityKey{}).(int)), nil
	}
	for _, c := range []struct {
		name   string
		second bool // a second LimitFunc policy, of a tenth of the first's limit
		limits int
	}{{"one LimitFunc policy", false, 20_000}, {"two LimitFunc policies", true, sized(20_000, 2_000)}} {
		t.Run(c.name, func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			opts := []ratelimit.Option{ratelimit.WithName("api"), ratelimit.WithHeaders(ratelimit.HeadersBoth),
				ratelimit.WithPolicy(ratelimit.Policy{Name: "contract", LimitFunc: capacity})}
			if c.second {
				opts = append(opts, ratelimit.WithPolicy(ratelimit.Policy{Name: "tenth", LimitFunc: func(ctx context.Context) (ratelimit.Limit, error) {
					return ratelimit.PerMinute(ctx.Value(capacityKey{}).(int) * 10), nil
				}}))
			}
			l, err := ratelimit.New(store, ratelimit.PerSecond(1_000_000), opts...)
			if err != nil {
				t.Fatal(err)
			}
			w := &headerWriter{h: http.Header{}}
			for n := 1; n <= c.limits; n++ {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = "10.0." + strconv.Itoa(n>>8) + "." + strconv.Itoa(n&255) + ":1" // a client each
				r = r.WithContext(context.WithValue(r.Context(), capacityKey{}, n))
				clear(w.h)
				if !l.Admit(w, r) {
					t.Fatalf("limit %d: denied", n)
				}
				want := `"api";q=1000000;w=1, "contract";q=` + strconv.Itoa(n) + ";w=60"
				if c.second {
					want += `, "tenth";q=` + strconv.Itoa(10*n) + ";w=60"
				}
				if got := w.h.Get("Ratelimit-Policy"); got != want {
					t.Fatalf("limit %d: RateLimit-Policy %q, want %q", n, got, want)
				}
				if got := w.h.Get("X-Ratelimit-Limit"); got != strconv.Itoa(n) {
					t.Fatalf("limit %d: X-RateLimit-Limit %q", n, got)
				}
			}
			if kept := ratelimit.FuncValuesLen(l, 1); kept > 16_384 || kept < 1000 {
				t.Fatalf("the values of %d limits kept, want at most 16,384 (and most)", kept)
			}
		})
	}
}

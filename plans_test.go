package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// tiers is a policy with two plans: per minute, and per day.
func tiers() []ratelimit.Option {
	return []ratelimit.Option{
		ratelimit.WithPolicy(ratelimit.Policy{Name: "api", Plans: []ratelimit.Plan{
			{Name: "free", Limit: ratelimit.PerMinute(2)},
			{Name: "pro", Limit: ratelimit.PerMinute(5)},
		}}),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Plans: []ratelimit.Plan{
			{Name: "free", Limit: ratelimit.PerDay(3, nil)},
			{Name: "pro", Limit: ratelimit.PerDay(100, nil)},
		}}),
	}
}

// planned returns a request of key in plan ("" for none).
func planned(key, plan string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-API-Key", key)
	if plan != "" {
		r = r.WithContext(ratelimit.ContextWithPlan(r.Context(), plan))
	}
	return r
}

func newPlanned(t *testing.T, clock *fakeClock, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	store := memory.New(memory.WithClock(clock.Now))
	t.Cleanup(func() { store.Close() })
	opts = append(append(tiers(), ratelimit.WithName("edge"), ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key"))), opts...)
	l, err := ratelimit.New(store, ratelimit.PerSecond(1000), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPlansHeaders(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	l := newPlanned(t, clock)
	h := l.Handler(hello)
	for _, c := range []struct {
		key, plan, limit, policy string
	}{
		{"k-free", "free", "2", `"edge";q=1000;w=1, "api.free";q=2;w=60, "daily.free";q=3;w=86400`},
		{"k-pro", "pro", "5", `"edge";q=1000;w=1, "api.pro";q=5;w=60, "daily.pro";q=100;w=86400`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, planned(c.key, c.plan))
		if w.Code != 200 || w.Header().Get("X-RateLimit-Limit") != c.limit || w.Header().Get("RateLimit-Policy") != c.policy {
			t.Fatalf("%s: code %d, limit %q, policy %q; want %s and %s", c.plan, w.Code, w.Header().Get("X-RateLimit-Limit"), w.Header().Get("RateLimit-Policy"), c.limit, c.policy)
		}
		if !strings.HasPrefix(w.Header().Get("RateLimit"), `"api.`+c.plan+`";`) {
			t.Fatalf("%s: RateLimit %q", c.plan, w.Header().Get("RateLimit"))
		}
	}
	// free: 2 per minute, pro 5.
	for _, c := range []struct {
		key, plan string
		passes    int
	}{{"k-free", "free", 1}, {"k-pro", "pro", 4}} {
		passed := 0
		for range 10 {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, planned(c.key, c.plan))
			if w.Code == 200 {
				passed++
			}
		}
		if passed != c.passes {
			t.Fatalf("%s passed %d more, want %d", c.plan, passed, c.passes)
		}
	}
}

func TestPlansUnknownIsAnError(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	var got []error
	l := newPlanned(t, clock, ratelimit.WithErrorHandler(func(_ *http.Request, err error) { got = append(got, err) }))
	h := l.Handler(hello)
	for _, plan := range []string{"", "enterprise", "free\x00"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, planned("k", plan))
		if w.Code != 500 {
			t.Fatalf("plan %q: code %d, want 500", plan, w.Code)
		}
	}
	if len(got) != 3 || !errors.Is(got[0], ratelimit.ErrBadConfig) || !errors.Is(got[1], ratelimit.ErrBadConfig) {
		t.Fatalf("errors %v, want 3 ErrBadConfig", got)
	}
	if _, err := l.Allow(context.Background(), "k"); !errors.Is(err, ratelimit.ErrBadConfig) || !strings.Contains(err.Error(), "unknown plan") {
		t.Fatalf("Allow without a plan = %v, want ErrBadConfig", err)
	}
	if res, err := l.Allow(ratelimit.ContextWithPlan(context.Background(), "pro"), "k"); err != nil || !res.Allowed {
		t.Fatalf("Allow with a plan = %+v, %v", res, err)
	}
}

// TestPlansUpgrade: a key that spent the free plan's day is served at once
// on the pro plan, and a downgrade never grants more than the free plan.
func TestPlansUpgrade(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	l := newPlanned(t, clock)
	ctx := context.Background()
	free, pro := ratelimit.ContextWithPlan(ctx, "free"), ratelimit.ContextWithPlan(ctx, "pro")
	for range 3 {
		l.Allow(free, "cust")
		clock.Add(time.Minute)
	}
	if res, _ := l.Allow(free, "cust"); res.Allowed {
		t.Fatal("the free day is not spent")
	}
	res, _ := l.Allow(pro, "cust")
	if !res.Allowed {
		t.Fatalf("upgraded to pro: %+v, want allowed at once", res)
	}
	if res, _ := l.AllowN(pro, "cust", 0); res.Remaining != 4 {
		t.Fatalf("pro Remaining %d, want 4 (5 per minute, 96 of the day)", res.Remaining)
	}
	if res, _ := l.Allow(free, "cust"); res.Allowed {
		t.Fatal("downgraded to free, the spent day passes")
	}
}

// TestPlansShareALimit: two plans of one limit (free and pro share a daily
// cap, enterprise has more) are told apart by the request's plan, in the
// headers and for the observer.
func TestPlansShareALimit(t *testing.T) {
	store := memory.New()
	defer store.Close()
	var observed []string
	l, err := ratelimit.New(store, ratelimit.PerSecond(1000), ratelimit.WithName("edge"),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key")), ratelimit.WithHeaders(ratelimit.HeadersIETF),
		ratelimit.WithPolicy(ratelimit.Policy{Name: "daily", Plans: []ratelimit.Plan{
			{Name: "free", Limit: ratelimit.PerDay(1000, nil)},
			{Name: "pro", Limit: ratelimit.PerDay(1000, nil)},
			{Name: "enterprise", Limit: ratelimit.PerDay(100_000, nil)},
		}}),
		ratelimit.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) {
			if d.Plan != "" {
				observed = append(observed, d.Policy)
			}
		}}))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Handler(hello)
	for _, plan := range []string{"free", "pro", "enterprise"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, planned("k-"+plan, plan))
		if got := w.Header().Get("RateLimit-Policy"); !strings.Contains(got, `"daily.`+plan+`"`) {
			t.Errorf("%s: RateLimit-Policy %q, want the plan's name", plan, got)
		}
	}
	if strings.Join(observed, " ") != "daily.free daily.pro daily.enterprise" {
		t.Fatalf("observed %v", observed)
	}
}

func TestPlansValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		p    ratelimit.Policy
		want string
	}{
		{"a limit beside plans", ratelimit.Policy{Name: "p", Limit: ratelimit.PerSecond(1), Plans: []ratelimit.Plan{{Name: "a", Limit: ratelimit.PerSecond(2)}}}, "leave Limit zero"},
		{"a bad name", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{{Name: "a b", Limit: ratelimit.PerSecond(2)}}}, `plan "a b"`},
		{"twice", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{{Name: "a", Limit: ratelimit.PerSecond(2)}, {Name: "a", Limit: ratelimit.PerSecond(3)}}}, "two plans"},
		{"a bad limit", ratelimit.Policy{Name: "p", Plans: []ratelimit.Plan{{Name: "a", Limit: ratelimit.PerSecond(0)}}}, "invalid limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ratelimit.New(memory.New(), ratelimit.PerSecond(1), ratelimit.WithPolicy(c.p))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New = %v, want %q", err, c.want)
			}
		})
	}
}

func TestPlansObserved(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	var plans []string
	l := newPlanned(t, clock, ratelimit.WithObserver(ratelimit.Observer{Decision: func(d ratelimit.Decision) {
		plans = append(plans, d.Policy+":"+d.Plan)
	}}))
	l.Handler(hello).ServeHTTP(httptest.NewRecorder(), planned("k", "pro"))
	if strings.Join(plans, " ") != "edge: api.pro:pro daily.pro:pro" {
		t.Fatalf("observed %v", plans)
	}
}

func TestPlansAllocateNothing(t *testing.T) {
	skipUnderRace(t)
	// Against the same limiter without plans, in one run: a plan costs no
	// allocation (the clock moves a minute a decision, so none is denied;
	// KeyByHeader makes its key, one allocation for either).
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	store := memory.New(memory.WithClock(clock.Now))
	defer store.Close()
	common := []ratelimit.Option{ratelimit.WithName("edge"), ratelimit.WithHeaders(ratelimit.HeadersBoth),
		ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-API-Key"))}
	withPlans, err := ratelimit.New(store, ratelimit.PerSecond(1000), append(common, tiers()[0])...)
	if err != nil {
		t.Fatal(err)
	}
	without, err := ratelimit.New(store, ratelimit.PerSecond(1000), append(common,
		ratelimit.WithPolicy(ratelimit.Policy{Name: "api", Limit: ratelimit.PerMinute(5)}))...)
	if err != nil {
		t.Fatal(err)
	}
	r := planned("k", "pro")
	w := &headerWriter{h: http.Header{}}
	for _, l := range []*ratelimit.Limiter{withPlans, without} {
		l.Admit(w, r)
	}
	allocs := func(l *ratelimit.Limiter) float64 {
		return testing.AllocsPerRun(200, func() {
			clock.Add(time.Minute)
			if !l.Admit(w, r) {
				t.Fatal("denied")
			}
		})
	}
	if a, b := allocs(withPlans), allocs(without); a > b {
		t.Fatalf("%v allocations per planned decision, %v without plans; want no more", a, b)
	}
}

// TestPlansNamesAreDistinct: a policy named as another policy's plan is
// called in the headers ("plan.pro") is refused, in either order, and so
// is the limiter's own name; names that only look alike are not.
func TestPlansNamesAreDistinct(t *testing.T) {
	plan := ratelimit.Policy{Name: "plan", Plans: []ratelimit.Plan{{Name: "pro", Limit: ratelimit.PerSecond(2)}, {Name: "free", Limit: ratelimit.PerSecond(1)}}}
	named := func(name string) ratelimit.Policy { return ratelimit.Policy{Name: name, Limit: ratelimit.PerSecond(3)} }
	for _, c := range []struct {
		name string
		opts []ratelimit.Option
		ok   bool
	}{
		{"the plan's name after it", []ratelimit.Option{ratelimit.WithPolicy(plan), ratelimit.WithPolicy(named("plan.pro"))}, false},
		{"the plan's name before it", []ratelimit.Option{ratelimit.WithPolicy(named("plan.free")), ratelimit.WithPolicy(plan)}, false},
		{"the limiter's own name", []ratelimit.Option{ratelimit.WithName("plan.pro"), ratelimit.WithPolicy(plan)}, false},
		{"alike, not equal", []ratelimit.Option{ratelimit.WithPolicy(plan), ratelimit.WithPolicy(named("plan.prof")), ratelimit.WithPolicy(named("plan-pro"))}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ratelimit.New(memory.New(), ratelimit.PerSecond(1), c.opts...)
			if c.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), `go by "plan.`) {
				t.Fatalf("New = %v, want ok %v", err, c.ok)
			}
		})
	}
}

package rules_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/rules"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

const planned = `
plans:
  free:
    - {rate: 2, period: 1m}
    - {name: daily, rate: 100, period: day, timezone: Europe/Berlin}
  pro:
    - {rate: 3, period: 1m}
    - {name: daily, rate: 1000, period: day, timezone: Europe/Berlin}
rules:
  - name: api
    match: /api/
    key: header:X-API-Key
    headers: ietf
    rate: 50
    period: 1m
    plans: [free, pro]
`

// TestParsePlans: the limits of a rule's plans pair by name, else by
// period, and are named as the rule's policies.
func TestParsePlans(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // the rule, as Rule.String describes it
		policies   string // its limiter's policies: name and plans
	}{
		{"by period and by name", planned,
			"/api/ api: 50 per 1m per header:X-API-Key + api-1m: free 2 per 1m, pro 3 per 1m per header:X-API-Key + daily: free 100 per day (Europe/Berlin), pro 1000 per day (Europe/Berlin) per header:X-API-Key",
			"api; api-1m free pro; daily free pro"},
		{"one limit without a list", "plans:\n  free: {rate: 1, period: 1s}\n  pro: {rate: 5, period: 1s}\nrules:\n  - {name: r, match: /, rate: 9, period: 1s, plans: [free, pro]}\n",
			"/ r: 9 per 1s per ip + r-1s: free 1 per 1s, pro 5 per 1s per ip", "r; r-1s free pro"},
		{"one plan", "plans:\n  free: {rate: 1, period: 1s}\nrules:\n  - {name: r, match: /, rate: 9, period: 1s, plans: free}\n",
			"/ r: 9 per 1s per ip + r-1s: free 1 per 1s per ip", "r; r-1s free"},
		{"a limit every plan gives alike is one policy", "plans:\n  free: [{rate: 1, period: 1s}, {rate: 9, period: 1h}]\n  pro: [{rate: 5, period: 1s}, {rate: 9, period: 1h}]\nrules:\n  - {name: r, match: /, rate: 9, period: 1s, plans: [free, pro]}\n",
			"/ r: 9 per 1s per ip + r-1s: free 1 per 1s, pro 5 per 1s per ip + r-1h: 9 per 1h per ip", "r; r-1s free pro; r-1h"},
		{"names made unique beside the rule's own", "plans:\n  free: {rate: 1, period: 1h}\n  pro: {rate: 5, period: 1h}\nrules:\n  - name: r\n    match: /\n    limits: [{rate: 9, period: 1s}, {rate: 90, period: 1h}]\n    plans: [free, pro]\n",
			"/ r: 9 per 1s per ip + r-1h: 90 per 1h per ip + r-1h-2: free 1 per 1h, pro 5 per 1h per ip", "r; r-1h; r-1h-2 free pro"},
		{"the defaults' algorithm", "defaults: {algorithm: sliding-log}\nplans:\n  free: {rate: 1, period: 1h}\n  pro: {rate: 5, period: 1h}\nrules:\n  - {name: r, match: /, rate: 9, period: 1s, plans: [free, pro]}\n",
			"/ r: 9 per 1s (sliding log) per ip + r-1h: free 1 per 1h (sliding log), pro 5 per 1h (sliding log) per ip", "r; r-1h free pro"},
		{"a plan's limit keyed by a rule's key", "plans:\n  free: {rate: 1, period: 1h}\n  pro: {rate: 5, period: 1h}\nrules:\n  - name: r\n    match: /\n    key: header:K\n    limits: [{rate: 9, period: 1s, key: ip}]\n    plans: [free, pro]\n",
			"/ r: 9 per 1s per ip + r-1h: free 1 per 1h, pro 5 per 1h per header:K", "r; r-1h free pro"},
	}
	store := memory.New()
	defer store.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := rules.Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			r := c.Rules[0]
			if got := r.String(); got != tt.want {
				t.Errorf("rule:\n got %s\nwant %s", got, tt.want)
			}
			l, err := c.Limiter(r, store)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range l.Policies() {
				s := p.Name
				for _, pl := range p.Plans {
					s += " " + pl.Name
				}
				got = append(got, s)
			}
			if strings.Join(got, "; ") != tt.policies {
				t.Errorf("policies: %s, want %s", strings.Join(got, "; "), tt.policies)
			}
		})
	}
}

// TestParsePlansKeepsTheFilesPlans: Config.Plans are the plans as the file
// names them, in its order.
func TestParsePlansKeepsTheFilesPlans(t *testing.T) {
	c, err := rules.Parse([]byte(planned))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Plans) != 2 || c.Plans[0].Name != "free" || c.Plans[1].Name != "pro" {
		t.Fatalf("plans = %+v", c.Plans)
	}
	free := c.Plans[0].Limits
	if len(free) != 2 || free[0].Name != "" || free[0].Limit != ratelimit.PerMinute(2) || free[1].Name != "daily" || free[1].Limit.Calendar != ratelimit.CalendarDay {
		t.Fatalf("free = %+v", free)
	}
	if got := c.Rules[0].Plans[0].Limits[0].Name; got != "api-1m" {
		t.Fatalf("the rule's copy names the limit %q, want api-1m", got)
	}
}

func TestParsePlanErrors(t *testing.T) {
	plans := "plans:\n  free: {rate: 1, period: 1s}\n  pro: {rate: 5, period: 1s}\n"
	rule := func(fields string) string {
		return "rules:\n  - name: r\n    match: /\n" + fields
	}
	own := "    rate: 9\n    period: 1s\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"plans not a mapping", "plans: [free]\n" + rule(own), `rules: line 1: plans: want plans, each a name and its limits`},
		{"no plans", "plans: {}\n" + rule(own), `line 1: plans: no plans`},
		{"plans of nothing", "plans:\n" + rule(own), `line 1: plans: want plans, each a name and its limits, such as free: [{rate: 60, period: 1m}]; got nothing`},
		{"bad plan name", "plans:\n  a/b: {rate: 1, period: 1s}\n" + rule(own), `line 2: plans: plan name "a/b": want 1 to 64 letters`},
		{"plan twice", "plans:\n  free: {rate: 1, period: 1s}\n  free: {rate: 2, period: 1s}\n" + rule(own), `line 3: plans: plan "free" given twice (first on line 2)`},
		{"plan without limits", "plans:\n  free: []\n" + rule(own), `line 2: plans.free: no limits`},
		{"plan of nothing", "plans:\n  free:\n" + rule(own), `line 2: plans.free: no limits`},
		{"a plan's limit with a key", "plans:\n  free: [{rate: 1, period: 1s, key: ip}]\n" + rule(own), `line 2: plans.free[1]: unknown field "key" (fields: name, rate, period, timezone, burst, algorithm)`},
		{"a plan's bad rate", "plans:\n  free:\n    - {rate: 1, period: 1s}\n    - rate: lots\n      period: 1h\n" + rule(own), `line 4: plans.free[2].rate: want a whole number, got "lots"`},
		{"a plan's bad zone", "plans:\n  free: {rate: 1, period: day, timezone: Mars/Olympus}\n" + rule(own), `plans.free.timezone: "Mars/Olympus" is not a time zone`},
		{"two limits of one period", "plans:\n  free: [{rate: 1, period: 1s}, {rate: 2, period: 1s}]\n" + rule(own), `line 2: plans.free[2]: a second limit of period 1s (after limit 1): name them`},
		{"two limits of one name", "plans:\n  free: [{name: a, rate: 1, period: 1s}, {name: a, rate: 2, period: 1h}]\n" + rule(own), `plans.free[2].name: "a" is taken in this plan (by limit 1)`},
		{"unknown plan", plans + rule(own+"    plans: [free, premium]\n"), `line 9: rule "r": plans: unknown plan "premium" (plans: free, pro)`},
		{"a file without plans", rule(own + "    plans: [free]\n"), `line 6: rule "r": plans: unknown plan "free": the file has no plans`},
		{"a plan twice in a rule", plans + rule(own+"    plans: [free, free]\n"), `rule "r": plans: plan "free" given twice`},
		{"a rule of no plans", plans + rule(own+"    plans: []\n"), `line 9: rule "r": plans: no plans`},
		{"a rule's plans not names", plans + rule(own+"    plans: {free: 1}\n"), `rule "r": plans: want a string or a list of them, got fields`},
		{"plans whose limits do not pair", "plans:\n  free: [{rate: 1, period: 1s}, {rate: 9, period: day}]\n  pro: {rate: 5, period: 1s}\n" + rule(own+"    plans: [free, pro]\n"),
			`rule "r": plans: plan "free" has a limit "day" and plan "pro" none: the plans of a rule pair their limits by name, else by period`},
		{"a later plan with more limits", "plans:\n  free: {rate: 1, period: 1s}\n  pro: [{rate: 5, period: 1s}, {rate: 9, period: day}]\n" + rule(own+"    plans: [free, pro]\n"),
			`plans: plan "pro" has a limit "day" and plan "free" none`},
		{"two plans of three alike", "plans:\n  free: {rate: 1, period: 1s}\n  pro: {rate: 1, period: 1s}\n  max: {rate: 9, period: 1s}\n" + rule(own+"    plans: [free, pro, max]\n"),
			`rule "r": plans: plans "free" and "pro" give limit "r-1s" alike (1 per 1s): the plans of a limit need limits of their own, or all the same`},
		{"alike plans", "plans:\n  free: {rate: 1, period: 1s}\n  pro: {rate: 1, period: 1s}\n" + rule(own+"    plans: [free, pro]\n"),
			`plans: plans "free" and "pro" give the rule the same limits: make them one plan`},
		{"plans alone", plans + rule("    plans: [free, pro]\n"), `line 5: rule "r": a rule with plans needs a limit of its own too (rate and period, or limits)`},
		{"a plan's limit named as the rule's", "plans:\n  free: {name: x, rate: 1, period: 1s}\n" + rule("    limits: [{rate: 9, period: 1s}, {name: x, rate: 9, period: 1h}]\n    plans: [free]\n"),
			`rule "r": plans: limit "x" of plan "free" is taken in this rule`},
		{"a rule's limit named as a plan's is called", "plans:\n  free: {name: tier, rate: 1, period: 1s}\n  pro: {name: tier, rate: 5, period: 1s}\n" + rule("    limits: [{rate: 9, period: 1s}, {name: tier.pro, rate: 9, period: 1h}]\n    plans: [free, pro]\n"),
			`rule "r": plans: limit "tier.pro" of this rule goes by the name the headers give plan "pro"'s limit "tier"`},
		{"a plan's limit named as the rule", "plans:\n  free: {name: r, rate: 1, period: 1s}\n" + rule(own+"    plans: [free]\n"), `limit "r" of plan "free" is taken in this rule`},
		{"cost above a plan's capacity", plans + rule(own+"    plans: [free, pro]\n    cost: 2\n"),
			`rule "r": cost: 2 is more than limit "r-1s" of plan "free" can ever hold (1): no request on that plan could pass`},
		{"plans in the defaults", "defaults: {plans: [free]}\n" + plans + rule(own), `line 1: defaults: unknown field "plans"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rules.Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant one containing %s", err, tt.want)
			}
			var e *rules.Error
			if !errors.As(err, &e) {
				t.Errorf("error %v is not a *rules.Error", err)
			}
		})
	}
}

// authByKey is authentication in miniature: each API key has a plan, which
// it puts in the request's context for the rules' limiters.
func authByKey(plans map[string]string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if plan, ok := plans[r.Header.Get("X-API-Key")]; ok {
			r = r.WithContext(ratelimit.ContextWithPlan(r.Context(), plan))
		}
		next.ServeHTTP(w, r)
	})
}

// TestPlansThroughTheHandler: each plan's request is decided under its
// plan's limits, which RateLimit-Policy names with the plan; a request of
// no plan, or of one the rule lacks, is an error, never a default.
func TestPlansThroughTheHandler(t *testing.T) {
	c, err := rules.Parse([]byte(planned))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	var errs []error
	h, err := rules.NewHandler(c, store, http.NotFoundHandler(),
		rules.WithLimiterOptions(ratelimit.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) })))
	if err != nil {
		t.Fatal(err)
	}
	app := authByKey(map[string]string{"a": "free", "b": "pro", "c": "enterprise"}, h)
	key := func(k string) map[string]string { return map[string]string{"X-API-Key": k} }
	check(t, "free: 2 a minute", do(app, 3, "GET", "/api/", key("a")), 404, 404, 429)
	check(t, "pro: 3 a minute", do(app, 4, "GET", "/api/", key("b")), 404, 404, 404, 429)

	for _, tt := range []struct{ key, policy string }{
		{"a", `"api";q=50;w=60, "api-1m.free";q=2;w=60, "daily.free";q=100;w=86400`},
		{"b", `"api";q=50;w=60, "api-1m.pro";q=3;w=60, "daily.pro";q=1000;w=86400`},
	} {
		r := httptest.NewRequest("GET", "/api/", nil)
		r.Header.Set("X-API-Key", tt.key)
		w := httptest.NewRecorder()
		app.ServeHTTP(w, r)
		if got := w.Header().Get("RateLimit-Policy"); got != tt.policy {
			t.Errorf("key %s: RateLimit-Policy %s, want %s", tt.key, got, tt.policy)
		}
	}

	check(t, "a plan the rule lacks", do(app, 1, "GET", "/api/", key("c")), 500)
	check(t, "no plan", do(app, 1, "GET", "/api/", key("d")), 500)
	if len(errs) != 2 || !errors.Is(errs[0], ratelimit.ErrBadConfig) || !errors.Is(errs[1], ratelimit.ErrBadConfig) {
		t.Fatalf("errors told: %v, want two of unknown plans", errs)
	}
}

// TestReloadPlans: a reload that changes a plan changes the rules that use
// it, and they keep their budgets; one that names an unknown plan changes
// nothing.
func TestReloadPlans(t *testing.T) {
	c, err := rules.Parse([]byte(planned))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	h, err := rules.NewHandler(c, store, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	app := authByKey(map[string]string{"b": "pro"}, h)
	pro := map[string]string{"X-API-Key": "b"}
	check(t, "pro before", do(app, 2, "GET", "/api/", pro), 404, 404)

	if ch, err := h.Reload([]byte(planned)); err != nil || !ch.Empty() {
		t.Fatalf("the same file again: %v, %v", ch, err)
	}
	more := strings.Replace(planned, "{rate: 3, period: 1m}", "{rate: 4, period: 1m}", 1)
	ch, err := h.Reload([]byte(more))
	if err != nil || ch.String() != "changed api" {
		t.Fatalf("a plan changed: %v, %v", ch, err)
	}
	check(t, "pro keeps its bucket's last token", do(app, 2, "GET", "/api/", pro), 404, 429)

	bad := strings.Replace(more, "plans: [free, pro]", "plans: [free, premium]", 1)
	if _, err := h.Reload([]byte(bad)); err == nil || !strings.Contains(err.Error(), `unknown plan "premium"`) {
		t.Fatalf("a reload naming an unknown plan: %v", err)
	}
	if got := h.Config().Rules[0].Plans[1].Limits[0].Limit; got != ratelimit.PerMinute(4) {
		t.Fatalf("the rules in force changed: pro is %v", got)
	}
}

// TestHandBuiltPlans: a Rule built by hand is checked as a parsed one is.
func TestHandBuiltPlans(t *testing.T) {
	free := func(name string, l ratelimit.Limit) rules.Plan {
		return rules.Plan{Name: "free", Limits: []rules.Limit{{Name: name, Limit: l}}}
	}
	store := memory.New()
	defer store.Close()
	for _, tt := range []struct {
		name  string
		plans []rules.Plan
		want  string
	}{
		{"a limit without a name", []rules.Plan{free("", ratelimit.PerSecond(1))}, `plan "free": limit 1 has no name`},
		{"a plan without limits", []rules.Plan{{Name: "free"}}, `plan "free" has no limits`},
		{"a plan twice", []rules.Plan{free("x", ratelimit.PerSecond(1)), free("x", ratelimit.PerSecond(2))}, `plan "free" given twice`},
		{"a limit with a key", []rules.Plan{{Name: "free", Limits: []rules.Limit{{Name: "x", Limit: ratelimit.PerSecond(1), Key: []string{"ip"}}}}}, `limit "x" has a key`},
		{"an invalid limit", []rules.Plan{free("x", ratelimit.Limit{})}, `plan "free": invalid limit: rate 0`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := rules.Rule{Name: "r", Match: "/", Limit: ratelimit.PerSecond(9), Plans: tt.plans}
			_, err := (&rules.Config{}).Limiter(r, store)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Limiter = %v, want an error containing %s", err, tt.want)
			}
		})
	}
}

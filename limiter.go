package ratelimit

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Limiter limits requests per key under one or more policies: the limit
// given to [New], and more from [WithPolicy]. It is safe for concurrent
// use by multiple goroutines. Build it with New; mount it with
// [Limiter.Handler], call [Limiter.Admit] from a framework adapter, or
// [Limiter.AllowN] with a key of your own, outside HTTP.
//
// A request walks one pass (pass.go): skip → keys → cost checked against
// every policy → deny cache → breaker → store within the time budget →
// failure policy → headers → denial.
type Limiter struct {
	store    Store
	policies []policy // New's limit first, then WithPolicy's
	space    keyspace // the namespace and hashing of its store keys
	name     string   // the first policy's name: WithName's, or "default"
	keyFunc  KeyFunc
	cost     func(*http.Request) int
	maxCost  int // the smallest capacity of the policies
	deny     http.Handler
	onError  func(*http.Request, error)
	headers  HeaderStyle
	skip     func(*http.Request) bool
	allNames []string // RateLimit-Policy of every policy, with several
	// funcLists are the RateLimit-Policy lists of LimitFunc policies' limits (limitfunc.go).
	funcLists *[policyListsSize]atomic.Pointer[policyList]
	// planLists is allNames for each plan name, with several policies
	// and plans (plans.go).
	planLists map[string][]string
	hasPlans  bool // a policy has plans: a pass reads the request's plan
	// funcPolicies: a policy has a LimitFunc, so RateLimit-Policy lists
	// the limits of each request (limitfunc.go).
	funcPolicies bool

	failClosed bool
	guard      // the store call's time budget, the breaker and the clock (guard.go)
	denies     *denyCache
	fallback   Store // Local
	instances  int
	debts      *debtLedger           // the fallback's admissions, charged to the store
	defaultKey bool                  // keyFunc is KeyByIP(): no WithKeyFunc (decide.go)
	blockFor   time.Duration         // WithBlock's; 0 without (block.go)
	blockLimit Limit                 // the limit of a block's budget
	countIf    func(status int) bool // WithCountIf's (charge.go)

	observer     Observer
	dryRun       bool
	maxDelay     time.Duration // WithMaxDelay's; 0 refuses at once (shaping.go)
	booker       Reserver      // the store to book in, if the limiter can book (shaping.go)
	joiner       joiner        // the store, if it joins the keys of its takes (pass_keys.go)
	errLog       throttledLog
	misconfigLog throttledLog
	dryLog       throttledLog
	log          *slog.Logger // WithLogger's; nil for slog's default (logger.go)
}

// New returns a Limiter that takes tokens from store under limit, keying
// requests by client address unless [WithKeyFunc] says otherwise. A nil
// store, an invalid limit or a bad option is an error here, never later.
//
// On a store that is not [Local], such as Redis, every decision gets a time
// budget (100 ms), a circuit breaker and a local deny cache by
// default; see [WithTimeout], [WithBreaker] and [WithDenyCache]. While such
// a store fails, a local store of the limiter's own decides (limit/N per
// app server, N of [WithInstances], 1 without; see [WithFallback]), so that
// an outage switches no limit off: a limited client gets at most its limit
// and one capacity per app server. [WithFailOpen] lets requests pass
// instead, [WithFailClosed] answers 503.
func New(store Store, limit Limit, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("ratelimit: New: nil store")
	}
	if err := limit.Validate(); err != nil {
		return nil, configError("ratelimit: New: ", err)
	}
	c := config{keyFunc: KeyByIP(), denyMaxAge: defaultDenyCacheMaxAge}
	if !isLocal(store) {
		c.timeout = defaultTimeout
		c.breaker = NewBreaker(defaultBreakerFailures, defaultBreakerCoolDown)
		c.denyKeys = defaultDenyCacheKeys
	}
	for _, o := range opts {
		if o == nil {
			continue // a nil Option is none
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	for _, p := range c.policies {
		c.ownKeys = c.ownKeys || p.Key != nil
	}
	var l *Limiter
	if err := c.defaultFallback(isLocal(store), func() time.Time { return l.now() }); err != nil {
		return nil, err
	}
	if c.ownKeys && !isLocal(store) && c.keySecret == nil && !c.plainKeys {
		return nil, configError("ratelimit: New: ", errNeedKeySecret)
	}
	l = &Limiter{
		store:      store,
		name:       "default",
		keyFunc:    c.keyFunc,
		defaultKey: !c.keyFuncSet,
		cost:       c.cost,
		deny:       c.deny,
		onError:    c.onError,
		headers:    c.headers,
		skip:       c.skip,
		failClosed: c.failClosed,
		guard:      guard{breaker: c.breaker, now: time.Now}, // now: tests of the package set their own
		fallback:   c.fallback,
		instances:  c.instances,
		observer:   c.observer,
		dryRun:     c.dryRun,
		countIf:    c.countIf,
		log:        c.logger,
	}
	if c.name != "" {
		l.name = c.name
	}
	if l.onError == nil {
		l.onError = l.logError
	}
	l.space = limiterKeyspace(store, c.name, limit, &c)
	if err := l.setPolicies(limit, c.policies); err != nil {
		return nil, err
	}
	if err := l.checkCalendars(); err != nil {
		return nil, err
	}
	if c.timeout > 0 {
		l.budget = storeBudget(c.timeout, store) // how it holds the store's calls: deadline.go
	}
	l.maxDelay, l.booker = c.maxDelay, booker(store, l.policies, c.blockFor > 0)
	if c.denyKeys > 0 {
		l.denies = newDenyCache(c.denyKeys, c.denyMaxAge)
	}
	if l.fallback != nil || l.breaker != nil || !isLocal(store) { // a charge the store missed is owed (charge.go)
		l.debts = newDebtLedger(defaultDenyCacheKeys)
	}
	l.track = l.breaker != nil || l.debts != nil // they read when the store last answered
	if c.blockFor > 0 {
		if c.maxDelay > 0 {
			return nil, errors.New("ratelimit: New: WithBlock does not combine with WithMaxDelay")
		}
		l.blockFor, l.blockLimit = c.blockFor, blockLimit(c.blockFor)
		for i := range l.policies {
			l.policies[i].blocks = newKeyCache()
		}
	}
	l.joiner = l.joinerOf(store)
	if l.breaker != nil && c.logger != nil {
		l.breaker.useLogger(c.logger)
	}
	if l.breaker != nil && l.observer.BreakerChange != nil {
		change, name := l.observer.BreakerChange, l.name
		l.breaker.notify(func(s BreakerState) { change(name, s) })
	}
	return l, nil
}

// Middleware returns the middleware of [New] in one line, for
// http.Handle("/", ratelimit.Middleware(store, limit)(handler)). Like
// regexp.MustCompile, it panics if New would fail: use it with constant
// configuration at start-up.
func Middleware(store Store, limit Limit, opts ...Option) func(http.Handler) http.Handler {
	l, err := New(store, limit, opts...)
	if err != nil {
		panic(err)
	}
	return l.Handler
}

// Policies returns the limiter's policies: the limit given to New first,
// named after the limiter ("default" without [WithName]), then those of
// [WithPolicy], in order.
func (l *Limiter) Policies() []Policy {
	out := make([]Policy, len(l.policies))
	for i, p := range l.policies {
		out[i] = Policy{Name: p.name, Limit: p.limit, Key: p.key}
		for _, pl := range p.plans {
			out[i].Limit = Limit{}
			out[i].Plans = append(out[i].Plans, Plan{Name: pl.name, Limit: pl.limit})
		}
	}
	return out
}

// Breaker returns the limiter's circuit breaker, or nil if it has none.
func (l *Limiter) Breaker() *Breaker { return l.breaker }

// String describes the limiter's policies, such as
// "api: 60 per 1m; per-ip: 120 per 1m", and dry run.
func (l *Limiter) String() string {
	var b strings.Builder
	for i, p := range l.policies {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.name + ": " + p.limit.String())
	}
	if l.dryRun {
		b.WriteString(" (dry run)")
	}
	return b.String()
}

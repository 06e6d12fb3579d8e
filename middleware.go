package ratelimit

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Limiter is HTTP middleware that limits requests per key under one Limit.
// It is safe for concurrent use by multiple goroutines. Build it with
// [New]; mount it with [Limiter.Handler], or call [Limiter.Admit] from a
// framework adapter.
//
// A request walks one pass: skip → key → deny cache → breaker → store
// (within the time budget) → failure policy → headers → denial.
type Limiter struct {
	store      Store
	limit      Limit
	name       string
	policy     string // name, or "default"
	prefix     string // the namespace of the limiter's keys in the store
	keyFunc    KeyFunc
	cost       func(*http.Request) int
	deny       http.Handler
	onError    func(http.ResponseWriter, *http.Request, error)
	failClosed bool
	skip       func(*http.Request) bool
	headers    HeaderStyle
	values     headerValues

	// Bad days: see timeout.go, breaker.go, denycache.go, fallback.go.
	timeout     time.Duration
	timeoutSet  bool
	breaker     *Breaker
	breakerSet  bool
	denyKeys    int
	denyKeysSet bool
	denies      *denyCache
	fallback    Store
	instances   int

	keys        *keyCache // store keys of recent request keys
	space       keyspace  // the namespace and hashing of store keys
	keySecret   []byte    // WithKeySecret
	plainKeys   bool      // WithPlainKeys
	first       policy    // the limit given to New
	extra       []policy  // more, from WithPolicy
	allPolicies []string  // RateLimit-Policy listing every policy

	observer Observer
	dryRun   bool
	errLog   throttledLog
	dryLog   throttledLog
	now      func() time.Time
}

// New returns a Limiter that takes tokens from store under limit, keying
// requests by client address unless [WithKeyFunc] says otherwise. A nil
// store, an invalid limit or a bad option is an error here, never later.
//
// On a store that is not [Local], such as Redis, every decision gets a time
// budget ([DefaultTimeout]), a circuit breaker and a local deny cache by
// default; see [WithTimeout], [WithBreaker] and [WithDenyCache].
func New(store Store, limit Limit, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("ratelimit: New: nil store")
	}
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("ratelimit: New: %w", err)
	}
	l := &Limiter{
		store:   store,
		limit:   limit,
		keyFunc: KeyByIP(),
		deny:    http.HandlerFunc(tooManyRequests),
		now:     time.Now,
	}
	l.onError = l.logError
	for _, o := range opts {
		if err := o(l); err != nil {
			return nil, err
		}
	}
	l.policy = l.name
	if l.policy == "" {
		l.policy = "default"
	}
	l.space = l.newKeyspace()
	l.prefix = l.space.ns + "/"
	l.values = newHeaderValues(l.policy, limit)
	l.keys = newKeyCache()
	l.first = policy{name: l.policy, limit: limit, prefix: l.prefix, values: l.values}
	if err := l.setUpPolicies(); err != nil {
		return nil, err
	}
	if !isLocal(store) {
		if !l.timeoutSet {
			l.timeout = DefaultTimeout
		}
		if !l.breakerSet {
			l.breaker = NewBreaker(DefaultBreakerFailures, DefaultBreakerCoolDown)
		}
		if !l.denyKeysSet {
			l.denyKeys = DefaultDenyCacheKeys
		}
	}
	if l.denyKeys > 0 {
		l.denies = newDenyCache(l.denyKeys)
	}
	if l.breaker != nil && l.observer.BreakerChange != nil {
		change, policy := l.observer.BreakerChange, l.policy
		l.breaker.notify(func(s BreakerState) { change(policy, s) })
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

// Handler returns next wrapped in the limiter: next runs only for requests
// that [Limiter.Admit] admits.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.Admit(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// Limit returns the limit the limiter enforces.
func (l *Limiter) Limit() Limit { return l.limit }

// Breaker returns the limiter's circuit breaker, or nil if it has none.
func (l *Limiter) Breaker() *Breaker { return l.breaker }

// Check decides on r, taking its tokens if it is allowed, and writes
// nothing. Its error wraps the KeyFunc's (see [ErrMissingKey]) or the
// store's; when a fallback store decided, the error is nil.
func (l *Limiter) Check(r *http.Request) (Result, error) {
	d := l.decide(r, l.keyFunc)
	return d.res, d.err
}

// Admit decides on r, sets the rate-limit headers on w and, when r is over
// its budget, writes the denial (429 by default); it reports whether the
// caller should go on to serve r. Adapters for other frameworks call it.
func (l *Limiter) Admit(w http.ResponseWriter, r *http.Request) bool {
	return l.AdmitFunc(w, r, l.keyFunc)
}

// AdmitFunc is [Limiter.Admit] with keyFunc in place of the limiter's
// KeyFunc, for adapters that key on their framework's context.
func (l *Limiter) AdmitFunc(w http.ResponseWriter, r *http.Request, keyFunc KeyFunc) bool {
	if l.skip != nil && l.skip(r) {
		return true
	}
	d := l.decide(r, keyFunc)
	if d.err != nil {
		return l.fail(w, r, d)
	}
	if d.failed != nil {
		l.onError(w, r, d.failed) // the fallback store decided
	}
	if !d.res.Allowed && l.dryRun {
		l.logWouldDeny(r, d.res)
		l.writeHeaders(w.Header(), d, false)
		return true
	}
	l.writeHeaders(w.Header(), d, !d.res.Allowed)
	if !d.res.Allowed {
		if d.results != nil {
			r = withViolated(r, l.violated(d))
		}
		l.deny.ServeHTTP(w, r)
	}
	return d.res.Allowed
}

// fail answers a request that could not be decided, and reports whether
// it may pass.
func (l *Limiter) fail(w http.ResponseWriter, r *http.Request, d decision) bool {
	err := d.err
	var ke *keyError
	if errors.As(err, &ke) {
		var missing *MissingKeyError
		if errors.As(err, &missing) {
			status := missing.Status
			if status < 400 || status > 499 {
				status = http.StatusBadRequest // a client error, whatever the KeyFunc said
			}
			http.Error(w, "missing "+missing.What, status)
		} else {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
		}
		return false
	}
	if d.gone {
		return false // the client went away: nothing to serve, nothing to report
	}
	l.onError(w, r, err)
	switch {
	case errors.Is(err, ErrInvalidCost), errors.Is(err, ErrCostExceedsCapacity), errors.Is(err, ErrNoKeySecret):
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return false
	case l.failClosed:
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return false
	}
	return true
}

// keyError marks an error of the KeyFunc.
type keyError struct{ err error }

func (e *keyError) Error() string { return "ratelimit: key: " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

func tooManyRequests(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
}

// problemHandler writes the RFC 9457 problem+json denial of l, naming the
// violated policies as its IETF headers do (l.values is set once New has
// run the options).
func problemHandler(l *Limiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		names := l.values.name
		if v := ViolatedPolicies(r); v != nil {
			quoted := make([]string, len(v))
			for i, name := range v {
				quoted[i] = strconv.Quote(name) // names are checked: no escapes needed
			}
			names = strings.Join(quoted, ",")
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",`+
			`"title":"Request cannot be satisfied as assigned quota has been exceeded",`+
			`"status":429,"violated-policies":[%s]}`+"\n", names)
	})
}

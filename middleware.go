package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// Limiter is HTTP middleware that limits requests per key under one Limit.
// It is safe for concurrent use by multiple goroutines. Build it with
// [New]; mount it with [Limiter.Handler], or call [Limiter.Admit] from a
// framework adapter.
type Limiter struct {
	store      Store
	limit      Limit
	name       string
	keyFunc    KeyFunc
	cost       func(*http.Request) int
	deny       http.Handler
	onError    func(http.ResponseWriter, *http.Request, error)
	failClosed bool
	skip       func(*http.Request) bool
	headers    HeaderStyle
	values     headerValues
}

// New returns a Limiter that takes tokens from store under limit, keying
// requests by client address unless [WithKeyFunc] says otherwise. A nil
// store, an invalid limit or a bad option is an error here, never later.
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
		onError: logError,
	}
	for _, o := range opts {
		if err := o(l); err != nil {
			return nil, err
		}
	}
	name := l.name
	if name == "" {
		name = "default"
	}
	l.values = newHeaderValues(name, limit)
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

// Check decides on r, taking its tokens if it is allowed, and writes
// nothing. Its error wraps the KeyFunc's (see [ErrMissingKey]) or the
// store's.
func (l *Limiter) Check(r *http.Request) (Result, error) {
	return l.check(r, l.keyFunc)
}

func (l *Limiter) check(r *http.Request, keyFunc KeyFunc) (Result, error) {
	key, err := keyFunc(r)
	if err != nil {
		return Result{}, &keyError{err}
	}
	if key == "" {
		return Result{}, &keyError{&MissingKeyError{What: "key", Status: http.StatusBadRequest}}
	}
	if l.name != "" {
		key = l.name + ":" + key
	}
	cost := 1
	if l.cost != nil {
		cost = l.cost(r)
	}
	return l.store.AllowN(r.Context(), boundKey(key), l.limit, cost)
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
	res, err := l.check(r, keyFunc)
	if err != nil {
		return l.fail(w, r, err)
	}
	l.values.writeHeaders(w.Header(), l.headers, res)
	if !res.Allowed {
		l.deny.ServeHTTP(w, r)
	}
	return res.Allowed
}

// fail answers a request that could not be decided, and reports whether
// it may pass.
func (l *Limiter) fail(w http.ResponseWriter, r *http.Request, err error) bool {
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
	if r.Context().Err() != nil {
		return false // the client is gone: nothing to serve, nothing to report
	}
	l.onError(w, r, err)
	switch {
	case errors.Is(err, ErrInvalidCost), errors.Is(err, ErrCostExceedsCapacity):
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

func logError(_ http.ResponseWriter, r *http.Request, err error) {
	slog.ErrorContext(context.WithoutCancel(r.Context()), "ratelimit: request not decided", "err", err, "method", r.Method, "path", r.URL.Path)
}

// problemHandler writes the RFC 9457 problem+json denial of l, naming the
// policy as its IETF headers do (l.values is set once New has run the
// options).
func problemHandler(l *Limiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",`+
			`"title":"Request cannot be satisfied as assigned quota has been exceeded",`+
			`"status":429,"violated-policies":[%s]}`+"\n", l.values.name)
	})
}

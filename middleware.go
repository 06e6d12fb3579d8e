package ratelimit

import (
	"context"
	"errors"
	"net/http"
)

// Handler returns next wrapped in the limiter: next runs only for requests
// that [Limiter.Begin] admits, and a counted request ([WithCountIf]) is
// settled with its response's status once next is done.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := l.Begin(w, r)
		switch {
		case !ok:
		case a == nil:
			next.ServeHTTP(w, r)
		default:
			serveSettled(next, w, r, a) // count.go
		}
	})
}

// Admit decides on r, sets the rate-limit headers on w and, when r is over
// its budget, writes the denial (429 by default); it reports whether the
// caller should go on to serve r. On a limiter that counts only some
// responses ([WithCountIf]) Admit keeps the cost whatever the response:
// call [Limiter.Begin] instead, to settle it.
func (l *Limiter) Admit(w http.ResponseWriter, r *http.Request) bool {
	return l.AdmitWithKeyFunc(w, r, l.keyFunc)
}

// AdmitWithKeyFunc is [Limiter.Admit] with keyFunc in place of the
// limiter's KeyFunc, for adapters that key on their framework's context.
// Policies with a KeyFunc of their own keep it.
func (l *Limiter) AdmitWithKeyFunc(w http.ResponseWriter, r *http.Request, keyFunc KeyFunc) bool {
	a, ok := l.BeginWithKeyFunc(w, r, keyFunc)
	a.Done(0) // kept
	return ok
}

// BeginWithKeyFunc is [Limiter.Begin] with keyFunc in place of the
// limiter's KeyFunc, for adapters that key on their framework's context.
// Policies with a KeyFunc of their own keep it.
func (l *Limiter) BeginWithKeyFunc(w http.ResponseWriter, r *http.Request, keyFunc KeyFunc) (*Admission, bool) {
	if l.skip != nil && l.skip(r) {
		return nil, true
	}
	p := l.getPass()
	keyErr := l.keyRequest(r, keyFunc, p)
	n := 1
	if keyErr == nil && l.cost != nil {
		n = l.cost(r)
	}
	o := l.decideKeyed(r.Context(), r, p, keyErr, n)
	ok, status := l.conclude(r, w.Header(), o)
	switch {
	case ok || status == 0: // served, or gone: nothing to answer
	case o.end == badKey:
		writeKeyError(w, o.err)
	case status == http.StatusTooManyRequests:
		l.writeDenial(w, r, p)
	default:
		http.Error(w, http.StatusText(status), status)
	}
	return l.admission(r.Context(), r, p, o, ok) // settle.go
}

// conclude turns o, the outcome of a request r (nil for AdmitKey), into
// what its caller does: go on, or answer status (0: nothing, the client
// went away). It tells the error handler what went wrong and sets the
// rate-limit headers on h, as Admit and AdmitKey answer.
func (l *Limiter) conclude(r *http.Request, h http.Header, o *outcome) (ok bool, status int) {
	switch o.end {
	case badKey:
		return false, keyErrorStatus(o.err)
	case gone: // the request's own context ended first (pass_record.go)
		if !errors.Is(o.err, context.Canceled) { // its deadline: its caller may wait for an answer
			l.onError(r, o.err)
			return false, http.StatusServiceUnavailable
		}
		return false, 0
	case badCost:
		l.onError(r, o.err)
		return false, http.StatusInternalServerError
	case undecided:
		l.onError(r, o.err)
		if l.failClosed {
			return false, http.StatusServiceUnavailable
		}
		return true, http.StatusOK
	}
	if o.err != nil {
		l.onError(r, o.err) // the fallback store decided
	}
	if !o.res.Allowed && l.dryRun {
		l.logWouldDeny(r, o.res)
		l.writeHeaders(h, o, false)
		return true, http.StatusOK
	}
	l.writeHeaders(h, o, !o.res.Allowed)
	if !o.res.Allowed {
		return false, http.StatusTooManyRequests
	}
	return true, http.StatusOK
}

// Allow is AllowN(ctx, key, 1).
func (l *Limiter) Allow(ctx context.Context, key string) (Result, error) {
	return l.AllowN(ctx, key, 1)
}

// AllowN decides on n tokens of key's budget under every policy, as Admit
// decides on a request keyed key, for callers outside HTTP (an RPC, a job
// queue, Echo's RateLimiter). key is what a KeyFunc returns, prefix
// included: a request that KeyByIP keys spends "ip:192.0.2.1", not
// "192.0.2.1". The same namespaces, deny cache, time
// budget, breaker, failure policy and observer (whose Decision.Request is
// then nil). Its Result is that of the most constraining policy, and
// Allowed says whether to go on, whatever the error:
//   - decided (by the store, the deny cache or the fallback store): the
//     decision, and a nil error unless the fallback decided because the
//     store failed (then the store's error, also told to the error
//     handler);
//   - undecided (the store failed, no fallback): Allowed unless the
//     limiter fails closed, and the store's error, also told to the error
//     handler with a nil request;
//   - dry run: a denial is logged and reported Allowed, with the
//     RetryAfter it would have waited (the one Result Allowed with a
//     RetryAfter);
//   - an empty key, a bad n or a done context: not Allowed, and the error.
//
// Every policy counts key: a limiter whose [Policy] has a KeyFunc of its
// own needs a request, and AllowN refuses it with an error. A limiter
// given [WithMaxDelay] shapes as Admit does: AllowN waits for tokens that
// come within that delay (ctx ends the wait), and a cost of 0, which
// reports the budget, never waits.
func (l *Limiter) AllowN(ctx context.Context, key string, n int) (Result, error) {
	if key == "" {
		return Result{}, ErrEmptyKey
	}
	p := l.getPass()
	defer passes.Put(p)
	o := l.decideKeyed(ctx, nil, p, l.keyCall(ctx, key, p), n) // decide.go
	switch o.end {
	case badKey, badCost, gone:
		return Result{}, o.err
	case undecided:
		l.onError(nil, o.err)
		return Result{Allowed: !l.failClosed, Limit: l.policies[0].limit}, o.err
	}
	if o.err != nil {
		l.onError(nil, o.err)
	}
	if !o.res.Allowed && l.dryRun {
		l.logWouldDeny(nil, o.res)
		o.res.Allowed = true
	}
	return o.res, o.err
}

// decideKeyed is the outcome of a request (r nil for a call with no
// *http.Request) whose takes p were keyed with keyErr: a bad key answers
// at once; a bad configuration too, as an error the observer is told of;
// otherwise the pass decides n tokens, with shaping, and the observer is
// told.
func (l *Limiter) decideKeyed(ctx context.Context, r *http.Request, p *pass, keyErr error, n int) *outcome {
	var o *outcome
	switch {
	case keyErr == nil:
		o = l.runShaped(ctx, n, p)
	case errors.Is(keyErr, ErrBadConfig): // a programming error (an unknown plan...): 500, observed
		clear(p.takes) // keyed in part, or by the pass's last use: no key to tell
		o = p.answer(outcome{end: badCost, err: keyErr, source: FromFailurePolicy})
	default:
		return p.answer(outcome{end: badKey, err: keyErr})
	}
	if l.observer.Decision != nil {
		l.observe(r, p, o)
	}
	return o
}

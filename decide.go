package ratelimit

import (
	"context"
	"fmt"
	"net/http"
)

// Deciding requests that are no *http.Request, such as gRPC calls,
// without making one: their caller keys them ([clientip.Keys] for client
// addresses) and [Limiter.AdmitKey] walks the pass Admit walks (pass.go).

// DecidesByKey reports whether the limiter decides every request from its
// key and its context alone, so that [Limiter.AdmitKey] decides a request
// exactly as [Limiter.Admit] decides one the limiter keys alike. It does
// unless it was given [WithSkip], [WithCost], a
// [WithDenyHandler] other than [ProblemJSON], or a [Policy] with a Key of
// its own: they read or answer the *http.Request.
func (l *Limiter) DecidesByKey() bool {
	if l.skip != nil || l.cost != nil {
		return false
	}
	if _, problem := l.deny.(problemJSON); l.deny != nil && !problem {
		return false
	}
	for i := range l.policies {
		if l.policies[i].key != nil {
			return false
		}
	}
	return true
}

// KeysByAddress reports whether the limiter keys requests by client
// address with [KeyByIP] and no options, its default: it was given no
// [WithKeyFunc], so that an adapter may key a call by its peer's address
// itself, with a [clientip.Keys] of no options, and decide it with AdmitKey.
func (l *Limiter) KeysByAddress() bool { return l.defaultKey }

// AdmitKey decides on a request that is no *http.Request, such as a gRPC
// call, keyed key by its caller, as [Limiter.Admit] decides on a request
// that the limiter keys key: the same namespaces, deny cache, time budget,
// breaker, failure policy, shaping, dry run and observer (whose
// Decision.Request is nil, as is the request the error handler is told
// of). It sets on h (if not nil) the rate-limit headers Admit would set on the
// response, and reports whether the caller should go on and, if not, the
// HTTP status Admit would have answered with:
//   - 429 Too Many Requests: over budget; h holds Retry-After;
//   - 503 Service Unavailable: the store failed and the limiter fails
//     closed, or ctx's deadline passed before the store answered (told to
//     the error handler);
//   - 500 Internal Server Error: a bad configuration, such as a key that
//     needs [WithKeySecret], told to the error handler;
//   - 400 Bad Request: an empty key;
//   - 0: ctx was canceled (the client went away): nothing to answer.
//
// It decides a cost of 1 and skips nothing: on a limiter that does not
// [Limiter.DecidesByKey], make an *http.Request and call Admit. On a
// limiter that counts only some responses ([WithCountIf]) AdmitKey keeps
// the cost whatever the answer: call [Limiter.BeginKey] to settle it.
func (l *Limiter) AdmitKey(ctx context.Context, key string, h http.Header) (ok bool, status int) {
	a, ok, status := l.BeginKey(ctx, key, h)
	a.Done(0) // kept
	return ok, status
}

// BeginKey is [Limiter.AdmitKey] that returns, on a limiter that counts
// only some responses ([WithCountIf]), the [Admission] to settle once the
// call is answered, with the HTTP status its answer counts as (a gRPC
// adapter maps its status code). Otherwise the Admission is nil.
func (l *Limiter) BeginKey(ctx context.Context, key string, h http.Header) (a *Admission, ok bool, status int) {
	if h == nil {
		h = http.Header{} // the headers go nowhere
	}
	p := l.getPass()
	o := l.decideKeyed(ctx, nil, p, l.keyCall(ctx, key, p), 1) // middleware.go
	ok, status = l.conclude(nil, h, o)
	a, ok = l.admission(ctx, nil, p, o, ok)
	return a, ok, status
}

// keyCall keys p under every policy with the caller's key, as keyRequest
// keys a request (an empty key is a missing one); a policy with a KeyFunc
// of its own is a bad configuration here.
func (l *Limiter) keyCall(ctx context.Context, key string, p *pass) error {
	if key == "" {
		return &MissingKeyError{What: "key", Status: http.StatusBadRequest}
	}
	for i := range l.policies {
		if pol := &l.policies[i]; pol.key != nil {
			return fmt.Errorf("ratelimit: policy %q keys requests with a KeyFunc of its own: decide them with Admit: %w", pol.name, ErrBadConfig)
		}
		if err := l.fillTake(ctx, p, i, key); err != nil {
			return err
		}
	}
	if l.hasPlans {
		p.plan = PlanFrom(ctx)
	}
	return nil
}

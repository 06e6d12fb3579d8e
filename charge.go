package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
)

// WithCountIf counts only the responses for which count(status) is true,
// such as failed logins (401, 403) on a login route: a request passes if
// each policy still has room for its cost (a report, n = 0, taking
// nothing), and its cost is taken after the handler, only if count says
// so. Handler does it; an adapter that calls [Limiter.Admit] calls
// [Limiter.Count] after its handler.
//
// The headers, written before the handler, show the budget as it was
// before the request: a counted response is not in them. The count is
// sent once, with the request's context values but not its cancellation
// (a client that hangs up does not escape it), through the same pass: the
// deny cache, breaker and failure policy apply, so a store that is failing
// gets no call while the breaker is open. A count that finds the budget
// spent meanwhile (concurrent requests that passed the same report) takes
// nothing: the key is at its limit already, and the next request is
// denied.
func WithCountIf(count func(status int) bool) Option {
	return func(c *config) error {
		if count == nil {
			return errors.New("ratelimit: WithCountIf(nil)")
		}
		c.countIf = count
		return nil
	}
}

// CountStatus returns a count function for [WithCountIf] that counts the
// responses of the given status codes, such as CountStatus(401, 403).
func CountStatus(codes ...int) func(status int) bool {
	codes = slices.Clone(codes)
	return func(status int) bool { return slices.Contains(codes, status) }
}

// checkRoom turns the report of a request (decided with n = 0) into its
// decision: denied by each policy that has no room for n tokens.
func (l *Limiter) checkRoom(p *pass, o *outcome, n int) {
	if o.end != decided || o.source == FromDenyCache && !o.res.Allowed {
		return
	}
	for i, t := range p.takes {
		if res := &p.results[i]; res.Allowed && res.Remaining < n {
			res.Allowed, res.RetryAfter = false, retryFromReport(t.Limit, *res, n)
			if l.blocks != nil { // block.go: a denial starts a block
				l.blocks.block(t.Key, l.now())
				res.RetryAfter, res.ResetAfter = max(res.RetryAfter, l.blocks.d), max(res.ResetAfter, l.blocks.d)
			}
		}
	}
	*o = l.summarize(p, *o)
}

// Count takes the cost of r, which [Limiter.Admit] admitted, if the
// limiter counts responses of status ([WithCountIf]); adapters call it
// after their handler. Handler calls it itself.
func (l *Limiter) Count(r *http.Request, status int) {
	if l.countIf == nil || !l.countIf(status) {
		return
	}
	if l.skip != nil && l.skip(r) {
		return
	}
	p := l.getPass()
	defer passes.Put(p)
	if err := l.keyRequest(r, l.keyFunc, p); err != nil {
		return // Admit answered it already
	}
	n := 1
	if l.cost != nil {
		n = l.cost(r)
	}
	o := l.run(context.WithoutCancel(r.Context()), n, p)
	if l.observer.Decision != nil {
		l.observe(r, p, o)
	}
	if o.end == undecided || o.end == badCost || o.err != nil {
		l.onError(r, o.err)
	}
}

// statusWriter records the status of a response for Count.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// serveCounted serves r with next, then counts its response.
func (l *Limiter) serveCounted(next http.Handler, w http.ResponseWriter, r *http.Request) {
	sw := statusWriters.Get().(*statusWriter)
	sw.ResponseWriter, sw.status = w, 0
	defer func() {
		status := sw.status
		sw.ResponseWriter = nil
		statusWriters.Put(sw)
		if status == 0 {
			status = http.StatusOK
		}
		l.Count(r, status)
	}()
	next.ServeHTTP(sw, r)
}

// WithCharges lets the limiter take costs known only after the response,
// such as an LLM call's tokens, with [Limiter.Charge].
func WithCharges() Option {
	return func(c *config) error { c.charges = true; return nil }
}

// ErrNoCharges is returned by [Limiter.Charge] on a limiter made without
// [WithCharges].
var ErrNoCharges = errors.New("ratelimit: Charge needs WithCharges")

// Charge takes n more tokens of key's budget under every policy, after
// the fact: what a request used once the handler knew (tokens, bytes,
// rows). It makes no store call, so it is cheap, cannot fail halfway, and
// is not lost when the client disconnects: the charge becomes the key's
// debt, at most each policy's capacity, which the key's next requests
// through this limiter pay with their own tokens, in the same store call;
// a request whose budget cannot pay its cost and the debt is denied, so the
// key waits its debt out as an x/time/rate reservation goes negative. A
// charge is counted once, on this app server (its debt is paid by the
// requests it decides; route a key to one server, or charge where it is
// decided, for a fleet to see it at once). The headers of the charged
// request, sent already, do not show it; those of the requests that pay
// it do. key is the client key, as for [Limiter.AllowN]; policies with
// plans read the plan from ctx.
func (l *Limiter) Charge(ctx context.Context, key string, n int) error {
	if l.debts == nil || !l.charges {
		return ErrNoCharges
	}
	if key == "" {
		return ErrEmptyKey
	}
	if n < 0 {
		return ErrInvalidCost
	}
	for i := range l.policies {
		pol := &l.policies[i]
		sk, err := pol.storeKey(key)
		if err != nil {
			return err
		}
		limit, _, err := pol.limitFor(ctx)
		if err != nil {
			return err
		}
		l.debts.add(sk, n, limit.Capacity())
	}
	return nil
}

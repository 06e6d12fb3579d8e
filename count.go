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
		c.given.add(optCountIf)
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
func (l *Limiter) checkRoom(ctx context.Context, p *pass, o *outcome, n int) {
	if o.end != decided || o.source == FromDenyCache && !o.res.Allowed {
		return
	}
	for i, t := range p.takes {
		if res := &p.results[i]; res.Allowed && res.Remaining < n {
			res.Allowed, res.RetryAfter = false, retryFromReport(t.Limit, *res, n)
			if l.blockFor > 0 && o.source == FromStore { // block.go: a denial starts a block
				l.startBlock(ctx, p, i)
			}
		}
	}
	*o = l.summarize(p, *o)
}

// Counts reports whether the limiter counts only some responses
// ([WithCountIf]): an adapter that calls [Limiter.Admit] then calls
// [Limiter.Count] after its handler.
func (l *Limiter) Counts() bool { return l.countIf != nil }

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
	if w.status == 0 && code >= 200 { // 1xx are not the response's status
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

// serveCounted serves r with next, then counts its response: 200 if next
// wrote no status, 500 if it panicked before writing one.
func (l *Limiter) serveCounted(next http.Handler, w http.ResponseWriter, r *http.Request) {
	sw := statusWriters.Get().(*statusWriter)
	sw.ResponseWriter, sw.status = w, 0
	returned := false
	defer func() {
		status := sw.status
		sw.ResponseWriter = nil
		statusWriters.Put(sw)
		switch {
		case status != 0:
		case returned:
			status = http.StatusOK
		default:
			status = http.StatusInternalServerError
		}
		l.Count(r, status)
	}()
	next.ServeHTTP(sw, r)
	returned = true
}

package ratelimit

import (
	"errors"
	"net/http"
	"slices"

	"github.com/ratelimit-go/ratelimit/internal/status"
)

// WithCountIf counts only the responses for which count(status) is true,
// such as failed logins (401, 403) on a login route. A request takes its
// cost before its handler, as every decision does (all policies or none),
// so that concurrent requests are bounded by the budget: of 60 guesses
// sent at once at a budget of 5, at most 5 reach the handler. Once the
// handler is done, the cost is kept if count(status) is true and given
// back otherwise ([Refunder]: one store call; a store that cannot refund
// keeps it). A request the fallback admitted while the store failed
// ([WithFallback]) gives its cost back to the fallback, and out of what
// the store is charged for the fallback's admissions once it answers
// again. [Limiter.Handler] does it; an adapter calls [Limiter.Begin]
// and the returned [Admission]'s Done with its handler's status.
//
// The status counted is the response's (not an informational 1xx); 500
// if the handler panicked before writing one; for a handler that took the
// connection over (http.Hijacker), the status it reports with
// [ReportStatus], else counted whatever count says. The headers, written
// before the handler, count the request.
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

// ReportStatus tells a limiter that counts responses ([WithCountIf]) the
// status that the response written on w counts as, for a handler that
// answers on a hijacked connection (a WebSocket, a raw protocol), whose
// status the limiter cannot see. It does nothing on a writer that no such
// limiter wrapped.
func ReportStatus(w http.ResponseWriter, code int) {
	if sw := status.Find(w); sw != nil {
		sw.Report(code)
	}
}

// serveSettled serves r with next through a writer that records the
// response's status, then settles a with it.
func serveSettled(next http.Handler, w http.ResponseWriter, r *http.Request, a *Admission) {
	sw, rw := status.Get(w)
	returned := false
	defer func() {
		code := sw.Status(returned)
		status.Put(sw)
		a.Done(code)
	}()
	next.ServeHTTP(rw, r)
	returned = true
}

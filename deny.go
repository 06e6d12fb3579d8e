package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// writeDenial writes the answer to a request over its budget: the deny
// handler's, told which policies denied it, or 429 Too Many Requests.
func (l *Limiter) writeDenial(w http.ResponseWriter, r *http.Request, p *pass) {
	if l.deny == nil {
		http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		return
	}
	l.deny.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), violatedKey{}, l.violated(p))))
}

// writeKeyError answers a request its KeyFunc could not key: the status
// and text of a [MissingKeyError], else 400.
func writeKeyError(w http.ResponseWriter, err error) {
	var missing *MissingKeyError
	if errors.As(err, &missing) {
		http.Error(w, "missing "+missing.What, keyErrorStatus(err))
		return
	}
	http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
}

// keyErrorStatus is the status of a request keyed with err: a
// [MissingKeyError]'s own 4xx, else 400 (a client error, whatever the
// KeyFunc said).
func keyErrorStatus(err error) int {
	var missing *MissingKeyError
	if errors.As(err, &missing) && missing.Status >= 400 && missing.Status <= 499 {
		return missing.Status
	}
	return http.StatusBadRequest
}

type violatedKey struct{}

// ViolatedPolicies returns, in a deny handler ([WithDenyHandler]), the
// names of the policies that denied the request: the limiter's own name
// ("default" without [WithName]) when its first policy denied, those of
// [WithPolicy] for theirs, and for a policy with plans "policy.plan", as
// RateLimit-Policy names it. It returns nil outside a deny handler. The
// slice is shared: do not modify it.
func ViolatedPolicies(r *http.Request) []string {
	names, _ := r.Context().Value(violatedKey{}).([]string)
	return names
}

// ProblemJSON returns the deny handler that writes an RFC 9457
// application/problem+json body of problem type quota-exceeded with status
// 429, naming the violated policies ([ViolatedPolicies]), as
// draft-ietf-httpapi-ratelimit-headers describes:
//
//	ratelimit.New(store, limit, ratelimit.WithDenyHandler(ratelimit.ProblemJSON()))
func ProblemJSON() http.Handler { return problemJSON{} }

type problemJSON struct{}

func (problemJSON) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v := ViolatedPolicies(r)
	quoted := make([]string, len(v))
	for i, name := range v {
		quoted[i] = strconv.Quote(name) // names are checked: no escapes needed
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprintf(w, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",`+
		`"title":"Request cannot be satisfied as assigned quota has been exceeded",`+
		`"status":429,"violated-policies":[%s]}`+"\n", strings.Join(quoted, ","))
}

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// funcLimit returns the limit of a LimitFunc policy for ctx.
func (pol *policy) funcLimit(ctx context.Context) (Limit, int, error) {
	l, err := pol.limitFunc(ctx)
	if err == nil {
		err = l.Validate()
	}
	if err == nil && l.Algorithm != pol.limit.Algorithm { // the placeholder's is the policy's
		err = fmt.Errorf("a limit of %v, the policy counts with a %v (see Policy.Algorithm)", l, pol.limit.Algorithm)
	}
	if err != nil {
		return Limit{}, -1, fmt.Errorf("%w: policy %q: LimitFunc: %w", ErrBadConfig, pol.name, err)
	}
	return l, -1, nil
}

// validateAlgorithm checks Policy.Algorithm of p: a valid algorithm, with
// a LimitFunc; zero without.
func validateAlgorithm(p Policy) error {
	switch {
	case p.LimitFunc == nil && p.Algorithm != TokenBucket:
		return errors.New("a policy's Algorithm is that of its LimitFunc's limits: leave it zero without one (a Limit or a Plan names its own)")
	case p.Algorithm < TokenBucket || p.Algorithm > SlidingLog:
		return fmt.Errorf("unknown algorithm %v", p.Algorithm)
	}
	return nil
}

// funcHeaderValues returns the header values of limit l of a LimitFunc
// policy, from its bounded cache (funcvalues.go).
func (pol *policy) funcHeaderValues(l Limit) *headerValues {
	return pol.funcValues.get(l)
}

// policyList is a RateLimit-Policy value listing every policy, for the
// header values of one request's limits (ids).
type policyList struct {
	ids   []uint64
	value []string
}

const policyListsSize = 256 // a power of two

// funcPolicyList returns the RateLimit-Policy value that lists every policy
// of a limiter with a LimitFunc policy, for the limits of p's takes: kept
// in the header values of the limit when one LimitFunc policy alone
// varies (funcvalues.go), else made once for the combinations that recur,
// as a customer's do.
func (l *Limiter) funcPolicyList(p *pass) []string {
	for i := range l.policies {
		if c := l.policies[i].funcValues; c != nil && c.listed {
			return c.get(p.takes[i].Limit).list
		}
	}
	var buf [16]uint64
	ids := buf[:0]
	h := uint64(14695981039346656037)
	for i, t := range p.takes {
		id := l.policies[i].valuesFor(t.Limit, p.plan).id
		ids = append(ids, id)
		h = (h ^ id) * 1099511628211
	}
	slot := &l.funcLists[h&(policyListsSize-1)]
	if e := slot.Load(); e != nil && slices.Equal(e.ids, ids) {
		return e.value
	}
	e := &policyList{ids: slices.Clone(ids)}
	parts := make([]string, len(p.takes))
	for i, t := range p.takes {
		parts[i] = l.policies[i].valuesFor(t.Limit, p.plan).policy[0]
	}
	e.value = []string{strings.Join(parts, ", ")}
	slot.Store(e)
	return e.value
}

// headerValuesMade numbers the header values, for funcPolicyList.
var headerValuesMade atomic.Uint64

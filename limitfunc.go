package ratelimit

import (
	"context"
	"fmt"
)

// A Policy's LimitFunc returns its limit per request, for limits that live
// in a database (a customer's contract): it is called on every request
// with the request's context (or AllowN's), and should answer from memory
// (a cache the app keeps fresh). The limit is checked like any other; an
// invalid one, or an error, is the request's error (answered 500, told to
// the error handler), never a silent default. Headers describe the limit
// returned; RateLimit-Policy then names the most constraining policy
// alone, not every policy of the limiter. Metrics label by the
// policy only: limits are not a bounded set. A key keeps one budget when
// its limit changes, as across [Plan]s. The header values of at most
// maxFuncLimits distinct limits are kept; others are made per response.

// maxFuncLimits bounds the header values a LimitFunc policy keeps.
const maxFuncLimits = 1024

// funcLimit returns the limit of a LimitFunc policy for ctx.
func (pol *policy) funcLimit(ctx context.Context) (Limit, int, error) {
	l, err := pol.limitFunc(ctx)
	if err == nil {
		err = l.Validate()
	}
	if err != nil {
		return Limit{}, -1, fmt.Errorf("%w: policy %q: LimitFunc: %w", ErrBadConfig, pol.name, err)
	}
	return l, -1, nil
}

// funcHeaderValues returns the header values of limit l of a LimitFunc
// policy, made once for each of the first maxFuncLimits limits.
func (pol *policy) funcHeaderValues(l Limit) *headerValues {
	if v, ok := pol.funcValues.Load(l); ok {
		return v.(*headerValues)
	}
	v := newHeaderValues(pol.name, l)
	if pol.funcCount.Add(1) <= maxFuncLimits {
		pol.funcValues.Store(l, &v)
	}
	return &v
}

package rls

// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: a request that is refused takes
// nothing; one that passes takes its hits.

import (
	"context"

	"github.com/ratelimit-go/ratelimit"
)

// decideStop decides takes as StopIncrementWhenOverLimit asks. The takes
// of descriptors that can refuse the request (neither shadow_mode nor
// quota_mode, the service in neither mode) are taken all or nothing. Each
// other take, whose going over refuses nothing, is taken on its own if it
// fits and the request passes, else only read: so a quota_mode or
// shadow_mode descriptor over its limit neither refuses the request nor
// stops the others from counting. It returns the first call's error.
func (s *Service) decideStop(ctx context.Context, ds []descriptor, takes []ratelimit.Take, results []ratelimit.Result) error {
	binds, over := make([]bool, len(takes)), make([]bool, len(takes))
	refused := false
	for _, d := range ds {
		if d.rule == nil {
			continue
		}
		b := s.refuses(d.rule)
		refused = refused || b && d.over
		if d.take >= 0 {
			binds[d.take] = binds[d.take] || b
			over[d.take] = over[d.take] || d.over
		}
	}
	var bound []int // the binding takes' indexes
	for j := range takes {
		if refused || over[j] && !binds[j] {
			takes[j].N = 0 // refused already, or going over alone: read only
		}
		if binds[j] {
			bound = append(bound, j)
		}
	}
	ok, first := s.allowAllOf(ctx, bound, takes, results)
	for j := range takes {
		if binds[j] {
			continue
		}
		if !ok {
			takes[j].N = 0
		}
		if _, err := s.limiter.AllowTakes(ctx, takes[j:j+1], results[j:j+1]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// allowAllOf takes the takes of the given indexes all or nothing, in one
// call, writing their results in place; true when there are none.
func (s *Service) allowAllOf(ctx context.Context, idx []int, takes []ratelimit.Take, results []ratelimit.Result) (bool, error) {
	if len(idx) == 0 {
		return true, nil
	}
	sub, res := make([]ratelimit.Take, len(idx)), make([]ratelimit.Result, len(idx))
	for i, j := range idx {
		sub[i] = takes[j]
	}
	ok, err := s.limiter.AllowTakes(ctx, sub, res)
	for i, j := range idx {
		results[j] = res[i]
	}
	return ok, err
}

// refuses reports whether a descriptor of rule r over its limit refuses
// the request: not in shadow_mode or quota_mode, nor the service.
func (s *Service) refuses(r *Rule) bool {
	return !s.opts.ShadowMode && !s.opts.QuotaMode && !r.ShadowMode && !r.QuotaMode
}

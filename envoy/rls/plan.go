package rls

// A request's plan: each descriptor's rule and hits, and the takes they
// make of the limiter, one per distinct budget.

import (
	"math"
	"strings"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/ratelimit-go/ratelimit"
)

// descriptor is what a request's descriptor needs decided.
type descriptor struct {
	rule      *Rule
	unlimited bool
	hits      uint64
	negative  bool
	take      int    // index of its take; -1 for none
	over      bool   // over before any store call: a rate of 0, or upto above capacity
	upto      uint64 // its take's hits of the descriptors up to it (one budget named twice)
	later     int    // what its take took for the descriptors after it
}

// plan finds each descriptor's rule and hits, and the takes and refunds
// they make: one take per distinct budget.
func (s *Service) plan(cfg *Config, req *pb.RateLimitRequest) ([]descriptor, []ratelimit.Take, []ratelimit.Take) {
	ds := make([]descriptor, len(req.GetDescriptors()))
	replaced := map[string]bool{}
	keys := make([]string, len(ds))
	for i, d := range req.GetDescriptors() {
		rule, shared := cfg.lookup(req.GetDomain(), d)
		ds[i] = descriptor{rule: rule, take: -1, hits: hits(req, d), negative: d.GetIsNegativeHits()}
		if rule == nil {
			continue
		}
		for _, r := range rule.Replaces {
			replaced[r] = true
		}
		if rule.Unlimited {
			ds[i].unlimited, ds[i].rule = true, nil
			continue
		}
		keys[i] = budgetKey(req.GetDomain(), d, shared, rule.sig)
	}
	var takes, refunds []ratelimit.Take
	var demand []uint64 // each take's hits, summed over its descriptors
	byKey := map[string]int{}
	for i := range ds {
		d := &ds[i]
		if d.rule == nil {
			continue
		}
		if d.rule.Name != "" && replaced[d.rule.Name] {
			d.rule = nil
			continue
		}
		if d.rule.Limit.Rate == 0 { // refuses every hit, as the reference's 0 per unit
			d.over = true
			continue
		}
		capacity := uint64(d.rule.Limit.Capacity())
		n := d.hits
		if d.negative {
			refunds = append(refunds, ratelimit.Take{Key: keys[i], Limit: d.rule.Limit, N: int(min(n, capacity))})
			n = 0
		}
		j, ok := byKey[keys[i]] // one budget twice in a request: one take of both
		if !ok {
			j = len(takes)
			byKey[keys[i]] = j
			takes = append(takes, ratelimit.Take{Key: keys[i], Limit: d.rule.Limit})
			demand = append(demand, 0)
		}
		d.take = j
		demand[j] = addSat(demand[j], n)
		d.upto = demand[j]
		// Over as the reference finds it: its hits, counted after those of
		// the descriptors before it of the same budget, pass the capacity.
		d.over = demand[j] > capacity
	}
	for j := range takes {
		takes[j].N = takeN(takes[j].Limit, demand[j])
	}
	if s.opts.StopIncrementWhenOverLimit || len(refunds) == 0 {
		return ds, takes, refunds
	}
	return ds, takes, dedupe(refunds)
}

// setLater notes what d's take, of cost takes[d.take].N, takes for the
// descriptors after d of the same budget: d's remaining is what the take
// leaves plus that, as the reference counts a budget named twice, in turn.
func (d *descriptor) setLater(takes []ratelimit.Take) {
	if d.take >= 0 {
		n := uint64(takes[d.take].N)
		d.later = int(n - min(d.upto, n))
	}
}

// takeN is the cost of a take of demand hits under l: all of them, if the
// capacity holds them; else a fixed window is filled (CountTakes takes
// what it still holds) and another algorithm is asked for nothing, as a
// refused take of it takes nothing.
func takeN(l ratelimit.Limit, demand uint64) int {
	switch c := l.Capacity(); {
	case demand <= uint64(c):
		return int(demand)
	case l.Algorithm == ratelimit.FixedWindow:
		return c
	default:
		return 0
	}
}

// addSat is a + b, or math.MaxUint64 if that overflows.
func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// dedupe sums the refunds of one budget.
func dedupe(ts []ratelimit.Take) []ratelimit.Take {
	out := ts[:0]
	at := make(map[string]int, len(ts)) // a request may hold thousands of descriptors
	for _, t := range ts {
		if j, ok := at[t.Key]; ok {
			out[j].N = min(out[j].N+t.N, t.Limit.Capacity())
			continue
		}
		at[t.Key] = len(out)
		out = append(out, t)
	}
	return out
}

// hits is a descriptor's hits: its own hits_addend when set (0: check
// only), else the request's, at least 1.
func hits(req *pb.RateLimitRequest, d *rlv3.RateLimitDescriptor) uint64 {
	if h := d.GetHitsAddend(); h != nil {
		return h.GetValue()
	}
	return uint64(max(1, req.GetHitsAddend()))
}

// budgetKey is the client key of a descriptor's budget: the reference's
// cache key without its window (domain_key_value_..._), and the rule's
// signature, each part escaped (keyPart) so that no two descriptors share
// a key: the reference's (k1=a_k2_b, k2=c) and (k1=a, k2=b_k2_c) do, and a
// client that chooses a value could spend another's budget.
func budgetKey(domain string, d *rlv3.RateLimitDescriptor, shared []string, sig string) string {
	var b strings.Builder
	keyPart(&b, domain)
	for i, e := range d.GetEntries() {
		keyPart(&b, e.GetKey())
		v := e.GetValue()
		if i < len(shared) && shared[i] != "" {
			v = shared[i]
		}
		keyPart(&b, v)
	}
	escape(&b, sig) // last: no '_' after it, so a key without '_' or '\' in its parts is as before
	return b.String()
}

// keyPart writes s to b escaped, and a '_': a part ends at the first '_'
// that has no '\' before it.
func keyPart(b *strings.Builder, s string) {
	escape(b, s)
	b.WriteByte('_')
}

// escape writes s to b with a '\' before every '_' and '\' in it.
func escape(b *strings.Builder, s string) {
	if !strings.ContainsAny(s, "_\\") {
		b.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '_' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
}

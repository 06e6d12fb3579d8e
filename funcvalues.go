package ratelimit

import (
	"strconv"
	"sync"
	"time"
)

// The header values of a LimitFunc policy's limits: a bounded cache, so
// that a limiter whose customers each have a contract of their own (many
// thousands of distinct limits) makes each limit's values once, as it does
// for a few, and a response allocates no header value either way.

// maxFuncLimits bounds the header values a LimitFunc policy keeps: for as
// many distinct limits (by capacity and refill window, all their values
// depend on). Past it, arbitrary ones are dropped and made again when
// asked: a few allocations, never more.
const maxFuncLimits = 16_384

const funcShards = 16

// funcValuesKey is what the header values of a LimitFunc policy's limit
// depend on: the capacity (X-RateLimit-Limit, RateLimit-Policy's q) and
// RateLimit-Policy's w. The policy's name is the same for all.
type funcValuesKey struct {
	capacity int
	w        int64
}

// funcValues is a LimitFunc policy's bounded cache of header values, by
// funcValuesKey, sharded so that concurrent requests rarely wait on one
// another. Its values share the policy's name and the tables that depend
// only on it (numbers, RateLimit values).
type funcValues struct {
	base   headerValues // the name, numbers and RateLimit values every limit's share
	shards [funcShards]funcShard
	// listed: this policy is the only one of its limiter whose limit
	// varies per request (no other LimitFunc, no plans), so each value
	// carries RateLimit-Policy's list of every policy, before + its own + after.
	listed        bool
	before, after string
}

type funcShard struct {
	mu sync.RWMutex
	m  map[funcValuesKey]*headerValues
	_  [40]byte // keep the locks on separate cache lines
}

func newFuncValues(name string) *funcValues {
	// Its numbers go up to maxInterned, as those of the largest limit.
	return &funcValues{base: newHeaderValues(name, Limit{Rate: maxInterned, Period: time.Second})}
}

// get returns the header values of limit l, made once while they are kept.
func (c *funcValues) get(l Limit) *headerValues {
	k := funcValuesKey{capacity: l.Capacity(), w: policyWindow(l)}
	h := (uint64(k.capacity)*0x9e3779b97f4a7c15 ^ uint64(k.w)*0xc2b2ae3d27d4eb4f) >> 60
	sh := &c.shards[h%funcShards]
	sh.mu.RLock()
	v := sh.m[k]
	sh.mu.RUnlock()
	if v != nil {
		return v
	}
	v = c.make(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.m[k]; old != nil {
		return old
	}
	if sh.m == nil {
		sh.m = make(map[funcValuesKey]*headerValues)
	}
	if len(sh.m) >= maxFuncLimits/funcShards {
		drop := len(sh.m) / 8 // in map order: a dropped value is made again
		for key := range sh.m {
			if drop <= 0 {
				break
			}
			delete(sh.m, key)
			drop--
		}
	}
	sh.m[k] = v
	return v
}

// make makes the header values of k, on the policy's shared tables.
func (c *funcValues) make(k funcValuesKey) *headerValues {
	v := c.base
	v.limit = []string{strconv.Itoa(k.capacity)}
	v.policy = []string{v.name + ";q=" + strconv.Itoa(k.capacity) + ";w=" + strconv.FormatInt(k.w, 10)}
	v.id = headerValuesMade.Add(1)
	if c.listed {
		v.list = []string{c.before + v.policy[0] + c.after}
	}
	return &v
}

// setFuncLists readies, when a limiter's only policy whose limit varies
// per request is a LimitFunc policy, the RateLimit-Policy list of every
// policy in its header values: the other policies' parts never change.
func (l *Limiter) setFuncLists() {
	if !l.funcPolicies || l.hasPlans || len(l.policies) < 2 {
		return
	}
	only := -1
	for i := range l.policies {
		if l.policies[i].funcValues != nil {
			if only >= 0 {
				return // two vary: funcPolicyList's slots serve them
			}
			only = i
		}
	}
	c := l.policies[only].funcValues
	for i := range l.policies {
		switch {
		case i < only:
			c.before += l.policies[i].values.policy[0] + ", "
		case i > only:
			c.after += ", " + l.policies[i].values.policy[0]
		}
	}
	c.listed = true
}

package ratelimit

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The header names a Limiter writes, in canonical form (the keys of
// http.Header, set directly so that a response allocates none).
const (
	headerLimit      = "X-Ratelimit-Limit"     // the capacity: Burst, or Rate
	headerRemaining  = "X-Ratelimit-Remaining" // requests of cost 1 still allowed now
	headerReset      = "X-Ratelimit-Reset"     // whole seconds until the budget is full, rounded up
	headerRetryAfter = "Retry-After"           // on a 429: whole seconds, rounded up, at least 1
	headerPolicy     = "Ratelimit-Policy"      // IETF draft: "name";q=capacity;w=seconds to refill it
	headerRateLimit  = "Ratelimit"             // IETF draft: "name";r=Remaining;t=seconds
)

// HeaderStyle chooses the rate-limit headers a [Limiter] writes; set it with
// [WithHeaders]. Retry-After is written on every 429 whatever the style.
type HeaderStyle int

const (
	// HeadersXRateLimit writes X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset on every limited response. The default.
	HeadersXRateLimit HeaderStyle = iota
	// HeadersIETF writes RateLimit-Policy and RateLimit as in
	// draft-ietf-httpapi-ratelimit-headers (drafts -08 to -11), as RFC 9651
	// structured-field lists: `RateLimit-Policy: "name";q=100;w=60` with
	// q = the capacity (Burst, or Rate) and w = the whole seconds, rounded
	// up, in which it refills (a token bucket's capacity·Period/Rate, a
	// window's Period), so that q per w is honest and r never exceeds q;
	// and `RateLimit: "name";r=42;t=3`
	// with r = Remaining and t = whole seconds, rounded up, until more quota
	// is available (draft -10): the next token of a token bucket, the end of
	// a window; on a 429 until the request could pass, equal to Retry-After.
	HeadersIETF
	// HeadersBoth writes both of the above.
	HeadersBoth
	// HeadersNone writes no rate-limit headers but Retry-After on a 429.
	HeadersNone
)

// headerValues holds the values that never change for a Limiter, and the
// numbers it writes most, so that a response allocates no header values.
// The slices are shared by every response: a handler may replace them
// (Header.Set, Header.Del) but must not assign to their elements.
type headerValues struct {
	limit   []string   // X-RateLimit-Limit
	policy  []string   // RateLimit-Policy
	name    string     // the policy's structured-field string, quoted
	numbers [][]string // numbers[i] is {"i"}: interned, the process's
	named   uint64     // unique to name: its RateLimit values' (rateLimit)
	id      uint64     // unique to these values (limitfunc.go)
	list    []string   // RateLimit-Policy of every policy, for a LimitFunc's limit (funcvalues.go)
}

// rateLimitValues are the RateLimit values made lately, the process's:
// every policy's, told apart by its named, so that a policy (a rule of a
// rules file of thousands) costs no table of its own.
var rateLimitValues [rateLimitCacheSize]atomic.Pointer[rateLimitValue]

const rateLimitCacheSize = 4096 // a power of two

// rateLimitValue is a RateLimit header value, shared read-only.
type rateLimitValue struct {
	r, t  int64
	named uint64
	value []string
}

// rateLimit returns the RateLimit header value `"name";r=r;t=t`, made once
// for the pairs of r and t that recur, as they do for every client of a
// limiter: a response then allocates no header value.
func (v *headerValues) rateLimit(r, t int64) []string {
	h := uint64(r)*1021 + uint64(t) + v.named*0x9e3779b97f4a7c15
	slot := &rateLimitValues[(h^h>>32)&(rateLimitCacheSize-1)]
	if e := slot.Load(); e != nil && e.r == r && e.t == t && e.named == v.named {
		return e.value
	}
	value := []string{v.name + ";r=" + strconv.FormatInt(r, 10) + ";t=" + strconv.FormatInt(t, 10)}
	slot.Store(&rateLimitValue{r: r, t: t, named: v.named, value: value})
	return value
}

// maxInterned bounds the numbers kept ready-made.
const maxInterned = 1024

// internedNumbers are the header values of 0 to maxInterned, made once for
// the process.
var internedNumbers = sync.OnceValue(func() [][]string {
	numbers := make([][]string, maxInterned+1)
	for i := range numbers {
		numbers[i] = []string{strconv.Itoa(i)}
	}
	return numbers
})

// namesMade numbers the names of header values (headerValues.named).
var namesMade atomic.Uint64

func newHeaderValues(name string, l Limit) headerValues {
	quoted := strconv.Quote(name) // name is printable ASCII without " or \ (checked)
	w := policyWindow(l)
	// Remaining goes up to the capacity; Reset and Retry-After up to two
	// periods (the sliding window's) or the bucket's time to fill.
	most := max(int64(l.Capacity()), 2*w, ceilSeconds(l.refillTime(l.Capacity(), roundUp)))
	return headerValues{
		limit:   []string{strconv.Itoa(l.Capacity())},
		policy:  []string{quoted + ";q=" + strconv.Itoa(l.Capacity()) + ";w=" + strconv.FormatInt(w, 10)},
		name:    quoted,
		numbers: internedNumbers()[:min(most, maxInterned)+1],
		named:   namesMade.Add(1),
		id:      headerValuesMade.Add(1),
	}
}

// policyWindow is the w of l's RateLimit-Policy, in whole seconds rounded
// up: the period of a window, and for a token bucket the time it takes to
// refill its whole capacity, so that q (the capacity) per w is honest and
// r (Remaining) never exceeds q.
func policyWindow(l Limit) int64 {
	if l.Algorithm == TokenBucket {
		return max(1, ceilSeconds(l.fillTime()))
	}
	return max(1, int64(math.Ceil(l.Period.Seconds())))
}

// number returns the header value of i.
func (v *headerValues) number(i int64) []string {
	if i >= 0 && i < int64(len(v.numbers)) {
		return v.numbers[i]
	}
	return []string{strconv.FormatInt(i, 10)}
}

// writeHeaders sets the headers of style for res on h, and Retry-After if
// retry (a denial that is answered, not a dry run's).
func (v *headerValues) writeHeaders(h http.Header, style HeaderStyle, res Result, retry bool) {
	reset := ceilSeconds(res.ResetAfter)
	if style == HeadersXRateLimit || style == HeadersBoth {
		h[headerLimit] = v.limit
		h[headerRemaining] = v.number(int64(res.Remaining))
		h[headerReset] = v.number(reset)
	}
	if style == HeadersIETF || style == HeadersBoth {
		t := ceilSeconds(untilMoreQuota(res))
		if !res.Allowed {
			t = retryAfterSeconds(res.RetryAfter)
		}
		h[headerPolicy] = v.policy
		h[headerRateLimit] = v.rateLimit(int64(res.Remaining), t)
	}
	if retry {
		h[headerRetryAfter] = v.number(retryAfterSeconds(res.RetryAfter))
	}
}

// untilMoreQuota is the time until the key's budget grows by one unit, the
// IETF draft's t: for a token bucket the next token, which comes
// (capacity − Remaining − 1) tokens' refill before the bucket is full; for
// the windows, whose Result says less, the time until full, which is never
// early.
func untilMoreQuota(res Result) time.Duration {
	l := res.Limit
	if l.Algorithm != TokenBucket || res.ResetAfter <= 0 {
		return res.ResetAfter
	}
	missing := l.Capacity() - res.Remaining - 1 // whole tokens after the next one
	d := res.ResetAfter - l.refillTime(missing, roundDown)
	return max(d, 0)
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(d/time.Second) + min(1, int64(d%time.Second))
}

// retryAfterSeconds is the Retry-After of a 429: rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int64 { return max(1, ceilSeconds(d)) }

// writeHeaders sets the rate-limit headers of o on h: those of the most
// constraining policy, with several policies RateLimit-Policy listing them
// all, and Retry-After if retry.
func (l *Limiter) writeHeaders(h http.Header, o *outcome, retry bool) {
	l.policies[o.best].valuesFor(o.res.Limit, o.plan).writeHeaders(h, l.headers, o.res, retry)
	if l.allNames != nil && (l.headers == HeadersIETF || l.headers == HeadersBoth) {
		h[headerPolicy] = l.allNames
		if list, ok := l.planLists[o.plan]; ok {
			h[headerPolicy] = list
		}
		if o.policyList != nil {
			h[headerPolicy] = o.policyList
		}
	}
}

package ratelimit

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// Header names written by a [Limiter].
const (
	HeaderLimit      = "X-Ratelimit-Limit"     // the capacity: Burst, or Rate
	HeaderRemaining  = "X-Ratelimit-Remaining" // requests of cost 1 still allowed now
	HeaderReset      = "X-Ratelimit-Reset"     // whole seconds until the budget is full, rounded up
	HeaderRetryAfter = "Retry-After"           // on a 429: whole seconds, rounded up, at least 1
	HeaderPolicy     = "Ratelimit-Policy"      // IETF draft: "name";q=Rate;w=Period in seconds
	HeaderRateLimit  = "Ratelimit"             // IETF draft: "name";r=Remaining;t=seconds
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
	// q = Rate and w = Period in whole seconds, and `RateLimit: "name";r=42;t=3`
	// with r = Remaining and t = whole seconds, rounded up, until more quota
	// is available (draft -10): the next token of a token bucket, the end of
	// a window; on a 429 until the request could pass, equal to Retry-After.
	HeadersIETF
	// HeadersBoth writes both of the above.
	HeadersBoth
	// HeadersNone writes no rate-limit headers but Retry-After on a 429.
	HeadersNone
)

// headerValues holds the values that never change for a Limiter.
type headerValues struct {
	limit  []string // X-RateLimit-Limit
	policy []string // RateLimit-Policy
	name   string   // the policy's structured-field string, quoted
}

func newHeaderValues(name string, l Limit) headerValues {
	quoted := strconv.Quote(name) // name is printable ASCII without " or \ (checked)
	w := int64(math.Ceil(l.Period.Seconds()))
	return headerValues{
		limit:  []string{strconv.Itoa(l.Capacity())},
		policy: []string{quoted + ";q=" + strconv.Itoa(l.Rate) + ";w=" + strconv.FormatInt(w, 10)},
		name:   quoted,
	}
}

// writeHeaders sets the headers of style for res on h.
func (v *headerValues) writeHeaders(h http.Header, style HeaderStyle, res Result) {
	// One backing array for all the values of this response.
	vals := make([]string, 4)
	remaining := strconv.Itoa(res.Remaining)
	reset := ceilSeconds(res.ResetAfter)
	if style == HeadersXRateLimit || style == HeadersBoth {
		h[HeaderLimit] = v.limit
		vals[0] = remaining
		h[HeaderRemaining] = vals[0:1:1]
		vals[1] = strconv.FormatInt(reset, 10)
		h[HeaderReset] = vals[1:2:2]
	}
	if style == HeadersIETF || style == HeadersBoth {
		t := ceilSeconds(untilMoreQuota(res))
		if !res.Allowed {
			t = retryAfterSeconds(res.RetryAfter)
		}
		h[HeaderPolicy] = v.policy
		vals[2] = v.name + ";r=" + remaining + ";t=" + strconv.FormatInt(t, 10)
		h[HeaderRateLimit] = vals[2:3:3]
	}
	if !res.Allowed {
		vals[3] = strconv.FormatInt(retryAfterSeconds(res.RetryAfter), 10)
		h[HeaderRetryAfter] = vals[3:4:4]
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
	d := res.ResetAfter - time.Duration(float64(missing)/l.PerSecondRate()*float64(time.Second))
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

// Package reftest holds the differential test of ratelimitd against
// envoyproxy/ratelimit: it builds both services, starts them on one
// configuration directory and one Redis (single node and Cluster), sends
// both the same stream of RateLimitService requests and asserts the same
// answers, except where the envoy module's README lists a difference. It
// also holds ratelimitd's token buckets against golang.org/x/time/rate
// and the cost comparison of the two services. Nothing imports it.
package reftest

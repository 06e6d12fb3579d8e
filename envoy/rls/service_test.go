package rls

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const baseConfig = `
domain: test
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: route
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: quota
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: free
    rate_limit: {unlimited: true}
  - key: closed
    rate_limit: {unit: minute, requests_per_unit: 0}
  - key: named
    rate_limit: {unit: minute, requests_per_unit: 1, name: small}
  - key: bigger
    rate_limit: {unit: minute, requests_per_unit: 10, replaces: [{name: small}]}
  - key: path
    value: /api/*
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: path
    value: /api/v1*
    rate_limit: {unit: minute, requests_per_unit: 100}
  - key: tenant
    value: t*
    share_threshold: true
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: bucket
    rate_limit: {unit: second, requests_per_unit: 2, algorithm: token_bucket, burst: 4}
  - key: weekly
    rate_limit: {unit: week, requests_per_unit: 9}
  - key: monthly
    rate_limit: {unit: month, requests_per_unit: 9}
  - key: yearly
    rate_limit: {unit: year, requests_per_unit: 9}
  - key: multi
    rate_limit: {unit: minute, requests_per_unit: 9, unit_multiplier: 5}
`

// step is one request of a protocol case and its summary.
type step struct {
	req  *pb.RateLimitRequest
	want string
}

func TestShouldRateLimit(t *testing.T) {
	override := desc("user=u")
	override.Limit = &rlv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit_MINUTE}
	huge := func() *rlv3.RateLimitDescriptor { // more than ratelimit.MaxRate a minute
		d := desc("user=u")
		d.Limit = &rlv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: math.MaxUint32, Unit: typev3.RateLimitUnit_MINUTE}
		return d
	}
	negative := withHits(desc("user=u"), 2)
	negative.IsNegativeHits = true
	cases := []struct {
		name  string
		opts  Options
		steps []step
	}{
		{"an unmatched descriptor is OK with no limit", Options{}, []step{
			{request("test", desc("nobody=x")), "OK: OK/0"},
			{request("other", desc("user=u")), "OK: OK/0"},
		}},
		{"OVER_LIMIT when any descriptor is, and every hit counts on every descriptor refused or not", Options{}, []step{
			{request("test", withHits(desc("user=u"), 3), desc("route=r")), "OK: OK/0 OK/4"},
			{request("test", desc("user=u"), desc("route=r")), "OVER_LIMIT: OVER_LIMIT/0 OK/3"},
			// A check (0 hits) of a full window is OK: the count stops at the
			// limit (the reference's, 4 here, would answer OVER_LIMIT).
			{request("test", withHits(desc("user=u"), 0), desc("route=r")), "OK: OK/0 OK/2"},
		}},
		{"a descriptor's own hits_addend, else the request's, at least 1", Options{}, []step{
			{&pb.RateLimitRequest{Domain: "test", HitsAddend: 2, Descriptors: []*rlv3.RateLimitDescriptor{desc("route=r")}}, "OK: OK/3"},
			{&pb.RateLimitRequest{Domain: "test", HitsAddend: 0, Descriptors: []*rlv3.RateLimitDescriptor{desc("route=r")}}, "OK: OK/2"},
			{request("test", withHits(desc("route=r"), 0)), "OK: OK/2"},
			{request("test", withHits(desc("route=r"), 9)), "OVER_LIMIT: OVER_LIMIT/0"},
			{request("test", withHits(desc("route=r"), 0)), "OK: OK/0"},
		}},
		{"with StopIncrementWhenOverLimit a refused request takes nothing", Options{StopIncrementWhenOverLimit: true}, []step{
			{request("test", withHits(desc("user=u"), 3), desc("route=r")), "OK: OK/0 OK/4"},
			{request("test", desc("user=u"), desc("route=r")), "OVER_LIMIT: OVER_LIMIT/0 OK/4"},
			{request("test", desc("route=r")), "OK: OK/3"},
		}},
		// A descriptor whose going over refuses nothing does not stop the
		// others from counting: the request passes, so it takes its hits.
		{"with StopIncrementWhenOverLimit, a quota_mode descriptor over its limit stops no other from counting", Options{StopIncrementWhenOverLimit: true}, []step{
			{request("test", desc("quota=q"), desc("user=u")), "OK: OK/0 OK/2"},
			{request("test", desc("quota=q"), desc("user=u")), "OK: OK/0 OK/1"},
			{request("test", desc("quota=q"), desc("user=u")), "OK: OK/0 OK/0"},
			{request("test", desc("quota=q"), desc("user=u")), "OVER_LIMIT: OK/0 OVER_LIMIT/0"},
		}},
		{"with StopIncrementWhenOverLimit, a shadow_mode descriptor over its limit stops no other from counting", Options{StopIncrementWhenOverLimit: true}, []step{
			{request("test", desc("shadow=s"), desc("user=u")), "OK: OK/0 OK/2"},
			{request("test", desc("shadow=s"), withHits(desc("user=u"), 2)), "OK: OK/0 OK/0"},
			{request("test", desc("shadow=s"), desc("user=u")), "OVER_LIMIT: OK/0 OVER_LIMIT/0"},
		}},
		{"with StopIncrementWhenOverLimit and the service in shadow mode, each descriptor counts alone", Options{StopIncrementWhenOverLimit: true, ShadowMode: true}, []step{
			{request("test", withHits(desc("user=u"), 3), desc("route=r")), "OK: OK/0 OK/4"},
			{request("test", desc("user=u"), desc("route=r")), "OK: OVER_LIMIT/0 OK/3"},
		}},
		{"is_negative_hits gives back, never above capacity", Options{}, []step{
			{request("test", withHits(desc("user=u"), 3)), "OK: OK/0"},
			{request("test", negative), "OK: OK/2"},
			{request("test", negative), "OK: OK/3"},
		}},
		{"the request's limit override", Options{}, []step{
			{request("test", override), "OK: OK/0"},
			{request("test", override), "OVER_LIMIT: OVER_LIMIT/0"},
		}},
		{"a limit override the library cannot hold leaves the descriptor without a limit", Options{}, []step{
			{request("test", huge(), desc("route=r")), "OK: OK/0 OK/4"},
			{request("test", withHits(huge(), math.MaxUint32)), "OK: OK/0"},
		}},
		{"shadow_mode answers OK over its limit", Options{}, []step{
			{request("test", desc("shadow=s")), "OK: OK/0"},
			{request("test", desc("shadow=s")), "OK: OK/0"},
		}},
		{"global shadow mode answers OK overall", Options{ShadowMode: true}, []step{
			{request("test", withHits(desc("user=u"), 3)), "OK: OK/0"},
			{request("test", desc("user=u")), "OK: OVER_LIMIT/0"},
		}},
		{"quota_mode is OK over its limit", Options{}, []step{
			{request("test", desc("quota=q")), "OK: OK/0"},
			{request("test", desc("quota=q")), "OK: OK/0"},
		}},
		{"unlimited is OK with MaxUint32 remaining", Options{}, []step{
			{request("test", desc("free=f")), "OK: OK/4294967295"},
		}},
		{"a rule of 0 per unit refuses every hit", Options{}, []step{
			{request("test", desc("closed=c")), "OVER_LIMIT: OVER_LIMIT/0"},
		}},
		{"replaces drops the named rule of the request", Options{}, []step{
			{request("test", desc("named=n"), desc("bigger=b")), "OK: OK/0 OK/9"},
			{request("test", desc("named=n"), desc("bigger=b")), "OK: OK/0 OK/8"},
			{request("test", desc("named=n")), "OK: OK/0"},
			{request("test", desc("named=n")), "OVER_LIMIT: OVER_LIMIT/0"},
		}},
		{"the first listed wildcard wins", Options{}, []step{
			{request("test", desc("path=/api/v1/users")), "OK: OK/0"},
			{request("test", desc("path=/api/v1/orders")), "OK: OK/0"},
		}},
		{"share_threshold shares one budget between the wildcard's values", Options{}, []step{
			{request("test", desc("tenant=t1")), "OK: OK/1"},
			{request("test", desc("tenant=t2")), "OK: OK/0"},
			{request("test", desc("tenant=t3")), "OVER_LIMIT: OVER_LIMIT/0"},
		}},
		// As the reference counts them, in turn: the descriptors past the
		// capacity are over, each remaining what is left after it.
		{"one budget named several times: the descriptors past its capacity are over", Options{}, []step{
			{request("test", desc("user=u"), desc("user=u"), desc("user=u"), desc("user=u"), desc("user=u")),
				"OVER_LIMIT: OK/2 OK/1 OK/0 OVER_LIMIT/0 OVER_LIMIT/0"},
			{request("test", withHits(desc("user=u"), 0)), "OK: OK/0"}, // the window is full
			{request("test", desc("user=u")), "OVER_LIMIT: OVER_LIMIT/0"},
		}},
		{"one budget named several times within its capacity: one take of their hits", Options{}, []step{
			{request("test", desc("user=u"), withHits(desc("user=u"), 2)), "OK: OK/2 OK/0"},
			{request("test", desc("user=u")), "OVER_LIMIT: OVER_LIMIT/0"},
		}},
		{"with StopIncrementWhenOverLimit, one budget named past its capacity takes nothing", Options{StopIncrementWhenOverLimit: true}, []step{
			{request("test", desc("user=u"), desc("user=u"), desc("user=u"), desc("user=u")),
				"OVER_LIMIT: OK/3 OK/3 OK/3 OVER_LIMIT/0"},
			{request("test", desc("user=u"), desc("user=u"), desc("user=u")), "OK: OK/2 OK/1 OK/0"},
		}},
		{"a token bucket asked past its capacity takes nothing, in one descriptor or several", Options{}, []step{
			{request("test", withHits(desc("bucket=b"), 5)), "OVER_LIMIT: OVER_LIMIT/0"},
			{request("test", desc("bucket=b"), desc("bucket=b"), desc("bucket=b"), desc("bucket=b"), desc("bucket=b")),
				"OVER_LIMIT: OK/4 OK/4 OK/4 OK/4 OVER_LIMIT/0"},
			{request("test", withHits(desc("bucket=b"), 4)), "OK: OK/0"},
		}},
		{"a token bucket takes nothing when it refuses", Options{}, []step{
			{request("test", withHits(desc("bucket=b"), 3)), "OK: OK/1"},
			{request("test", withHits(desc("bucket=b"), 2)), "OVER_LIMIT: OVER_LIMIT/0"},
			{request("test", withHits(desc("bucket=b"), 1)), "OK: OK/0"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestService(t, baseConfig, c.opts)
			for i, st := range c.steps {
				resp, err := s.ShouldRateLimit(context.Background(), st.req)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := summary(resp); got != st.want {
					t.Errorf("step %d: %s, want %s", i, got, st.want)
				}
			}
		})
	}
}

func TestShouldRateLimitRefusesMalformedRequests(t *testing.T) {
	s, _ := newTestService(t, baseConfig, Options{})
	for _, req := range []*pb.RateLimitRequest{request("", desc("user=u")), request("test")} {
		_, err := s.ShouldRateLimit(context.Background(), req)
		if status.Code(err) != codes.Unknown {
			t.Errorf("%v: %v, want Unknown", req, err)
		}
	}
}

// Each status carries current_limit and duration_until_reset of the
// reference's fixed windows (WEEK 7 days from the epoch, MONTH 30 days,
// YEAR 365 days); unit_multiplier is told back.
func TestStatusLimitAndReset(t *testing.T) {
	s, clock := newTestService(t, baseConfig, Options{})
	cases := []struct {
		key    string
		unit   pb.RateLimitResponse_RateLimit_Unit
		window int64
		mult   uint32
	}{
		{"user", pb.RateLimitResponse_RateLimit_MINUTE, 60, 0},
		{"weekly", pb.RateLimitResponse_RateLimit_WEEK, 7 * 86400, 0},
		{"monthly", pb.RateLimitResponse_RateLimit_MONTH, 30 * 86400, 0},
		{"yearly", pb.RateLimitResponse_RateLimit_YEAR, 365 * 86400, 0},
		{"multi", pb.RateLimitResponse_RateLimit_MINUTE, 300, 5},
		{"closed", pb.RateLimitResponse_RateLimit_MINUTE, 60, 0}, // 0 per minute: the unit's window, as the reference
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			resp, err := s.ShouldRateLimit(context.Background(), request("test", desc(c.key+"=x")))
			if err != nil {
				t.Fatal(err)
			}
			st := resp.Statuses[0]
			now := clock.Now().Unix()
			if st.CurrentLimit.GetUnit() != c.unit || st.DurationUntilReset.GetSeconds() != c.window-now%c.window {
				t.Errorf("limit %v, reset %v; want unit %v, reset %ds", st.CurrentLimit, st.DurationUntilReset, c.unit, c.window-now%c.window)
			}
			if st.CurrentLimit.GetUnitMultiplier().GetValue() != c.mult {
				t.Errorf("unit_multiplier %v, want %d", st.CurrentLimit.GetUnitMultiplier(), c.mult)
			}
		})
	}
}

func TestResponseHeaders(t *testing.T) {
	s, clock := newTestService(t, baseConfig, Options{Headers: true})
	resp, err := s.ShouldRateLimit(context.Background(), request("test", desc("route=r"), desc("user=u"), desc("free=f")))
	if err != nil {
		t.Fatal(err)
	}
	reset := 60 - clock.Now().Unix()%60
	want := map[string]string{"RateLimit-Limit": "3", "RateLimit-Remaining": "2", "RateLimit-Reset": strconv.FormatInt(reset, 10)}
	if len(resp.ResponseHeadersToAdd) != 3 {
		t.Fatalf("headers %v", resp.ResponseHeadersToAdd)
	}
	for _, h := range resp.ResponseHeadersToAdd {
		if want[h.Key] != h.Value {
			t.Errorf("%s: %s, want %s", h.Key, h.Value, want[h.Key])
		}
	}
	if resp.Statuses[2].LimitRemaining != math.MaxUint32 {
		t.Errorf("unlimited remaining %d", resp.Statuses[2].LimitRemaining)
	}
}

// A fixed window starts afresh at its window's end.
func TestWindowEnds(t *testing.T) {
	s, clock := newTestService(t, baseConfig, Options{})
	for range 3 {
		s.ShouldRateLimit(context.Background(), request("test", desc("user=u")))
	}
	resp, _ := s.ShouldRateLimit(context.Background(), request("test", desc("user=u")))
	if got := summary(resp); got != "OVER_LIMIT: OVER_LIMIT/0" {
		t.Fatalf("fourth request: %s", got)
	}
	clock.Add(time.Duration(resp.Statuses[0].DurationUntilReset.GetSeconds()) * time.Second)
	resp, _ = s.ShouldRateLimit(context.Background(), request("test", desc("user=u")))
	if got := summary(resp); got != "OK: OK/2" {
		t.Errorf("after duration_until_reset: %s, want OK: OK/2", got)
	}
}

// TestDescriptorsThatJoinAlikeKeepTheirOwnBudgets: values joined with '_'
// as the reference joins them would make (k1=a_k2_b, k2=c) and (k1=a,
// k2=b_k2_c) one budget, so a client choosing a value could spend
// another's; escaped, each keeps its own.
func TestDescriptorsThatJoinAlikeKeepTheirOwnBudgets(t *testing.T) {
	const config = `
domain: test
descriptors:
  - key: k1
    descriptors:
      - key: k2
        rate_limit: {unit: hour, requests_per_unit: 2}
`
	s, _ := newTestService(t, config, Options{})
	for _, tt := range []struct{ spend, other string }{
		{"k1=a_k2_b,k2=c", "k1=a,k2=b_k2_c"},
		{`k1=a\,k2=b`, `k1=a,k2=\b`},
		{`k1=a\_,k2=b`, `k1=a\,k2=_b`},
	} {
		ctx := context.Background()
		if resp, err := s.ShouldRateLimit(ctx, request("test", withHits(desc(tt.spend), 2))); err != nil || summary(resp) != "OK: OK/0" {
			t.Fatalf("%s: %s %v, want OK: OK/0", tt.spend, summary(resp), err)
		}
		if resp, err := s.ShouldRateLimit(ctx, request("test", withHits(desc(tt.other), 0))); err != nil || summary(resp) != "OK: OK/2" {
			t.Errorf("%s after %s spent its budget: %s %v, want OK: OK/2", tt.other, tt.spend, summary(resp), err)
		}
	}
}

// TestBudgetKeyEscapesOnlyWhatItMust: a descriptor without '_' or '\' in
// its parts keeps the key it had before escaping (its count survives an
// upgrade); the others' parts are escaped.
func TestBudgetKeyEscapesOnlyWhatItMust(t *testing.T) {
	for _, tt := range []struct {
		domain, entries, sig, want string
	}{
		{"test", "user=bob,path=/a", "3", "test_user_bob_path_/a_3"},
		{"test", "k1=a_k2_b,k2=c", "3", `test_k1_a\_k2\_b_k2_c_3`},
		{"my_domain", `k=a\b`, "4zAmerica/New_York", `my\_domain_k_a\\b_4zAmerica/New\_York`},
	} {
		if got := budgetKey(tt.domain, desc(tt.entries), nil, tt.sig); got != tt.want {
			t.Errorf("budgetKey(%q, %q, %q) = %q, want %q", tt.domain, tt.entries, tt.sig, got, tt.want)
		}
	}
}

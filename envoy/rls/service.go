package rls

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/ratelimit-go/ratelimit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Options are a Service's settings, each the reference's environment
// variable of the same meaning; the zero value is the reference's default.
type Options struct {
	// StopIncrementWhenOverLimit (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT):
	// a refused request takes nothing from any descriptor, all decided in
	// one atomic step. False (the default): every hit counts on every
	// matched descriptor, refused or not.
	StopIncrementWhenOverLimit bool
	// Headers (LIMIT_RESPONSE_HEADERS_ENABLED) adds the rate-limit headers
	// of the most constraining descriptor to each answer.
	Headers bool
	// LimitHeader, RemainingHeader and ResetHeader name them:
	// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset by default.
	LimitHeader, RemainingHeader, ResetHeader string
	// ShadowMode (SHADOW_MODE) answers OK overall whatever the descriptors.
	ShadowMode bool
	// QuotaMode (QUOTA_MODE) treats every descriptor as quota_mode.
	QuotaMode bool
	// Now is the clock of duration_until_reset; time.Now by default.
	Now func() time.Time
}

// Service answers RateLimitService v3 from the descriptor files of a
// [Config], deciding through a ratelimit.Limiter: its store, time budget,
// breaker and failure policy. It is safe for concurrent use by multiple
// goroutines; [Service.SetConfig] swaps the rules atomically.
type Service struct {
	pb.UnimplementedRateLimitServiceServer
	limiter *ratelimit.Limiter
	opts    Options
	config  atomic.Pointer[Config]
}

// NewService returns a Service that decides through limiter (whose own
// limit is not used: each descriptor brings its rule) under cfg (nil: no
// configuration yet, every request an error).
func NewService(limiter *ratelimit.Limiter, cfg *Config, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LimitHeader == "" {
		opts.LimitHeader = "RateLimit-Limit"
	}
	if opts.RemainingHeader == "" {
		opts.RemainingHeader = "RateLimit-Remaining"
	}
	if opts.ResetHeader == "" {
		opts.ResetHeader = "RateLimit-Reset"
	}
	s := &Service{limiter: limiter, opts: opts}
	if cfg != nil {
		s.config.Store(cfg)
	}
	return s
}

// SetConfig makes cfg the rules of the requests that follow.
func (s *Service) SetConfig(cfg *Config) { s.config.Store(cfg) }

// Config returns the rules in force, nil if none was loaded.
func (s *Service) Config() *Config { return s.config.Load() }

// ShouldRateLimit decides a request as envoyproxy/ratelimit does; see the
// package's README for where it differs. An empty domain or no
// descriptors is an Unknown error, as in the reference.
func (s *Service) ShouldRateLimit(ctx context.Context, req *pb.RateLimitRequest) (*pb.RateLimitResponse, error) {
	if req.GetDomain() == "" {
		return nil, status.Error(codes.Unknown, "rate limit domain must not be empty")
	}
	if len(req.GetDescriptors()) == 0 {
		return nil, status.Error(codes.Unknown, "rate limit descriptor list must not be empty")
	}
	cfg := s.config.Load()
	if cfg == nil {
		return nil, status.Error(codes.Unknown, "no rate limit configuration loaded")
	}
	ds, takes, refunds := s.plan(cfg, req)
	if len(refunds) > 0 {
		if err := s.limiter.RefundTakes(ctx, refunds); err != nil && ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	results := make([]ratelimit.Result, len(takes))
	var err error
	if s.opts.StopIncrementWhenOverLimit {
		err = s.decideStop(ctx, ds, takes, results) // stop.go
	} else if len(takes) > 0 {
		_, err = s.limiter.CountTakes(ctx, takes, results) // every hit counts, refused or not
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if isCallError(err) {
			return nil, status.Error(codes.Internal, err.Error())
		}
		// Decided by the fallback or the failure policy: the results say.
	}
	for i := range ds {
		ds[i].setLater(takes)
	}
	return s.answer(req, ds, results), nil
}

// isCallError reports an error of the call's arguments, not the store's.
func isCallError(err error) bool {
	return errors.Is(err, ratelimit.ErrInvalidLimit) || errors.Is(err, ratelimit.ErrInvalidCost) ||
		errors.Is(err, ratelimit.ErrCostExceedsCapacity) || errors.Is(err, ratelimit.ErrEmptyKey) ||
		errors.Is(err, ratelimit.ErrDuplicateKey) || errors.Is(err, ratelimit.ErrBadConfig)
}

// answer makes the response of the decided descriptors.
func (s *Service) answer(req *pb.RateLimitRequest, ds []descriptor, results []ratelimit.Result) *pb.RateLimitResponse {
	now := s.opts.Now()
	resp := &pb.RateLimitResponse{Statuses: make([]*pb.RateLimitResponse_DescriptorStatus, len(ds))}
	overall := pb.RateLimitResponse_OK
	var headerStatus *pb.RateLimitResponse_DescriptorStatus
	minRemaining := uint32(math.MaxUint32)
	for i, d := range ds {
		st := s.status(d, results, now)
		if s.opts.Headers && st.CurrentLimit != nil && st.LimitRemaining < minRemaining {
			headerStatus, minRemaining = st, st.LimitRemaining
		}
		switch {
		case d.unlimited:
			st = &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK, LimitRemaining: math.MaxUint32}
		case st.Code == pb.RateLimitResponse_OVER_LIMIT && (s.opts.QuotaMode || d.rule.QuotaMode):
			st = &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK, CurrentLimit: st.CurrentLimit, LimitRemaining: st.LimitRemaining}
		case st.Code == pb.RateLimitResponse_OVER_LIMIT:
			overall, headerStatus, minRemaining = st.Code, st, 0
		}
		resp.Statuses[i] = st
	}
	if s.opts.Headers && headerStatus != nil {
		resp.ResponseHeadersToAdd = []*core.HeaderValue{
			{Key: s.opts.LimitHeader, Value: strconv.FormatUint(uint64(headerStatus.CurrentLimit.GetRequestsPerUnit()), 10)},
			{Key: s.opts.RemainingHeader, Value: strconv.FormatUint(uint64(headerStatus.LimitRemaining), 10)},
			{Key: s.opts.ResetHeader, Value: strconv.FormatInt(headerStatus.DurationUntilReset.GetSeconds(), 10)},
		}
	}
	if overall == pb.RateLimitResponse_OVER_LIMIT && s.opts.ShadowMode {
		overall = pb.RateLimitResponse_OK
	}
	resp.OverallCode = overall
	return resp
}

// status is descriptor d's status, before unlimited and quota mode.
func (s *Service) status(d descriptor, results []ratelimit.Result, now time.Time) *pb.RateLimitResponse_DescriptorStatus {
	if d.rule == nil {
		return &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK}
	}
	st := &pb.RateLimitResponse_DescriptorStatus{
		Code:         pb.RateLimitResponse_OK,
		CurrentLimit: &pb.RateLimitResponse_RateLimit{Name: d.rule.Name, RequestsPerUnit: d.rule.RequestsPerUnit, Unit: d.rule.Unit},
	}
	if d.rule.UnitMultiplier > 1 {
		st.CurrentLimit.UnitMultiplier = wrapperspb.UInt32(d.rule.UnitMultiplier)
	}
	var res ratelimit.Result
	if d.take >= 0 {
		res = results[d.take]
	}
	if d.over || d.take < 0 || !res.Allowed {
		st.Code = pb.RateLimitResponse_OVER_LIMIT
	} else {
		st.LimitRemaining = uint32(min(res.Remaining+d.later, math.MaxUint32))
	}
	st.DurationUntilReset = durationpb.New(untilReset(d.rule, res, now))
	if st.Code == pb.RateLimitResponse_OVER_LIMIT && d.rule.ShadowMode {
		st.Code = pb.RateLimitResponse_OK
	}
	return st
}

// untilReset is duration_until_reset of rule r in whole seconds: until the
// fixed window's end, as the reference computes it (a rule of 0 requests
// too: its unit's window), or for the other algorithms until the key's
// budget is full again (at least a second).
func untilReset(r *Rule, res ratelimit.Result, now time.Time) time.Duration {
	l := r.Limit
	if l.Rate == 0 {
		l = ratelimit.Limit{Period: units[r.Unit] * time.Duration(max(r.UnitMultiplier, 1)), Algorithm: ratelimit.FixedWindow}
	}
	switch {
	case l.Period < time.Second:
		return time.Second
	case l.Calendar != ratelimit.NoCalendar:
		t := now.In(l.Zone)
		next := time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, l.Zone)
		if l.Calendar == ratelimit.CalendarMonth {
			next = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, l.Zone)
		}
		return ceilSeconds(next.Sub(now))
	case l.Algorithm == ratelimit.FixedWindow:
		p := int64(l.Period / time.Second)
		sec := now.Unix()
		return time.Duration(p-sec%p) * time.Second
	}
	return max(ceilSeconds(res.ResetAfter), time.Second)
}

func ceilSeconds(d time.Duration) time.Duration {
	return (d + time.Second - 1) / time.Second * time.Second
}

package reftest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// step is one request of a stream.
type step struct {
	hits  uint32   // the request's hits_addend
	descs []string // "k=v,k2=v2", then "#N" for its own hits_addend, "@N/UNIT" for a limit override
	// ref and ours, when set, are the answers (as summary writes them) the
	// README's table of differences says each gives; else both answer alike.
	ref, ours string
}

// tcase is a stream of requests to one domain.
type tcase struct {
	name   string
	domain string
	window time.Duration // the shortest window of its rules: the stream must not straddle one
	steps  []step
}

// descriptor parses one of step.descs.
func descriptor(s string) *rlv3.RateLimitDescriptor {
	d := &rlv3.RateLimitDescriptor{}
	if rest, over, ok := strings.Cut(s, "@"); ok {
		s = rest
		n, unit, _ := strings.Cut(over, "/")
		rpu, _ := strconv.Atoi(n)
		d.Limit = &rlv3.RateLimitDescriptor_RateLimitOverride{
			RequestsPerUnit: uint32(rpu),
			Unit:            typev3.RateLimitUnit(typev3.RateLimitUnit_value[unit]),
		}
	}
	if rest, n, ok := strings.Cut(s, "#"); ok {
		s = rest
		h, _ := strconv.ParseUint(n, 10, 64)
		d.HitsAddend = wrapperspb.UInt64(h)
	}
	for _, e := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(e, "=")
		d.Entries = append(d.Entries, &rlv3.RateLimitDescriptor_Entry{Key: k, Value: v})
	}
	return d
}

// request makes the request of a step to domain.
func (s step) request(domain string) *pb.RateLimitRequest {
	req := &pb.RateLimitRequest{Domain: domain, HitsAddend: s.hits}
	for _, d := range s.descs {
		req.Descriptors = append(req.Descriptors, descriptor(d))
	}
	return req
}

// summary writes an answer as "OVER_LIMIT: OK/3 OVER_LIMIT/0", each
// status with its remaining, or an error as "error Unknown".
func summary(r *pb.RateLimitResponse, err error) string {
	if err != nil {
		return "error " + status.Code(err).String()
	}
	var b strings.Builder
	b.WriteString(r.GetOverallCode().String() + ":")
	for _, s := range r.GetStatuses() {
		fmt.Fprintf(&b, " %s/%d", s.GetCode(), s.GetLimitRemaining())
	}
	return b.String()
}

// differences lists where two answers differ: the overall code, each
// status's code, current_limit and limit_remaining, and the headers, all
// exactly; duration_until_reset and the reset header within a second, as
// each service reads its own clock.
func differences(ref, ours *pb.RateLimitResponse, refErr, oursErr error) []string {
	if refErr != nil || oursErr != nil {
		if status.Code(refErr) != status.Code(oursErr) {
			return []string{fmt.Sprintf("error: reference %v, ratelimitd %v", refErr, oursErr)}
		}
		return nil
	}
	var out []string
	diff := func(what string, a, b any) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: reference %v, ratelimitd %v", what, a, b))
		}
	}
	near := func(what string, a, b int64) {
		if a-b > 1 || b-a > 1 {
			out = append(out, fmt.Sprintf("%s: reference %v, ratelimitd %v (more than a second apart)", what, a, b))
		}
	}
	diff("overall_code", ref.GetOverallCode(), ours.GetOverallCode())
	diff("statuses", len(ref.GetStatuses()), len(ours.GetStatuses()))
	for i := range min(len(ref.GetStatuses()), len(ours.GetStatuses())) {
		r, o := ref.GetStatuses()[i], ours.GetStatuses()[i]
		at := fmt.Sprintf("status %d ", i)
		diff(at+"code", r.GetCode(), o.GetCode())
		diff(at+"current_limit", limitString(r.GetCurrentLimit()), limitString(o.GetCurrentLimit()))
		diff(at+"limit_remaining", r.GetLimitRemaining(), o.GetLimitRemaining())
		diff(at+"has duration_until_reset", r.GetDurationUntilReset() != nil, o.GetDurationUntilReset() != nil)
		near(at+"duration_until_reset", r.GetDurationUntilReset().GetSeconds(), o.GetDurationUntilReset().GetSeconds())
		diff(at+"duration_until_reset nanos", r.GetDurationUntilReset().GetNanos(), o.GetDurationUntilReset().GetNanos())
	}
	diff("headers", len(ref.GetResponseHeadersToAdd()), len(ours.GetResponseHeadersToAdd()))
	for i := range min(len(ref.GetResponseHeadersToAdd()), len(ours.GetResponseHeadersToAdd())) {
		r, o := ref.GetResponseHeadersToAdd()[i], ours.GetResponseHeadersToAdd()[i]
		diff(fmt.Sprintf("header %d", i), r.GetKey(), o.GetKey())
		rn, rerr := strconv.ParseInt(r.GetValue(), 10, 64)
		on, oerr := strconv.ParseInt(o.GetValue(), 10, 64)
		if strings.HasSuffix(r.GetKey(), "Reset") && rerr == nil && oerr == nil {
			near("header "+r.GetKey(), rn, on)
		} else {
			diff("header "+r.GetKey(), r.GetValue(), o.GetValue())
		}
	}
	return out
}

// limitString writes a current_limit, "" for none.
func limitString(l *pb.RateLimitResponse_RateLimit) string {
	if l == nil {
		return ""
	}
	s := fmt.Sprintf("%s %d/%s", l.GetName(), l.GetRequestsPerUnit(), l.GetUnit())
	if m := l.GetUnitMultiplier(); m != nil {
		s += fmt.Sprintf("x%d", m.GetValue())
	}
	return s
}

// pair is the reference and ratelimitd, started alike on one Redis.
type pair struct {
	ref, ours *proc
	srv       server
}

// startPair starts both services with env on srv.
func startPair(t *testing.T, bins binaries, srv server, env map[string]string) pair {
	t.Helper()
	return pair{
		ref:  start(t, "reference", bins.reference, srv, env),
		ours: start(t, "ratelimitd", bins.ratelimitd, srv, env),
		srv:  srv,
	}
}

// fallbackLog is what ratelimitd logs when its store did not decide.
const fallbackLog = "not decided by the store"

// count is how many times p's log holds s.
func (p *proc) count(s string) int {
	b, _ := os.ReadFile(p.log)
	return bytes.Count(b, []byte(s))
}

// warm sends both services requests of domain's descriptor desc-0,
// desc-1, ..., keys in every Cluster slot range, so that connections are
// open and scripts loaded before the streams the test compares.
func (p pair) warm(t *testing.T, domain, desc string) {
	t.Helper()
	for i := range 24 {
		p.call(t, step{descs: []string{desc + "-" + strconv.Itoa(i)}}.request(domain))
	}
}

// call sends req to both services, the reference first.
func (p pair) call(t *testing.T, req *pb.RateLimitRequest) (ref, ours *pb.RateLimitResponse, refErr, oursErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ref, refErr = p.ref.client.ShouldRateLimit(ctx, req)
	ours, oursErr = p.ours.client.ShouldRateLimit(ctx, req)
	for _, err := range []error{refErr, oursErr} {
		if err != nil && ctx.Err() != nil {
			t.Fatalf("no answer within 10s: %v", err)
		}
	}
	return ref, ours, refErr, oursErr
}

// run sends c's stream to both services from empty counts and asserts
// their answers alike, or as the README's table documents. A stream that
// straddles a window of c's is sent again, from empty counts, up to five
// times: each service reads its own clock.
func (p pair) run(t *testing.T, c tcase) {
	t.Helper()
	sec := int64(c.window / time.Second)
	for attempt := 1; attempt <= 5; attempt++ {
		deleteKeys(t, p.srv, p.ref.prefix)
		deleteKeys(t, p.srv, p.ours.prefix)
		fellBack := p.ours.count(fallbackLog)
		type answer struct {
			ref, ours       *pb.RateLimitResponse
			refErr, oursErr error
		}
		answers := make([]answer, len(c.steps))
		begin := time.Now().Unix()
		for i, s := range c.steps {
			a := &answers[i]
			a.ref, a.ours, a.refErr, a.oursErr = p.call(t, s.request(c.domain))
		}
		if time.Now().Unix()/sec != begin/sec {
			t.Logf("attempt %d straddled a window of %v: again", attempt, c.window)
			continue
		}
		if p.ours.count(fallbackLog) != fellBack {
			// README: Redis slow, the time budget and the local fallback
			// decide; not what this test compares.
			t.Logf("attempt %d: ratelimitd's Redis took longer than its time budget: again", attempt)
			continue
		}
		for i, s := range c.steps {
			a := answers[i]
			if s.ref != "" || s.ours != "" { // a documented difference
				if got := summary(a.ref, a.refErr); got != s.ref {
					t.Errorf("step %d %v: reference answered %q, want %q (README)", i, s.descs, got, s.ref)
				}
				if got := summary(a.ours, a.oursErr); got != s.ours {
					t.Errorf("step %d %v: ratelimitd answered %q, want %q (README)", i, s.descs, got, s.ours)
				}
				continue
			}
			for _, d := range differences(a.ref, a.ours, a.refErr, a.oursErr) {
				t.Errorf("step %d %v hits %d: %s", i, s.descs, s.hits, d)
			}
		}
		if t.Failed() {
			for i := range c.steps {
				t.Logf("step %d: reference %s | ratelimitd %s", i, summary(answers[i].ref, answers[i].refErr), summary(answers[i].ours, answers[i].oursErr))
			}
		}
		return
	}
	t.Fatalf("five attempts each straddled a window of %v or fell back", c.window)
}

package grpclimit_test

import (
	"net/http"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ratelimit-go/ratelimit"
	grpclimit "github.com/ratelimit-go/ratelimit/adapters/grpc"
)

// The fast path (a key Option on a limiter that decides by key) and the
// slow path (a request made from the call) answer a call alike.
func TestFastAndSlowPathsAnswerAlike(t *testing.T) {
	tests := []struct {
		name   string
		opts   []ratelimit.Option
		key    []grpclimit.Option
		policy bool // whether the IETF headers are sent too
	}{
		{"fast: by peer", nil, []grpclimit.Option{grpclimit.KeyByPeer()}, false},
		{"fast: by method, all headers", []ratelimit.Option{ratelimit.WithHeaders(ratelimit.HeadersBoth)},
			[]grpclimit.Option{grpclimit.KeyByMethod()}, true},
		{"slow: the limiter's own KeyFunc", nil, nil, false},
		{"slow: a limiter that skips", []ratelimit.Option{ratelimit.WithSkip(func(*http.Request) bool { return false })},
			[]grpclimit.Option{grpclimit.KeyByPeer()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(t, memStore(t), ratelimit.PerMinute(1), tt.opts...)
			c := serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l, tt.key...)))
			err, header, _ := check(c, nil)
			if err != nil {
				t.Fatalf("first call: %v", err)
			}
			if got := header.Get("ratelimit-policy"); (len(got) == 1) != tt.policy {
				t.Errorf("first call: ratelimit-policy %q; want one: %v", got, tt.policy)
			}
			if got := header.Get("x-ratelimit-remaining"); len(got) != 1 || got[0] != "0" {
				t.Errorf("first call: x-ratelimit-remaining %q, want 0", got)
			}
			err, header, trailer := check(c, nil)
			st := status.Convert(err)
			if st.Code() != codes.ResourceExhausted || header.Len() != 0 {
				t.Fatalf("second call: %v with headers %v, want ResourceExhausted and none", err, header)
			}
			var delay *errdetails.RetryInfo
			for _, d := range st.Details() {
				if ri, ok := d.(*errdetails.RetryInfo); ok {
					delay = ri
				}
			}
			if delay == nil || delay.RetryDelay.AsDuration().Seconds() != 60 {
				t.Errorf("RetryInfo %v, want 60s", delay)
			}
			if got := trailer.Get(grpclimit.PushbackTrailer); len(got) != 1 || got[0] != "60000" {
				t.Errorf("pushback %q, want 60000", got)
			}
			if got := trailer.Get("retry-after"); len(got) != 1 || got[0] != "60" {
				t.Errorf("retry-after trailer %q, want 60", got)
			}
		})
	}
}

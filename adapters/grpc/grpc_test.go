package grpclimit_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	grpcmw "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratelimit-go/ratelimit"
	grpclimit "github.com/ratelimit-go/ratelimit/adapters/grpc"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

var _ grpcmw.Limiter = (*grpclimit.Limiter)(nil)

// serve starts a real gRPC server with the health service on a loopback
// port, behind opts, and returns a client connected to it.
func serve(t testing.TB, dial []grpc.DialOption, opts ...grpc.ServerOption) healthpb.HealthClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(),
		append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dial...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn)
}

func newLimiter(t *testing.T, store ratelimit.Store, limit ratelimit.Limit, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(store, limit, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func memStore(t *testing.T) *memory.Store {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	return s
}

// check calls Check with md as outgoing metadata and returns its error and
// the response's header and trailer metadata.
func check(c healthpb.HealthClient, md metadata.MD) (error, metadata.MD, metadata.MD) {
	ctx := context.Background()
	if md != nil {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	var header, trailer metadata.MD
	_, err := c.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header), grpc.Trailer(&trailer))
	return err, header, trailer
}

func TestUnaryDenialIsResourceExhaustedWithRetryInfoAndPushback(t *testing.T) {
	l := newLimiter(t, memStore(t), ratelimit.PerMinute(2))
	c := serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l)))
	for i := range 2 {
		err, header, _ := check(c, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if got := header.Get("x-ratelimit-limit"); len(got) != 1 || got[0] != "2" {
			t.Errorf("call %d: x-ratelimit-limit %q, want 2", i+1, got)
		}
	}
	err, header, trailer := check(c, nil)
	if header.Len() != 0 {
		t.Errorf("denial sent headers %v: a client's retry policy would not retry it", header)
	}
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("third call: %v, want ResourceExhausted", err)
	}
	if got := trailer.Get("x-ratelimit-remaining"); len(got) != 1 || got[0] != "0" {
		t.Errorf("denial: x-ratelimit-remaining %q, want 0", got)
	}
	var info *errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			info = ri
		}
	}
	// 2 per minute: the next token in 30 s.
	if info == nil || info.RetryDelay.AsDuration() != 30*time.Second {
		t.Errorf("RetryInfo %v, want a delay of 30s", info)
	}
	if got := trailer.Get(grpclimit.PushbackTrailer); len(got) != 1 || got[0] != "30000" {
		t.Errorf("%s %q, want 30000", grpclimit.PushbackTrailer, got)
	}
}

func TestKeys(t *testing.T) {
	proxy := netip.MustParsePrefix("127.0.0.1/32")
	tests := []struct {
		name  string
		opt   grpclimit.Option
		a, b  metadata.MD // two callers
		share bool        // whether they share a budget
	}{
		{"peer: one loopback client", grpclimit.KeyByPeer(), nil, nil, true},
		{"peer: forwarded by an untrusted proxy is ignored", grpclimit.KeyByPeer(),
			metadata.Pairs("x-forwarded-for", "192.0.2.1"), metadata.Pairs("x-forwarded-for", "192.0.2.2"), true},
		{"peer: forwarded by a trusted proxy", grpclimit.KeyByPeer(clientip.TrustProxies(proxy)),
			metadata.Pairs("x-forwarded-for", "192.0.2.1"), metadata.Pairs("x-forwarded-for", "192.0.2.2"), false},
		{"metadata: API keys", grpclimit.KeyByMetadata("x-api-key"),
			metadata.Pairs("x-api-key", "alice"), metadata.Pairs("x-api-key", "bob"), false},
		{"method: every client of a method", grpclimit.KeyByMethod(),
			metadata.Pairs("x-api-key", "alice"), metadata.Pairs("x-api-key", "bob"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(t, memStore(t), ratelimit.PerMinute(1))
			c := serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l, tt.opt)))
			if err, _, _ := check(c, tt.a); err != nil {
				t.Fatalf("first caller: %v", err)
			}
			err, _, _ := check(c, tt.b)
			if shared := status.Code(err) == codes.ResourceExhausted; shared != tt.share {
				t.Errorf("second caller: %v; shares the budget: %v, want %v", err, shared, tt.share)
			}
		})
	}
}

func TestMissingMetadataKeyIsInvalidArgument(t *testing.T) {
	l := newLimiter(t, memStore(t), ratelimit.PerMinute(1))
	c := serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l, grpclimit.KeyByMetadata("x-api-key"))))
	if err, _, _ := check(c, nil); status.Code(err) != codes.InvalidArgument {
		t.Errorf("call without x-api-key: %v, want InvalidArgument", err)
	}
}

// TestBadMetadataNameIsBadConfiguration: KeyByMetadata of a name no
// metadata can have answers every call Internal and tells the error
// handler of the bad configuration, as KeyByPeer of bad options does,
// rather than blaming the client with InvalidArgument.
func TestBadMetadataNameIsBadConfiguration(t *testing.T) {
	for _, name := range []string{"", "x api key"} {
		var told error
		l := newLimiter(t, memStore(t), ratelimit.PerMinute(1),
			ratelimit.WithErrorHandler(func(_ *http.Request, err error) { told = err }))
		c := serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(l, grpclimit.KeyByMetadata(name))))
		md := metadata.Pairs("x-api-key", "k")
		if err, _, _ := check(c, md); status.Code(err) != codes.Internal || !errors.Is(told, ratelimit.ErrBadConfig) {
			t.Errorf("KeyByMetadata(%q): %v, error handler told %v; want Internal and ErrBadConfig", name, err, told)
		}
	}
}

var errDown = errors.New("store down")

type downStore struct{}

func (downStore) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{}, errDown
}

func TestStoreFailureFollowsTheFailurePolicy(t *testing.T) {
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	open := newLimiter(t, downStore{}, ratelimit.PerMinute(1), quiet)
	closed := newLimiter(t, downStore{}, ratelimit.PerMinute(1), quiet, ratelimit.WithFailClosed())
	if err, _, _ := check(serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(open))), nil); err != nil {
		t.Errorf("failing open: %v, want the call to go on", err)
	}
	if err, _, _ := check(serve(t, nil, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(closed))), nil); status.Code(err) != codes.Unavailable {
		t.Errorf("failing closed: %v, want Unavailable", err)
	}
}

func TestStreamIsDecidedWhenItOpens(t *testing.T) {
	l := newLimiter(t, memStore(t), ratelimit.PerMinute(1))
	c := serve(t, nil, grpc.StreamInterceptor(grpclimit.StreamServerInterceptor(l)))
	watch := func() error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		_, err = s.Recv()
		if err == nil {
			if got := s.Trailer().Get(grpclimit.PushbackTrailer); got != nil {
				t.Errorf("admitted stream has a pushback trailer %q", got)
			}
		}
		return err
	}
	if err := watch(); err != nil {
		t.Fatalf("first stream: %v", err)
	}
	if err := watch(); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("second stream: %v, want ResourceExhausted", err)
	}
}

// A client whose retry policy retries ResourceExhausted waits out the
// server's pushback, and its retry is admitted.
func TestClientRetryPolicyWaitsOutThePushback(t *testing.T) {
	l := newLimiter(t, memStore(t), ratelimit.Limit{Rate: 1, Period: time.Second})
	var attempts atomic.Int32
	count := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		attempts.Add(1)
		return h(ctx, req)
	}
	const retry = `{"methodConfig": [{"name": [{"service": "grpc.health.v1.Health"}],
		"retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]}`
	c := serve(t, []grpc.DialOption{grpc.WithDefaultServiceConfig(retry)},
		grpc.ChainUnaryInterceptor(count, grpclimit.UnaryServerInterceptor(l)))
	if err, _, _ := check(c, nil); err != nil {
		t.Fatalf("first call: %v", err)
	}
	start := time.Now()
	err, _, _ := check(c, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("second call, with retries: %v", err)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d attempts in all, want 3 (one, then a denial and its retry)", n)
	}
	// The pushback is Retry-After, 1 s; the policy's own backoff is 10 ms.
	if took < 900*time.Millisecond {
		t.Errorf("the retry came after %v, before the 1 s pushback", took)
	}
}

func TestGoGRPCMiddlewareLimiter(t *testing.T) {
	l := newLimiter(t, memStore(t), ratelimit.PerMinute(1))
	c := serve(t, nil, grpc.UnaryInterceptor(grpcmw.UnaryServerInterceptor(grpclimit.NewLimiter(l))))
	if err, _, _ := check(c, nil); err != nil {
		t.Fatalf("first call: %v", err)
	}
	err, _, trailer := check(c, nil)
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second call: %v, want ResourceExhausted", err)
	}
	if got := trailer.Get(grpclimit.PushbackTrailer); len(got) != 1 || got[0] != strconv.Itoa(60_000) {
		t.Errorf("%s %q, want 60000", grpclimit.PushbackTrailer, got)
	}
}

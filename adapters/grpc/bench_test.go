package grpclimit_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratelimit-go/ratelimit"
	grpclimit "github.com/ratelimit-go/ratelimit/adapters/grpc"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// stream is the server side of a call as the interceptor sees it, without
// a network: what grpc.SetHeader and grpc.SetTrailer write to.
type stream struct{}

func (stream) Method() string                  { return "/grpc.health.v1.Health/Check" }
func (stream) SetHeader(metadata.MD) error     { return nil }
func (stream) SendHeader(metadata.MD) error    { return nil }
func (stream) SetTrailer(md metadata.MD) error { return nil }

// writer is a ResponseWriter that costs nothing of its own, so that the
// HTTP figures are the middleware's alone.
type writer struct{ header http.Header }

func (w *writer) Header() http.Header         { return w.header }
func (w *writer) Write(b []byte) (int, error) { return len(b), nil }
func (w *writer) WriteHeader(int)             {}

func benchLimiter(b *testing.B, opts ...ratelimit.Option) *ratelimit.Limiter {
	s := memory.New()
	b.Cleanup(func() { s.Close() })
	// A budget nothing in a run exceeds, of a capacity whose header values
	// the limiter keeps ready-made, as for most limits.
	l, err := ratelimit.New(s, ratelimit.Limit{Rate: 1 << 20, Period: time.Millisecond, Burst: 1000}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkOverhead compares what the unary interceptor adds to a bare
// handler with what the HTTP middleware adds to a bare http.Handler, on the
// same limit and store, allowed calls of one client: keyed by its address
// (grpc/peer against http/ip) and by an API key (grpc/metadata against
// http/header). The interceptor's target is to add no more. grpc/default
// passes no key option: the limiter's default key, the peer's address, on
// the fast path. Report (grpc/peer - grpc/bare) / (http/ip - http/bare), and the
// same for metadata and header.
func BenchmarkOverhead(b *testing.B) {
	addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: addr})
	ctx = grpc.NewContextWithServerTransportStream(ctx, stream{})
	// The metadata a gRPC server gives a call, and an API key.
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(":authority", "localhost:50051",
		"content-type", "application/grpc", "user-agent", "grpc-go/1.85.0", "x-api-key", "alice"))
	info := &grpc.UnaryServerInfo{FullMethod: stream{}.Method()}
	handler := func(context.Context, any) (any, error) { return nil, nil }

	b.Run("grpc/bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			handler(ctx, nil)
		}
	})
	for _, tt := range []struct {
		name string
		opts []grpclimit.Option
	}{
		{"grpc/peer", []grpclimit.Option{grpclimit.KeyByPeer()}},
		{"grpc/metadata", []grpclimit.Option{grpclimit.KeyByMetadata("x-api-key")}},
		{"grpc/default", nil},
	} {
		b.Run(tt.name, func(b *testing.B) {
			intercept := grpclimit.UnaryServerInterceptor(benchLimiter(b), tt.opts...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := intercept(ctx, nil, info, handler); err != nil {
					b.Fatal(err)
				}
			}
		})
	}

	bare := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = addr.String()
	r.Header.Set("X-Api-Key", "alice")
	w := &writer{header: http.Header{}}
	b.Run("http/bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bare.ServeHTTP(w, r)
		}
	})
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
	}{
		{"http/ip", nil},
		{"http/header", []ratelimit.Option{ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Api-Key"))}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			h := benchLimiter(b, tt.opts...).Handler(bare)
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header) // as a server's writer starts each response
				h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkLoopbackCall is one unary call over a real loopback connection,
// without and with the interceptor: what a service sees.
func BenchmarkLoopbackCall(b *testing.B) {
	for _, name := range []string{"bare", "interceptor", "interceptor-no-headers"} {
		var opts []grpc.ServerOption
		switch name {
		case "interceptor":
			opts = append(opts, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(benchLimiter(b))))
		case "interceptor-no-headers":
			opts = append(opts, grpc.UnaryInterceptor(grpclimit.UnaryServerInterceptor(
				benchLimiter(b, ratelimit.WithHeaders(ratelimit.HeadersNone)))))
		}
		b.Run(name, func(b *testing.B) {
			c := serve(b, nil, opts...)
			req := &healthpb.HealthCheckRequest{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Check(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package grpclimit_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ratelimit-go/ratelimit"
	grpclimit "github.com/ratelimit-go/ratelimit/adapters/grpc"
)

// TestCountedAnswers: with WithCountIf(CountStatus(401)), Unauthenticated
// answers count and OK answers give their cost back; concurrent failing
// calls reach the handler no more often than the budget allows, on the
// fast path and on the slow one (a cost per request).
func TestCountedAnswers(t *testing.T) {
	for _, slow := range []bool{false, true} {
		lopts := []ratelimit.Option{ratelimit.WithCountIf(ratelimit.CountStatus(401))}
		if slow { // a cost per request needs the request the slow path makes
			lopts = append(lopts, ratelimit.WithCost(func(*http.Request) int { return 1 }))
		}
		l := newLimiter(t, memStore(t), ratelimit.PerHour(3), lopts...)
		intercept := grpclimit.UnaryServerInterceptor(l)
		var reached atomic.Int64
		call := func(code codes.Code) error {
			ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 5}})
			_, err := intercept(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/auth.Auth/Login"}, func(context.Context, any) (any, error) {
				reached.Add(1)
				return nil, status.Error(code, "answer")
			})
			return err
		}
		for range 10 {
			if err := call(codes.OK); status.Code(err) != codes.OK {
				t.Fatalf("slow %v: an OK call: %v", slow, err)
			}
		}
		reached.Store(0)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { call(codes.Unauthenticated) })
		}
		wg.Wait()
		if n := reached.Load(); n != 3 {
			t.Fatalf("slow %v: %d of 20 concurrent failing calls reached the handler, want 3", slow, n)
		}
	}
}

package grpclimit_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratelimit-go/ratelimit"
	grpclimit "github.com/ratelimit-go/ratelimit/adapters/grpc"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// A gRPC server whose calls are limited per API key, 2 a minute; the third
// call is refused with codes.ResourceExhausted and a pushback for the
// client's retry policy.
func Example() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerMinute(2))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(grpclimit.UnaryServerInterceptor(limiter, grpclimit.KeyByMetadata("x-api-key"))),
		grpc.ChainStreamInterceptor(grpclimit.StreamServerInterceptor(limiter, grpclimit.KeyByMetadata("x-api-key"))))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "alice")
	for range 3 {
		var trailer metadata.MD
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
		fmt.Println(status.Code(err), trailer.Get(grpclimit.PushbackTrailer))
	}
	// Output:
	// OK []
	// OK []
	// ResourceExhausted [30000]
}

package rls_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/envoy/rls"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

const rules = `
domain: edge
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 2}
`

func ExampleNewService() {
	cfg, err := rls.LoadFiles([]rls.File{{Name: "edge.yaml", Data: []byte(rules)}}, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	svc := rls.NewService(limiter, cfg, rls.Options{})
	req := &pb.RateLimitRequest{Domain: "edge", Descriptors: []*rlv3.RateLimitDescriptor{
		{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "user", Value: "ada"}}},
	}}
	for range 3 {
		resp, _ := svc.ShouldRateLimit(context.Background(), req)
		fmt.Println(resp.OverallCode, resp.Statuses[0].LimitRemaining)
	}
	// Output:
	// OK 1
	// OK 0
	// OVER_LIMIT 0
}

func ExampleLoadFiles() {
	_, err := rls.LoadFiles([]rls.File{{Name: "edge.yaml", Data: []byte("domain: edge\ndescriptors:\n  - key: user\n    rate_limit: {unit: fortnight}\n")}}, false)
	fmt.Println(err)
	// Output: ratelimit: rls: bad configuration: edge.yaml:4: unit: invalid rate limit unit 'fortnight'
}

func ExampleJSONHandler() {
	cfg, _ := rls.LoadFiles([]rls.File{{Name: "edge.yaml", Data: []byte(rules)}}, false)
	store := memory.New()
	defer store.Close()
	limiter, _ := ratelimit.New(store, ratelimit.PerSecond(1))
	h := rls.JSONHandler(rls.NewService(limiter, cfg, rls.Options{}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/json", strings.NewReader(`{"domain":"edge","descriptors":[{"entries":[{"key":"user","value":"ada"}]}]}`)))
	fmt.Println(w.Code)
	// Output: 200
}

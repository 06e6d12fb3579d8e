package grpclimit

import (
	"context"
	"fmt"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

// TestMethodKeysAreBounded: KeyByMethod's keys are the methods' own for the
// first maxMethods distinct names (a server's registered ones, seen again
// and again); past them, a new name, which only a client inventing names
// can bring (grpc.UnknownServiceHandler), shares the unmatched route's
// key, while the names already seen keep theirs.
func TestMethodKeysAreBounded(t *testing.T) {
	key := methodKey()
	ctx := context.Background()
	for i := range maxMethods {
		m := fmt.Sprintf("/svc.S/M%d", i)
		for range 2 {
			if k, err := key(ctx, m); err != nil || k != "route:"+m {
				t.Fatalf("method %d: %q, %v; want route:%s", i, k, err, m)
			}
		}
	}
	if k, _ := key(ctx, "/evil.S/Invented"); k != ratelimit.UnmatchedRouteKey {
		t.Fatalf("a name past %d: %q, want %q", maxMethods, k, ratelimit.UnmatchedRouteKey)
	}
	if k, _ := key(ctx, "/svc.S/M7"); k != "route:/svc.S/M7" {
		t.Fatalf("a name seen before the bound: %q, want its own key", k)
	}
}

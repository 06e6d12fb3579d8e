package rls

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// fakeClock is a clock that tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// newTestService returns a Service over a memory store on a fake clock
// at start, with the rules of one file.
func newTestService(t *testing.T, yaml string, opts Options) (*Service, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0).Truncate(24 * time.Hour).Add(10 * time.Second)}
	store := memory.New(memory.WithClock(clock.Now))
	t.Cleanup(func() { store.Close() })
	l, err := ratelimit.New(store, ratelimit.PerSecond(1))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFiles([]File{{Name: "config/test.yaml", Data: []byte(yaml)}}, false)
	if err != nil {
		t.Fatal(err)
	}
	opts.Now = clock.Now
	return NewService(l, cfg, opts), clock
}

// desc makes a descriptor of "k=v,k2=v2" (a bare "k" has an empty value).
func desc(entries string) *rlv3.RateLimitDescriptor {
	d := &rlv3.RateLimitDescriptor{}
	for _, e := range strings.Split(entries, ",") {
		k, v, _ := strings.Cut(e, "=")
		d.Entries = append(d.Entries, &rlv3.RateLimitDescriptor_Entry{Key: k, Value: v})
	}
	return d
}

// withHits sets d's own hits_addend.
func withHits(d *rlv3.RateLimitDescriptor, n uint64) *rlv3.RateLimitDescriptor {
	d.HitsAddend = wrapperspb.UInt64(n)
	return d
}

// request makes a request of domain for ds.
func request(domain string, ds ...*rlv3.RateLimitDescriptor) *pb.RateLimitRequest {
	return &pb.RateLimitRequest{Domain: domain, Descriptors: ds}
}

// summary writes a response as "OVER_LIMIT: OK/3 OVER_LIMIT/0", each
// status with its remaining.
func summary(r *pb.RateLimitResponse) string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(r.OverallCode.String() + ":")
	for _, s := range r.Statuses {
		fmt.Fprintf(&b, " %s/%d", s.Code, s.LimitRemaining)
	}
	return b.String()
}

package inflight_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// renewCounter is a Store over memory slots that counts renewals and
// reports Local as local says.
type renewCounter struct {
	slots  memory.Slots
	local  bool
	renews atomic.Int32
}

func (s *renewCounter) Local() bool { return s.local }

func (s *renewCounter) Acquire(ctx context.Context, key string, limit int, lease time.Duration) (inflight.Slot, error) {
	return s.slots.Acquire(ctx, key, limit, lease)
}

func (s *renewCounter) Renew(ctx context.Context, key string, slot inflight.Slot, lease time.Duration) error {
	s.renews.Add(1)
	return s.slots.Renew(ctx, key, slot, lease)
}

func (s *renewCounter) Release(ctx context.Context, key string, slot inflight.Slot) error {
	return s.slots.Release(ctx, key, slot)
}

// TestALocalStoreIsNeverRenewed: what a store reports of itself reaches
// the limit through New: a request that runs for three leases renews its
// slot on a shared store (every third of a lease), and never on a Local
// one, whose slots die with the process.
func TestALocalStoreIsNeverRenewed(t *testing.T) {
	for _, tt := range []struct {
		local bool
		want  int32
	}{{local: false, want: 8}, {local: true, want: 0}} {
		synctest.Test(t, func(t *testing.T) {
			store := &renewCounter{local: tt.local}
			l, err := inflight.New(store, 1, inflight.WithLease(3*time.Second), inflight.WithPlainKeys())
			if err != nil {
				t.Fatal(err)
			}
			h := l.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				time.Sleep(9*time.Second - time.Millisecond) // three leases, in the bubble's time
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			if got := store.renews.Load(); got != tt.want {
				t.Errorf("local %v: %d renewals, want %d", tt.local, got, tt.want)
			}
		})
	}
}

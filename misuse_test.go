package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/inflight"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestMisuseIsAnErrorNotAPanic: a nil Option is ignored, a Breaker not
// made by NewBreaker is an error of New, and AdmitKey or BeginKey without
// a header map and a Transport without its Limiter answer rather than
// panic.
func TestMisuseIsAnErrorNotAPanic(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"New with a nil Option", func(t *testing.T) {
			store := memory.New(nil, memory.WithMaxKeys(1000), nil)
			defer store.Close()
			l, err := ratelimit.New(store, ratelimit.PerMinute(1), nil, ratelimit.WithName("a"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := l.Allow(ctx, "k"); err != nil || !res.Allowed {
				t.Fatalf("%+v %v", res, err)
			}
			if res, _ := l.Allow(ctx, "k"); res.Allowed {
				t.Fatal("a second token of a budget of 1")
			}
		}},
		{"inflight.New with a nil Option", func(t *testing.T) {
			if _, err := inflight.New(memory.NewSlots(), 1, nil, inflight.WithName("a"), nil); err != nil {
				t.Fatal(err)
			}
		}},
		{"a zero Breaker", func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			_, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithBreaker(&ratelimit.Breaker{}))
			if !errors.Is(err, ratelimit.ErrBadConfig) || !strings.Contains(err.Error(), "NewBreaker") {
				t.Fatalf("New: %v, want an ErrBadConfig that points to NewBreaker", err)
			}
			if _, err := ratelimit.New(store, ratelimit.PerMinute(1), ratelimit.WithBreaker(nil)); err != nil {
				t.Fatalf("WithBreaker(nil), no breaker: %v", err)
			}
		}},
		{"AdmitKey and BeginKey with a nil header", func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			l, err := ratelimit.New(store, ratelimit.PerMinute(1))
			if err != nil {
				t.Fatal(err)
			}
			if ok, status := l.AdmitKey(ctx, "ip:192.0.2.1", nil); !ok || status != http.StatusOK {
				t.Fatalf("AdmitKey: %v %d, want true 200", ok, status)
			}
			if _, ok, status := l.BeginKey(ctx, "ip:192.0.2.1", nil); ok || status != http.StatusTooManyRequests {
				t.Fatalf("BeginKey: %v %d, want false 429", ok, status)
			}
		}},
		{"a Transport without its Limiter", func(t *testing.T) {
			body := &closeCounter{Reader: strings.NewReader("x")}
			req, _ := http.NewRequest(http.MethodPost, "http://192.0.2.1/", body)
			resp, err := (&ratelimit.Transport{}).RoundTrip(req)
			if resp != nil || !errors.Is(err, ratelimit.ErrBadConfig) || body.closed != 1 {
				t.Fatalf("RoundTrip: %v %v, body closed %d times; want an ErrBadConfig and the body closed", resp, err, body.closed)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	*strings.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

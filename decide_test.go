package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestAdmitKeyDecidesAsAdmit(t *testing.T) {
	styles := []ratelimit.HeaderStyle{ratelimit.HeadersXRateLimit, ratelimit.HeadersIETF, ratelimit.HeadersBoth, ratelimit.HeadersNone}
	for _, style := range styles {
		t.Run(fmt.Sprintf("header style %d", style), func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			opts := []ratelimit.Option{ratelimit.WithName("api"), ratelimit.WithHeaders(style),
				ratelimit.WithPolicy(ratelimit.Policy{Name: "hourly", Limit: ratelimit.PerHour(5)})}
			byRequest, err := ratelimit.New(memory.New(memory.WithClock(clock.Now)), ratelimit.PerMinute(3), opts...)
			if err != nil {
				t.Fatal(err)
			}
			byKey, _ := ratelimit.New(memory.New(memory.WithClock(clock.Now)), ratelimit.PerMinute(3), opts...)
			for i := range 7 {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.RemoteAddr = "192.0.2.1:1234"
				w := httptest.NewRecorder()
				wantOK := byRequest.Admit(w, r)
				h := http.Header{}
				ok, status := byKey.AdmitKey(context.Background(), "ip:192.0.2.1", h)
				if ok != wantOK || (!ok && status != w.Code) {
					t.Errorf("call %d: AdmitKey = %v, %d; Admit = %v, %d", i+1, ok, status, wantOK, w.Code)
				}
				w.Header().Del("Content-Type")
				w.Header().Del("X-Content-Type-Options")
				if !reflect.DeepEqual(h, w.Header()) {
					t.Errorf("call %d: AdmitKey's headers %v, Admit's %v", i+1, h, w.Header())
				}
				clock.Add(7 * time.Second)
			}
		})
	}
}

func TestAdmitKeyAnswers(t *testing.T) {
	quiet := ratelimit.WithErrorHandler(func(*http.Request, error) {})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		store  ratelimit.Store
		opts   []ratelimit.Option
		ctx    context.Context
		key    string
		ok     bool
		status int
	}{
		{"a key with budget goes on", memory.New(), nil, context.Background(), "ip:192.0.2.1", true, 200},
		{"an empty key is a bad request", memory.New(), nil, context.Background(), "", false, 400},
		{"a canceled call is not answered", memory.New(), nil, canceled, "ip:192.0.2.1", false, 0},
		{"a failing store lets the call go on", failingStore{}, []ratelimit.Option{quiet}, context.Background(), "ip:192.0.2.1", true, 200},
		{"a failing store answers 503 failing closed", failingStore{}, []ratelimit.Option{quiet, ratelimit.WithFailClosed()}, context.Background(), "ip:192.0.2.1", false, 503},
		{"a policy keyed by a KeyFunc of its own is a bad configuration", memory.New(),
			[]ratelimit.Option{quiet, ratelimit.WithPolicy(ratelimit.Policy{Name: "p", Limit: ratelimit.PerMinute(1), Key: ratelimit.KeyByRoute()})},
			context.Background(), "ip:192.0.2.1", false, 500},
		{"a hashed key on a shared store without a secret is a bad configuration", failingStore{}, []ratelimit.Option{quiet},
			context.Background(), "x-api-key:alice", false, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ratelimit.New(tt.store, ratelimit.PerMinute(1), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			if ok, status := l.AdmitKey(tt.ctx, tt.key, h); ok != tt.ok || status != tt.status {
				t.Errorf("AdmitKey = %v, %d; want %v, %d", ok, status, tt.ok, tt.status)
			}
			if !tt.ok && tt.status != 429 && len(h) > 0 {
				t.Errorf("headers %v on a call nothing decided", h)
			}
		})
	}
}

func TestAdmitKeyDenialHasRetryAfter(t *testing.T) {
	l, _ := ratelimit.New(memory.New(), ratelimit.PerMinute(1))
	l.AdmitKey(context.Background(), "ip:192.0.2.1", http.Header{})
	h := http.Header{}
	if ok, status := l.AdmitKey(context.Background(), "ip:192.0.2.1", h); ok || status != http.StatusTooManyRequests {
		t.Fatalf("second call: %v, %d; want a 429", ok, status)
	}
	if got := h.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After %q, want 60", got)
	}
}

func TestDecidesByKey(t *testing.T) {
	tests := []struct {
		name string
		opt  ratelimit.Option
		want bool
	}{
		{"a plain limiter does", ratelimit.WithName("api"), true},
		{"one answering with ProblemJSON does", ratelimit.WithDenyHandler(ratelimit.ProblemJSON()), true},
		{"one that shapes does", ratelimit.WithMaxDelay(time.Second), true},
		{"one with a deny handler of its own does not", ratelimit.WithDenyHandler(http.NotFoundHandler()), false},
		{"one that skips requests does not", ratelimit.WithSkip(func(*http.Request) bool { return false }), false},
		{"one with a cost per request does not", ratelimit.WithCost(func(*http.Request) int { return 1 }), false},
		{"one that counts by status does (BeginKey settles it)", ratelimit.WithCountIf(ratelimit.CountStatus(401)), true},
		{"one with a policy keyed its own way does not",
			ratelimit.WithPolicy(ratelimit.Policy{Name: "p", Limit: ratelimit.PerMinute(1), Key: ratelimit.KeyByRoute()}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ratelimit.New(memory.New(), ratelimit.PerMinute(10), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.DecidesByKey(); got != tt.want {
				t.Errorf("DecidesByKey() = %v, want %v", got, tt.want)
			}
		})
	}
}

// A server of some protocol other than HTTP keys its requests by client
// address and decides them without an *http.Request.
func ExampleLimiter_AdmitKey() {
	store := memory.New()
	defer store.Close()
	limiter, err := ratelimit.New(store, ratelimit.PerMinute(2))
	if err != nil {
		panic(err)
	}
	clients, _ := clientip.New()
	key := clients.Key(netip.MustParseAddr("192.0.2.1"), false, nil)
	for range 3 {
		h := http.Header{}
		ok, status := limiter.AdmitKey(context.Background(), key, h)
		fmt.Println(ok, status, h.Get("X-Ratelimit-Remaining"), h["Retry-After"])
	}
	// Output:
	// true 200 1 []
	// true 200 0 []
	// false 429 0 [30]
}

func TestKeysByAddress(t *testing.T) {
	store := memory.New()
	defer store.Close()
	for _, tt := range []struct {
		name string
		opts []ratelimit.Option
		want bool
	}{
		{"the default key", nil, true},
		{"a policy beside it", []ratelimit.Option{ratelimit.WithPolicy(ratelimit.Policy{Name: "h", Limit: ratelimit.PerHour(9)})}, true},
		{"WithKeyFunc(KeyByIP())", []ratelimit.Option{ratelimit.WithKeyFunc(ratelimit.KeyByIP())}, false},
		{"a header key", []ratelimit.Option{ratelimit.WithKeyFunc(ratelimit.KeyByHeader("X-Key"))}, false},
	} {
		l, err := ratelimit.New(store, ratelimit.PerMinute(1), tt.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.KeysByAddress(); got != tt.want {
			t.Errorf("%s: KeysByAddress() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// An adapter chooses its path: a limiter that decides by key alone, and
// keys by client address, can be asked with AdmitKey and a clientip.Keys.
func ExampleLimiter_DecidesByKey() {
	store := memory.New()
	defer store.Close()
	plain, _ := ratelimit.New(store, ratelimit.PerMinute(10))
	costly, _ := ratelimit.New(store, ratelimit.PerMinute(10),
		ratelimit.WithCost(func(r *http.Request) int { return len(r.URL.Path) }))
	fmt.Println(plain.DecidesByKey(), plain.KeysByAddress())
	fmt.Println(costly.DecidesByKey())
	// Output:
	// true true
	// false
}

package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/clientip"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

func TestHeaders(t *testing.T) {
	l := ratelimit.PerMinute(3) // a token every 20 s
	tests := []struct {
		name  string
		style ratelimit.HeaderStyle
		want  [3]map[string]string // after requests 1, 3 and 4 (denied)
	}{
		{"X-RateLimit", ratelimit.HeadersXRateLimit, [3]map[string]string{
			{"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "2", "X-RateLimit-Reset": "20"},
			{"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"},
			{"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60", "Retry-After": "20"},
		}},
		{"IETF", ratelimit.HeadersIETF, [3]map[string]string{
			{"RateLimit-Policy": `"api";q=3;w=60`, "RateLimit": `"api";r=2;t=20`},
			{"RateLimit-Policy": `"api";q=3;w=60`, "RateLimit": `"api";r=0;t=20`}, // the next token
			{"RateLimit-Policy": `"api";q=3;w=60`, "RateLimit": `"api";r=0;t=20`, "Retry-After": "20"},
		}},
		{"both", ratelimit.HeadersBoth, [3]map[string]string{
			{"X-RateLimit-Remaining": "2", "RateLimit": `"api";r=2;t=20`},
			{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60", "RateLimit": `"api";r=0;t=20`},
			{"X-RateLimit-Reset": "60", "RateLimit": `"api";r=0;t=20`, "Retry-After": "20"},
		}},
		{"none", ratelimit.HeadersNone, [3]map[string]string{
			{"X-RateLimit-Limit": "", "RateLimit": ""},
			{"X-RateLimit-Remaining": "", "RateLimit-Policy": ""},
			{"X-RateLimit-Limit": "", "RateLimit": "", "Retry-After": "20"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, l, ratelimit.WithHeaders(tt.style), ratelimit.WithName("api"))
			a := req{remote: "203.0.113.1:1"}
			responses := []*httptest.ResponseRecorder{f.do(a), f.do(a), f.do(a), f.do(a)}
			for i, idx := range []int{0, 2, 3} {
				for k, v := range tt.want[i] {
					if got := responses[idx].Header().Get(k); got != v {
						t.Errorf("request %d: %s = %q, want %q", idx+1, k, got, v)
					}
				}
			}
			if responses[3].Code != limited {
				t.Fatalf("fourth request: %d, want 429", responses[3].Code)
			}
		})
	}
}

func TestRetryAfterRoundsUpToAtLeastOne(t *testing.T) {
	f := newFixture(t, ratelimit.PerSecond(10).WithBurst(1)) // a token every 100 ms
	a := req{remote: "203.0.113.1:1"}
	f.do(a)
	if w := f.do(a); w.Code != limited || w.Header().Get("Retry-After") != "1" || w.Header().Get("X-RateLimit-Reset") != "1" {
		t.Fatalf("got %d, Retry-After %q, Reset %q; want 429, 1, 1", w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Reset"))
	}
	f.clock.Add(100 * time.Millisecond)
	if w := f.do(a); w.Code != ok {
		t.Fatalf("after the refill: %d, want 200", w.Code)
	}
}

func TestHeadersAreSetBeforeTheHandlerWrites(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	h := ratelimit.Middleware(mem, ratelimit.PerHour(5))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated) // headers are frozen from here on
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Fatalf("status %d, X-RateLimit-Remaining %q; want 201, 4", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
}

// TestHandlersChangingHeadersDoNotAffectOtherResponses: header values are
// made once per limiter and shared by its responses; a handler that sets or
// adds to them changes its own response only, never the next one of the
// same limiter.
func TestHandlersChangingHeadersDoNotAffectOtherResponses(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	l, err := ratelimit.New(mem, ratelimit.PerHour(5), ratelimit.WithHeaders(ratelimit.HeadersBoth))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "changed")
		w.Header().Add("X-RateLimit-Limit", "added")
		w.Header().Add("RateLimit-Policy", "added")
	}))
	for i := range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if got := w.Header().Values("X-RateLimit-Limit"); len(got) != 2 {
			t.Fatalf("the handler's own X-RateLimit-Limit = %q, want its addition", got)
		}
		// The same limiter's next response is its own.
		probe := httptest.NewRecorder()
		if !l.Admit(probe, httptest.NewRequest("GET", "/", nil)) {
			t.Fatal("probe denied")
		}
		if got := probe.Header().Values("X-RateLimit-Limit"); len(got) != 1 || got[0] != "5" {
			t.Fatalf("round %d: X-RateLimit-Limit of the next response = %q after a handler added to its own", i, got)
		}
		if got := probe.Header().Values("RateLimit-Policy"); len(got) != 1 || got[0] != `"default";q=5;w=3600` {
			t.Fatalf("round %d: RateLimit-Policy of the next response = %q after a handler added to its own", i, got)
		}
		if got, want := probe.Header().Get("X-RateLimit-Remaining"), strconv.Itoa(5-2*i-2); got != want {
			t.Fatalf("round %d: X-RateLimit-Remaining of the next response = %q, want %s", i, got, want)
		}
	}
}

// TestLimitersShareNoHeaderValues: limiters of the same numbers but other
// names, and limiters keyed by addresses under other groupings, answer
// each with its own name and key, however their requests interleave: the
// tables of recent header values and address keys are the process's, and
// no limiter's entry answers another's.
func TestLimitersShareNoHeaderValues(t *testing.T) {
	store := memory.New()
	defer store.Close()
	names := []string{"a", "b", "c"}
	var limiters []*ratelimit.Limiter
	for i, name := range names {
		l, err := ratelimit.New(store, ratelimit.PerMinute(1000), ratelimit.WithName(name),
			ratelimit.WithHeaders(ratelimit.HeadersIETF),
			ratelimit.WithKeyFunc(ratelimit.KeyByIP(clientip.GroupIPv4ByPrefix(32-8*i))))
		if err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	for round := range 50 {
		for i, l := range limiters {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1", round%3)
			if !l.Admit(w, r) {
				t.Fatalf("round %d, limiter %s: denied", round, names[i])
			}
			// The /32 limiter keys each address apart; the /24 and /16 ones
			// see one client: their Remaining count the rounds.
			left := 999 - round
			if i == 0 {
				left = 999 - round/3
			}
			want := fmt.Sprintf(`"%s";r=%d;t=1`, names[i], left)
			if got := w.Header().Get("RateLimit"); got != want {
				t.Fatalf("round %d, limiter %s: RateLimit %q, want %q", round, names[i], got, want)
			}
		}
	}
}

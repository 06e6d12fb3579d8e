package ratelimit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestConfigErrorsSayRatelimitOnce: an error of New names the package
// once, whatever it wraps, and errors.Is still finds what it wraps.
func TestConfigErrorsSayRatelimitOnce(t *testing.T) {
	store := memory.New()
	defer store.Close()
	for _, tt := range []struct {
		name  string
		limit ratelimit.Limit
		opts  []ratelimit.Option
		want  string
		is    error
	}{
		{"an invalid limit", ratelimit.Limit{}, nil,
			"ratelimit: New: invalid limit: rate 0 must be positive", ratelimit.ErrInvalidLimit},
		{"a policy of an invalid limit", ratelimit.PerMinute(1), []ratelimit.Option{ratelimit.WithPolicy(ratelimit.Policy{Name: "x"})},
			`ratelimit: WithPolicy("x"): invalid limit: rate 0 must be positive`, ratelimit.ErrInvalidLimit},
		{"a plan of an invalid limit", ratelimit.PerMinute(1), []ratelimit.Option{ratelimit.WithPolicy(ratelimit.Policy{Name: "x", Plans: []ratelimit.Plan{{Name: "a"}}})},
			`ratelimit: WithPolicy("x"): plan "a": invalid limit: rate 0 must be positive`, ratelimit.ErrInvalidLimit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ratelimit.New(store, tt.limit, tt.opts...)
			if err == nil {
				t.Fatal("New: no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error %q\nwant  %q", err, tt.want)
			}
			if n := strings.Count(err.Error(), "ratelimit: "); n != 1 {
				t.Errorf("%q names the package %d times, want once", err, n)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%q, %v) is false", err, tt.is)
			}
		})
	}
}

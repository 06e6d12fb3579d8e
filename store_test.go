package ratelimit_test

import (
	"errors"
	"testing"

	"github.com/ratelimit-go/ratelimit"
)

func TestValidateCall(t *testing.T) {
	l := ratelimit.PerSecond(5)
	tests := []struct {
		key  string
		n    int
		want error
	}{
		{"k", 0, nil},
		{"k", 5, nil},
		{"k", 6, ratelimit.ErrCostExceedsCapacity},
		{"k", -1, ratelimit.ErrInvalidCost},
		{"", 1, ratelimit.ErrEmptyKey},
	}
	for _, tt := range tests {
		if err := ratelimit.ValidateCall(tt.key, l, tt.n); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("ValidateCall(%q, %v, %d) = %v, want %v", tt.key, l, tt.n, err, tt.want)
		}
	}
}

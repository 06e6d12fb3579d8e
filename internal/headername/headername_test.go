package headername

import "testing"

func TestValid(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"X-API-Key", true},
		{"x_api.key~1!#$%&'*+^`|", true},
		{"Ip", true},
		{"", false},
		{"X API Key", false},
		{"X-Key:", false},
		{" X-Key", false},
		{"X-Key\t", false},
		{"X-Key\n", false},
		{"X/Key", false},
		{"Schlüssel", false},
		{"X\x7fKey", false},
	} {
		if got := Valid(tt.name); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

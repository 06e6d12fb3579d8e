package rules

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseNamesManyLimitsInLinearWork: a rule of n unnamed limits of one
// period, named a-1m, a-1m-2, a-1m-3 and so on, costs work in proportion
// to n. Four times the limits make about four times the allocations; when
// each name was found by trying every suffix from 2, they made n²/2
// strings, and a file of 100,000 aliases of one limit did not parse in
// minutes.
func TestParseNamesManyLimitsInLinearWork(t *testing.T) {
	allocs := func(n int) float64 {
		var d strings.Builder
		d.WriteString("rules:\n  - name: a\n    match: \"GET /\"\n    limits:\n")
		for i := range n {
			fmt.Fprintf(&d, "      - {rate: %d, period: 1m}\n", i+1)
		}
		doc := []byte(d.String())
		return testing.AllocsPerRun(2, func() {
			if _, err := Parse(doc); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(500), allocs(2000)
	t.Logf("%.0f allocations for 500 limits, %.0f for 2,000 (%.1fx)", small, large, large/small)
	if large > 6*small {
		t.Errorf("%.0f allocations for 2,000 limits, %.0f for 500: %.1fx for 4x the limits, want about 4x", large, small, large/small)
	}
}

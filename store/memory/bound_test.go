package memory

import "testing"

// TestNewIsBoundedByDefault: a store made without options holds at most
// DefaultMaxKeys keys: its shards' bounds, which eviction enforces (see
// evict_test.go), add up to it; WithMaxKeys(0) removes them.
func TestNewIsBoundedByDefault(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []Option
		want int
	}{
		{"memory.New()", nil, DefaultMaxKeys},
		{"WithMaxKeys(1000)", []Option{WithMaxKeys(1000)}, 1000},
		{"WithMaxKeys(0)", []Option{WithMaxKeys(0)}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(append(tt.opts, WithSweepInterval(0))...)
			defer s.Close()
			total, unbounded := 0, 0
			for i := range s.shards {
				total += s.shards[i].max
				if s.shards[i].max == 0 {
					unbounded++
				}
			}
			if tt.want == 0 && unbounded != len(s.shards) || tt.want > 0 && (total != tt.want || unbounded > 0) {
				t.Fatalf("shards bound %d keys in all (%d of %d shards unbounded), want %d", total, unbounded, len(s.shards), tt.want)
			}
		})
	}
}

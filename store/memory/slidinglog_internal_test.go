package memory

import "testing"

// TestLogRingGrowsToItsRate: a log's ring holds no more entries than its
// rate lets the window hold (a block's log of one request per period, one
// entry, 16 bytes), doubling up to it, and one more than it holds when
// the rate was lowered below its count.
func TestLogRingGrowsToItsRate(t *testing.T) {
	tests := []struct {
		name   string
		rate   int
		pushes int
		want   int // the ring's capacity after the pushes
	}{
		{"one request per period", 1, 1, 1},
		{"two per period", 2, 2, 2},
		{"a hundred, one request", 100, 1, 4},
		{"a hundred, nine requests", 100, 9, 16},
		{"a hundred, a hundred requests", 100, 100, 100},
		{"a rate lowered below the count", 1, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g slidingLog
			for i := range tt.pushes {
				g.push(logEntry{at: int64(i), n: 1}, tt.rate)
			}
			if len(g.ring) != tt.want || g.count != tt.pushes || g.sum != int64(tt.pushes) {
				t.Fatalf("ring of %d, %d entries, sum %d; want a ring of %d and %d entries", len(g.ring), g.count, g.sum, tt.want, tt.pushes)
			}
			for i := range tt.pushes {
				if g.at(i).at != int64(i) {
					t.Fatalf("entry %d at %d: the ring lost the order", i, g.at(i).at)
				}
			}
		})
	}
}

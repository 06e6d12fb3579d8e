package redisstore

import (
	"context"
	"testing"
	"time"
)

// TestSilentNode: a decision that finds every call to its node in flight
// is refused when the node has been silent for longer than the decision
// can wait, the silence counted from the node's last answer or from when
// calls went out to it after it had been idle, whichever is later.
func TestSilentNode(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	tests := []struct {
		name           string
		answered, busy time.Time
		left           time.Duration // until the decision's deadline
		want           bool
	}{
		{"busy for 200ms, no answer since: a decision of 100ms", ago(time.Minute), ago(200 * time.Millisecond), 100 * time.Millisecond, true},
		{"busy for 200ms, no answer since: a decision of 1s", ago(time.Minute), ago(200 * time.Millisecond), time.Second, false},
		{"idle since an answer long ago, busy for 1ms", ago(10 * time.Minute), ago(time.Millisecond), 100 * time.Millisecond, false},
		{"answered 5ms ago, busy since long before", ago(5 * time.Millisecond), ago(time.Minute), 100 * time.Millisecond, false},
		{"never answered, busy for 200ms", time.Time{}, ago(200 * time.Millisecond), 100 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithDeadline(context.Background(), now.Add(tt.left))
			defer cancel()
			b := &batcher{answered: tt.answered, busy: tt.busy}
			if got := b.silent(&pending{ctx: ctx}, now); got != tt.want {
				t.Fatalf("silent = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("no deadline", func(t *testing.T) {
		b := &batcher{answered: ago(time.Hour), busy: ago(time.Hour)}
		if b.silent(&pending{ctx: context.Background()}, now) {
			t.Fatal("a decision without a deadline was refused")
		}
	})
}

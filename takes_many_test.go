package ratelimit_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/store/memory"
)

// TestTakesOfManyKeysTakeLinearTime: AllowTakes, CountTakes and
// RefundTakes of 100,000 takes (an Envoy request may carry as many
// descriptors) answer in time linear in them, duplicates still found. The
// check for a key twice compared every pair: 5·10⁹ comparisons here, tens
// of seconds; now a map, well under a second (the bound is generous: a
// busy machine, the race detector).
func TestTakesOfManyKeysTakeLinearTime(t *testing.T) {
	const n = 100_000
	store := memory.New()
	defer store.Close()
	l, err := ratelimit.New(store, ratelimit.PerMinute(10))
	if err != nil {
		t.Fatal(err)
	}
	takes := make([]ratelimit.Take, n)
	for i := range takes {
		takes[i] = ratelimit.Take{Key: "k" + strconv.Itoa(i), Limit: ratelimit.PerMinute(10), N: 1}
	}
	results := make([]ratelimit.Result, n)
	ctx := context.Background()
	for _, call := range []struct {
		name string
		do   func() error
	}{
		{"AllowTakes", func() error { _, err := l.AllowTakes(ctx, takes, results); return err }},
		{"CountTakes", func() error { _, err := l.CountTakes(ctx, takes, results); return err }},
		{"RefundTakes", func() error { return l.RefundTakes(ctx, takes) }},
	} {
		start := time.Now()
		if err := call.do(); err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s of %d takes took %v, want well under a second", call.name, n, took)
		}
	}
	takes[n-1].Key = takes[n/2].Key
	if _, err := l.AllowTakes(ctx, takes, results); !errors.Is(err, ratelimit.ErrDuplicateKey) {
		t.Errorf("a key twice among %d takes: %v, want ErrDuplicateKey", n, err)
	}
}

package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// rounds makes raw output of n rounds of the Redis suites in which each
// library's ns/op and Redis CPU per decision are the given ones.
func rounds(n int, rows map[string][2]float64, trips float64) string {
	var b strings.Builder
	for range n {
		for _, suite := range []string{"Redis/allowed/g=1", "Redis/allowed/g=64", "Redis/allowed/g=512", "Redis/denied/g=64"} {
			for _, lib := range []string{"reference", "ours-tb", "redis_rate", "ulule", "ours-fw"} {
				v := rows[lib]
				fmt.Fprintf(&b, "Benchmark%s/lib=%s-2 \t 1000 \t %g ns/op \t %g redis-cpu-µs/op \t %g roundtrips/op \t 3.000 cmds/op \t 20 p50-µs \t 40 p99-µs \t 100 B/op \t 5 allocs/op\n",
					suite, lib, v[0], v[1], trips)
			}
		}
	}
	return b.String()
}

func TestRedisTargets(t *testing.T) {
	raw := rounds(3, map[string][2]float64{
		"reference":  {20000, 10},
		"redis_rate": {21000, 12},
		"ours-tb":    {10000, 5}, // 2.1x redis_rate, 2.0x reference; CPU 0.42x
		"ulule":      {15000, 6},
		"ours-fw":    {11000, 4}, // 1.36x ulule: missed
	}, 1)
	r, err := parse(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]target{}
	for _, tg := range targets(r) {
		got[tg.what] = tg
	}
	for _, c := range []struct {
		prefix   string
		measured float64
		pass     bool
	}{
		{"Redis, 64 goroutines: ours token bucket throughput / redis_rate's", 2.1, true},
		{"Redis, 64 goroutines: ours token bucket throughput / the reference script's", 2.0, true},
		{"Redis, 64 goroutines: ours token bucket Redis CPU per decision / redis_rate's", 5.0 / 12, true},
		{"Redis, 64 goroutines: ours fixed window throughput / ulule's", 15.0 / 11, false},
		{"Redis, one goroutine: ours token bucket latency / the reference script's (ns/op)", 0.5, true},
		{"Redis, 64 and 512 goroutines: ours' most round trips per decision (every algorithm, both workloads)", 1, true},
		{"Redis, one goroutine: ours' round trips per decision, fewest and most (every algorithm, both workloads)", 1, true},
	} {
		tg, ok := got[c.prefix]
		if !ok {
			t.Errorf("no target %q", c.prefix)
			continue
		}
		if math.Abs(tg.measured-c.measured) > 1e-9 || tg.pass() != c.pass {
			t.Errorf("%s: measured %v (pass %v), want %v (pass %v)", c.prefix, tg.measured, tg.pass(), c.measured, c.pass)
		}
	}
}

func TestRoundTripsAboveOneMiss(t *testing.T) {
	r, err := parse(strings.NewReader(rounds(1, map[string][2]float64{"ours-tb": {1, 1}, "ours-fw": {1, 1}}, 1.2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets(r) {
		if strings.Contains(tg.what, "round trips") && tg.pass() {
			t.Errorf("%s: 1.2 round trips per decision passed", tg.what)
		}
	}
}

func TestReadmeTableFromTheRun(t *testing.T) {
	r, err := parse(strings.NewReader(rounds(1, map[string][2]float64{
		"reference": {20000, 10}, "redis_rate": {25000, 12}, "ours-tb": {10000, 5}, "ulule": {15000, 6}, "ours-fw": {11000, 4},
	}, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	readme(&b, r, 1)
	for _, want := range []string{
		"| Redis token bucket, 64 goroutines | 100.0k/s, 5 µs Redis CPU, 1 round trip (2.50x redis_rate's throughput) | redis_rate 40.0k/s, 12 µs Redis CPU, 1 round trip; reference script 50.0k/s, 10 µs Redis CPU, 1 round trip |",
		"| Redis fixed window, 64 goroutines | 90.9k/s, 4 µs Redis CPU, 1 round trip (1.36x ulule's throughput) | ulule 66.7k/s, 6 µs Redis CPU, 1 round trip |",
		"(benchmarks/RESULTS.md)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("README table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "hot key") {
		t.Errorf("a row for a suite that did not run:\n%s", b.String())
	}
}

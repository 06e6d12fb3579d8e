package benchmarks

import (
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	// 1..1000 µs, one each: the p50 is 500 µs and the p99 990 µs, each
	// within a bucket's width (1/32).
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	var other histogram
	other.add(time.Hour)
	h.merge(&other)
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 500 * time.Microsecond},
		{0.99, 990 * time.Microsecond},
		{0.001, 1 * time.Microsecond},
		{1, time.Hour},
	} {
		got := h.quantile(c.q)
		if d := got - c.want; d < -c.want/32 || d > c.want/32 {
			t.Errorf("quantile(%v) = %v, want %v within 1/32", c.q, got, c.want)
		}
	}
	var empty histogram
	if got := empty.quantile(0.5); got != 0 {
		t.Errorf("empty quantile = %v, want 0", got)
	}
}

func TestBucketsCoverEveryValue(t *testing.T) {
	for _, ns := range []uint64{0, 1, 63, 64, 65, 127, 128, 1000, 12345, 1 << 40, 1<<63 + 5, ^uint64(0)} {
		i := bucket(ns)
		lo, hi := bounds(i)
		if ns < lo || (hi > lo && ns >= hi) {
			t.Errorf("bucket(%d) = %d holds [%d, %d)", ns, i, lo, hi)
		}
		if hi > lo && float64(hi-lo) > float64(lo)/32+1 {
			t.Errorf("bucket %d is [%d, %d): wider than 1/32", i, lo, hi)
		}
	}
	if n := len(histogram{}.counts); bucket(^uint64(0)) >= n {
		t.Errorf("the largest value's bucket %d is past the %d buckets", bucket(^uint64(0)), n)
	}
}

func TestParseInfoSumsServers(t *testing.T) {
	one := "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\nused_cpu_sys_children:9.0\r\n" +
		"# Stats\r\ntotal_commands_processed:100\r\n" +
		"# Commandstats\r\ncmdstat_evalsha:calls=10,usec=55,usec_per_call=5.50,rejected_calls=0,failed_calls=0\r\n"
	var s serverStats
	s.cmds = map[string][2]float64{}
	parseInfo(one, &s)
	parseInfo(one, &s)
	if s.cpu != 7.5 {
		t.Errorf("cpu = %v, want 7.5 (sys + user, children not counted, two servers)", s.cpu)
	}
	if s.commands != 200 {
		t.Errorf("commands = %v, want 200", s.commands)
	}
	if got := s.cmds["evalsha"]; got != [2]float64{20, 110} {
		t.Errorf("evalsha = %v, want [20 110]", got)
	}
}

func TestSetupCommandsAreTold(t *testing.T) {
	for _, c := range []struct {
		write string
		setup bool
	}{
		{"*2\r\n$5\r\nhello\r\n$1\r\n3\r\n", true},
		{"*4\r\n$6\r\nclient\r\n$7\r\nsetinfo\r\n$8\r\nLIB-NAME\r\n$8\r\ngo-redis\r\n", true},
		{"*2\r\n$7\r\nCLUSTER\r\n$5\r\nslots\r\n", true},
		{"*4\r\n$7\r\nevalsha\r\n$40\r\n0123456789012345678901234567890123456789\r\n$1\r\n1\r\n$1\r\nk\r\n", false},
		{"*1\r\n$4\r\nping\r\n", false},
		{"", false},
		{"*2\r\n$5\r\nhel", false},
		{"$5\r\nhello\r\n", false},
	} {
		if got := setupCommand([]byte(c.write)); got != c.setup {
			t.Errorf("setupCommand(%q) = %v, want %v", c.write, got, c.setup)
		}
	}
}

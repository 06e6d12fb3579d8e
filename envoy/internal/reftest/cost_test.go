package reftest

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// benchConfig is the cost comparison's rules: two descriptors a request,
// limits no stream reaches, so that every decision is a full one.
const benchConfig = `
domain: bench
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 100000000}
  - key: route
    rate_limit: {unit: minute, requests_per_unit: 100000000}
`

// TestCost measures requests per second and latency percentiles of both
// services on the same Redis and rules, in interleaved rounds (the order
// alternating), from concurrent gRPC clients in this process; it logs the
// figures and asserts nothing of them. Run it with RATELIMIT_REFTEST_COST=1
// beside the differential test's variables; RATELIMIT_REFTEST_COST_CLIENTS
// (16), _ROUNDS (5) and _SECONDS (3) shape it.
func TestCost(t *testing.T) {
	if os.Getenv("RATELIMIT_REFTEST_COST") != "1" {
		t.Skip("set RATELIMIT_REFTEST_COST=1 (with RATELIMIT_REDIS_ADDR and RATELIMIT_SLOW_TESTS=1) to measure ratelimitd against envoyproxy/ratelimit")
	}
	single := gate(t)
	bins := build(t)
	env := func(name string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
			return n
		}
		return def
	}
	clients, rounds := env("RATELIMIT_REFTEST_COST_CLIENTS", 16), env("RATELIMIT_REFTEST_COST_ROUNDS", 5)
	dur := time.Duration(env("RATELIMIT_REFTEST_COST_SECONDS", 3)) * time.Second
	for _, srv := range servers(single) {
		t.Run(srv.name, func(t *testing.T) {
			root := writeRuntime(t, map[string]string{"bench.yaml": benchConfig})
			p := startPair(t, bins, srv, map[string]string{
				"RUNTIME_ROOT": root, "RUNTIME_SUBDIRECTORY": "ratelimit", "RUNTIME_WATCH_ROOT": "false",
			})
			p.warm(t, "bench", "user=w")
			type figures struct{ rps, p50, p99 []float64 }
			got := map[string]*figures{"reference": {}, "ratelimitd": {}}
			for r := range rounds {
				order := []*proc{p.ref, p.ours}
				if r%2 == 1 {
					order = []*proc{p.ours, p.ref}
				}
				for _, svc := range order {
					fellBack := p.ours.fallbacks()
					n, lat := load(t, svc, clients, dur)
					if d := p.ours.fallbacks() - fellBack; svc == p.ours && d > 0 {
						t.Logf("round %d: %d of ratelimitd's %d requests decided by its local fallback (Redis past the 100ms time budget)", r+1, d, n)
					}
					f := got[svc.name]
					f.rps = append(f.rps, float64(n)/dur.Seconds())
					f.p50 = append(f.p50, ms(lat, 0.50))
					f.p99 = append(f.p99, ms(lat, 0.99))
					t.Logf("round %d %-10s %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms", r+1, svc.name, f.rps[len(f.rps)-1], f.p50[len(f.p50)-1], f.p99[len(f.p99)-1])
				}
			}
			ref, ours := got["reference"], got["ratelimitd"]
			t.Logf("%s, %d clients, %d rounds of %v each, medians:", srv.name, clients, rounds, dur)
			t.Logf("| service | requests/s | p50 ms | p99 ms |")
			t.Logf("| envoyproxy/ratelimit | %.0f | %.2f | %.2f |", median(ref.rps), median(ref.p50), median(ref.p99))
			t.Logf("| ratelimitd | %.0f | %.2f | %.2f |", median(ours.rps), median(ours.p50), median(ours.p99))
			t.Logf("| ratelimitd / reference | %.2f | %.2f | %.2f |", median(ours.rps)/median(ref.rps), median(ours.p50)/median(ref.p50), median(ours.p99)/median(ref.p99))
		})
	}
}

// load sends svc requests from clients goroutines for dur, each of two
// descriptors over 10,000 users and 50 routes, and returns how many were
// answered and each one's latency.
func load(t *testing.T, svc *proc, clients int, dur time.Duration) (int, []time.Duration) {
	t.Helper()
	end := time.Now().Add(dur)
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for i := c; time.Now().Before(end); i += clients {
				req := step{descs: []string{"user=u" + strconv.Itoa(i%10000), "route=/r" + strconv.Itoa(i%50)}}.request("bench")
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				begin := time.Now()
				resp, err := svc.client.ShouldRateLimit(ctx, req)
				cancel()
				if err != nil || resp.GetOverallCode() != pb.RateLimitResponse_OK {
					t.Errorf("%s: %v %v", svc.name, err, resp)
					break
				}
				lat = append(lat, time.Since(begin))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return len(all), all
}

// fallbacks is how many requests p's log says its store did not decide,
// the lines and those their rate limit suppressed.
func (p *proc) fallbacks() int {
	b, _ := os.ReadFile(p.log)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, fallbackLog) {
			continue
		}
		n++
		if _, after, ok := strings.Cut(line, "suppressed="); ok {
			k, _ := strconv.Atoi(strings.Fields(after + " ")[0])
			n += k
		}
	}
	return n
}

// ms is the q quantile of lat in milliseconds.
func ms(lat []time.Duration, q float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond)
}

// median is the median of xs.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

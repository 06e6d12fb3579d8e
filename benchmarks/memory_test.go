package benchmarks

import (
	"flag"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Every decision in these suites is an admission: budgets far above what a
// run can spend, so each library takes its hot path and does the same work.
//
// The period is an hour so that no run crosses the end of one: after an
// interval sethvargo/go-limiter refills Interval/Tokens tokens (in ns per
// token), capped at Tokens, which for a billion per second is 1 token, and
// every key would then be denied.
var (
	hotBudget   = Budget{Rate: 1_000_000_000, Period: time.Hour}
	bytesBudget = Budget{Rate: 100, Period: time.Hour} // a key stays live for the whole run
)

var (
	manyKeys  = flag.Int("many-keys", 100_000, "keys of BenchmarkManyKeys")
	bytesKeys = flag.Int("bytes-keys", 1_000_000, "keys of BenchmarkBytesPerKey")
	rotate    = flag.Int("rotate", 0, "start each suite's list of libraries this many places later; run.sh turns it each round so that no library always runs first")
)

// rotated returns names started *rotate places later, wrapping around.
func rotated(names []string) []string {
	r := (*rotate%len(names) + len(names)) % len(names)
	return append(slices.Clone(names[r:]), names[:r]...)
}

// peer returns the library called name, closed when the benchmark ends.
// It collects garbage first, so that what earlier benchmarks left behind
// (and a store whose cleaner stops only when collected) costs nothing here.
func peer(b *testing.B, name string, budget Budget) Peer {
	b.Helper()
	var p Peer
	if name == "xtimerate" {
		p = XTimeRate(budget)
	} else {
		var err error
		if p, err = NewPeer(name, budget); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(p.Close)
	return p
}

// settle collects the garbage of the set-up, outside the timed loop.
func settle() {
	runtime.GC()
	runtime.GC() // a second cycle runs the finalizers the first one queued
}

// checkDenied fails b if the library denied requests of a budget it was
// meant to admit in full, so that every library does the same work.
// A few denials in a million are a library's own behaviour under
// contention (throttled's GCRA gives up after a bounded number of
// compare-and-swap attempts and denies): they are reported as denied/op,
// and fail the benchmark only past one in 10,000 requests.
func checkDenied(b *testing.B, denied int64) {
	b.Helper()
	if denied == 0 {
		return
	}
	b.ReportMetric(float64(denied)/float64(b.N), "denied/op")
	if denied*10_000 > int64(b.N) {
		b.Errorf("%d of %d requests denied: the library did not do the same work as the others", denied, b.N)
	}
}

// BenchmarkHotKeySerial is one key, one goroutine; x/time/rate's
// Limiter.AllowN(time.Now(), 1) is the floor.
func BenchmarkHotKeySerial(b *testing.B) {
	for _, name := range rotated(append([]string{"xtimerate"}, PeerNames...)) {
		b.Run("lib="+name, func(b *testing.B) {
			p := peer(b, name, hotBudget)
			p.Allow("hot")
			settle()
			var denied int64
			b.ReportAllocs()
			for b.Loop() {
				if !p.Allow("hot") {
					denied++
				}
			}
			checkDenied(b, denied)
		})
	}
}

// BenchmarkHotKeyParallel is one key from every core.
func BenchmarkHotKeyParallel(b *testing.B) {
	for _, name := range rotated(append([]string{"xtimerate"}, PeerNames...)) {
		b.Run("lib="+name, func(b *testing.B) {
			p := peer(b, name, hotBudget)
			p.Allow("hot")
			settle()
			var denied atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var d int64
				for pb.Next() {
					if !p.Allow("hot") {
						d++
					}
				}
				denied.Add(d)
			})
			checkDenied(b, denied.Load())
		})
	}
}

// keyNames returns n distinct client keys.
func keyNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "client-" + strconv.Itoa(i)
	}
	return names
}

// BenchmarkManyKeys is 100,000 existing keys visited round-robin from
// every goroutine (run it with -cpu 1,2), each goroutine from its own
// starting point.
func BenchmarkManyKeys(b *testing.B) {
	names := keyNames(*manyKeys)
	for _, name := range rotated(PeerNames) {
		b.Run("lib="+name, func(b *testing.B) {
			p := peer(b, name, hotBudget)
			for _, k := range names {
				p.Allow(k)
			}
			settle()
			var start atomic.Int64
			var denied atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(start.Add(1)*7919) % len(names)
				var d int64
				for pb.Next() {
					if !p.Allow(names[i]) {
						d++
					}
					if i++; i == len(names) {
						i = 0
					}
				}
				denied.Add(d)
			})
			checkDenied(b, denied.Load())
		})
	}
}

// BenchmarkBytesPerKey reports the live heap one key costs once 1,000,000
// keys are held, as B/key. Key strings are made per request, as a server
// makes them from each request, so a library that keeps them pays for
// them. Run one library per process (run.sh does), with -benchtime 1x:
// what an earlier library leaves in the runtime would count against the
// next.
func BenchmarkBytesPerKey(b *testing.B) {
	for _, name := range rotated(PeerNames) {
		b.Run("lib="+name, func(b *testing.B) {
			n := *bytesKeys
			var perKey float64
			b.ReportAllocs()
			for b.Loop() {
				var before, after runtime.MemStats
				settle()
				runtime.ReadMemStats(&before)
				p, err := NewPeer(name, bytesBudget)
				if err != nil {
					b.Fatal(err)
				}
				var denied int64
				for i := range n {
					if !p.Allow("client-" + strconv.Itoa(i)) {
						denied++
					}
				}
				settle()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(p)
				p.Close()
				checkDenied(b, denied)
				perKey = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
			}
			b.ReportMetric(perKey, "B/key")
		})
	}
}

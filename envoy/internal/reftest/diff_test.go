package reftest

import (
	"strconv"
	"testing"
	"time"
)

// rep is n copies of s.
func rep(n int, s step) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// seq joins streams.
func seq(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// one is a stream of one step.
func one(descs ...string) []step { return []step{{descs: descs}} }

// stopped is s, whose answers with stop differ as the README's
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT row says: the reference charged
// the descriptor that went over in the request before, ratelimitd took
// nothing; ref and ours are then the answers of each.
func stopped(stop bool, s step, ref, ours string) step {
	if stop {
		s.ref, s.ours = ref, ours
	}
	return s
}

// modesOver is four requests of a descriptor whose going over refuses
// nothing (quota_mode, shadow_mode; 1 an hour) beside one of 3 an hour:
// alike without stop; with stop the reference stops counting the second
// once the first is over, and ratelimitd does not.
func modesOver(stop bool, soft, hard string) []step {
	s := step{descs: []string{soft, hard}}
	return []step{
		s,
		stopped(stop, s, "OK: OK/0 OK/2", "OK: OK/0 OK/1"),
		stopped(stop, s, "OK: OK/0 OK/2", "OK: OK/0 OK/0"),
		stopped(stop, s, "OK: OK/0 OK/2", "OVER_LIMIT: OK/0 OVER_LIMIT/0"),
	}
}

// cases are the streams both services answer alike, but for the
// README's documented differences; stop is
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT.
func cases(stop bool) []tcase {
	// A descriptor's hits above what its limit holds: the reference counts
	// them (with stop, on the descriptor that goes over only); ratelimitd
	// fills the window, or with stop takes nothing. The next hit tells.
	aboveCapacity := stopped(stop, step{descs: []string{"path=/login"}}, "OVER_LIMIT: OVER_LIMIT/0", "OK: OK/1")
	return []tcase{
		{name: "several descriptors", domain: "multi", window: time.Hour, steps: seq(
			rep(4, step{descs: []string{"client=a", "path=/login"}}),
			rep(5, step{descs: []string{"client=b", "path=/other", "unknown=x"}}),
			rep(2, step{descs: []string{"path=/other", "client=a"}}),
		)},
		{name: "nested descriptors", domain: "nested", window: time.Hour, steps: seq(
			one("tenant=acme"),
			rep(3, step{descs: []string{"tenant=acme,user=bob", "tenant=acme"}}),
			rep(4, step{descs: []string{"tenant=acme,user=admin"}}),
			rep(2, step{descs: []string{"tenant=other,user=bob", "tenant=other,user=eve"}}),
			one("tenant=other"), one("user=bob"), one("tenant=acme,user=bob,device=x"),
		)},
		{name: "wildcards", domain: "wild", window: time.Hour, steps: seq(
			rep(4, step{descs: []string{"path=/api/v2/x"}}),
			rep(3, step{descs: []string{"path=/api/v1", "path=/api/v2/y"}}),
			rep(2, step{descs: []string{"path=/api/exact"}}),
			one("shared=s-1"), one("shared=s-2"), one("shared=s-3", "shared=t-1"),
		)},
		{name: "unlimited", domain: "modes", window: time.Hour, steps: rep(3, step{descs: []string{"free=x", "quota=u"}})},
		{name: "shadow_mode", domain: "modes", window: time.Hour, steps: seq(
			rep(3, step{descs: []string{"shadow=x"}}),
			rep(2, step{descs: []string{"shadow=y", "base=y"}}),
		)},
		{name: "quota_mode", domain: "modes", window: time.Hour, steps: rep(3, step{descs: []string{"quota=x", "free=y"}})},
		{name: "replaces", domain: "modes", window: time.Hour, steps: seq(
			rep(4, step{descs: []string{"base=x", "premium=y"}}),
			rep(2, step{descs: []string{"base=x"}}),
		)},
		{name: "requests_per_unit 0", domain: "modes", window: time.Hour, steps: rep(2, step{descs: []string{"zero=x", "base=z"}})},
		{name: "hits_addend per request", domain: "multi", window: time.Hour, steps: []step{
			{hits: 2, descs: []string{"client=h"}},
			{hits: 2, descs: []string{"client=h", "path=/x"}}, // client goes over
			stopped(stop, step{hits: 1, descs: []string{"client=h"}}, "OVER_LIMIT: OVER_LIMIT/0", "OK: OK/0"),
			{hits: 5, descs: []string{"client=i"}}, // above the capacity
			stopped(stop, step{descs: []string{"client=i"}}, "OVER_LIMIT: OVER_LIMIT/0", "OK: OK/2"),
		}},
		{name: "hits_addend per descriptor", domain: "multi", window: time.Hour, steps: []step{
			{hits: 3, descs: []string{"client=p#1", "path=/login#0"}},
			{descs: []string{"client=p#2", "path=/login#2"}},
			{descs: []string{"client=p#0", "path=/login#0"}},
			{hits: 2, descs: []string{"client=q", "path=/q#3"}},
		}},
		{name: "hits above capacity", domain: "multi", window: time.Hour, steps: []step{
			{descs: []string{"client=c#1", "path=/login#3"}},
			aboveCapacity,
		}},
		// One budget named several times in a request: counted in turn, as
		// the reference counts them; with stop, ratelimitd takes nothing of
		// a request that goes over (the README's row).
		{name: "one budget named several times", domain: "multi", window: time.Hour, steps: []step{
			stopped(stop, step{descs: []string{"client=d", "client=d", "client=d", "client=d"}},
				"OVER_LIMIT: OK/2 OK/1 OK/0 OVER_LIMIT/0", "OVER_LIMIT: OK/3 OK/3 OK/3 OVER_LIMIT/0"),
			stopped(stop, step{descs: []string{"client=d"}}, "OVER_LIMIT: OVER_LIMIT/0", "OK: OK/2"),
			stopped(stop, step{descs: []string{"client=e#2", "client=e#2"}},
				"OVER_LIMIT: OK/1 OVER_LIMIT/0", "OVER_LIMIT: OK/3 OVER_LIMIT/0"),
			stopped(stop, step{descs: []string{"client=e"}}, "OVER_LIMIT: OVER_LIMIT/0", "OK: OK/2"),
		}},
		// README, default counting: a budget named several times in a request
		// that cannot hold their sum: every one of them is over in
		// ratelimitd, the reference answers OK to those that still fit.
		{name: "one budget named several times, partly spent", domain: "multi", window: time.Hour, steps: []step{
			{descs: []string{"client=f"}},
			{descs: []string{"client=f", "client=f", "client=f"},
				ref: "OVER_LIMIT: OK/1 OK/0 OVER_LIMIT/0", ours: "OVER_LIMIT: OVER_LIMIT/0 OVER_LIMIT/0 OVER_LIMIT/0"},
		}},
		// README: with stop, a quota_mode or shadow_mode descriptor over its
		// limit stops the reference from counting the request's other
		// descriptors, which then never refuse; ratelimitd counts them.
		{name: "quota_mode and shadow_mode over their limits", domain: "modes", window: time.Hour, steps: seq(
			modesOver(stop, "quota=z", "premium=z"),
			modesOver(stop, "shadow=z", "premium=w"),
		)},
		{name: "limit override", domain: "multi", window: time.Hour, steps: rep(3, step{descs: []string{"client=o@2/HOUR", "path=/login@1/DAY"}})},
		{name: "unit second", domain: "units", window: time.Second, steps: rep(3, step{descs: []string{"s=x"}})},
		// The shortest window of the request is s's second, not m's minute:
		// a stream across a second would see s=y refill in one service and
		// not yet in the other.
		{name: "unit minute", domain: "units", window: time.Second, steps: rep(3, step{descs: []string{"m=x", "s=y"}})},
		{name: "unknown domain", domain: "nope", window: time.Hour, steps: one("a=b")},
		{name: "malformed", domain: "", window: time.Hour, steps: seq(one("a=b"), []step{{}})},
		{name: "no descriptors", domain: "multi", window: time.Hour, steps: []step{{}}},
		// README: a window's count past its limit. A check (hits 0) of a
		// window already over: the reference counted past the limit.
		{name: "check of a window over its limit", domain: "multi", window: time.Hour, steps: seq(
			rep(4, step{descs: []string{"client=w"}}),
			[]step{{descs: []string{"client=w#0"}, ref: "OVER_LIMIT: OVER_LIMIT/0", ours: "OK: OK/0"}},
		)},
	}
}

// TestAgainstReference sends both services, on one configuration and one
// Redis, the same streams, with and without
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT, and asserts the same answers
// but for the README's differences.
func TestAgainstReference(t *testing.T) {
	single := gate(t)
	bins := build(t)
	for _, srv := range servers(single) {
		t.Run(srv.name, func(t *testing.T) {
			root := writeRuntime(t, configFiles)
			for _, stop := range []bool{false, true} {
				t.Run("stop="+strconv.FormatBool(stop), func(t *testing.T) {
					p := startPair(t, bins, srv, map[string]string{
						"RUNTIME_ROOT": root, "RUNTIME_SUBDIRECTORY": "ratelimit",
						"RUNTIME_WATCH_ROOT":                      "false",
						"LIMIT_RESPONSE_HEADERS_ENABLED":          "true",
						"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT": strconv.FormatBool(stop),
					})
					p.warm(t, "warm", "k=w")
					for _, c := range cases(stop) {
						t.Run(c.name, func(t *testing.T) { p.run(t, c) })
					}
				})
			}
		})
	}
}

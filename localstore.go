package ratelimit

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// localStore is the in-process store a limiter on a store that is not
// [Local] falls back to by default (see [New]): the same algorithms as
// store/memory, with the same results, kept simple rather than fast, as it
// decides only while the main store fails. It holds at most
// 65,536 keys: a key whose budget is whole again is
// dropped, and when it is full a new key evicts the least used of a few,
// so that a flood of new keys does not free a limited one. Unlike other
// stores it decides whatever its context: it is the failure policy's
// answer.
type localStore struct {
	seed   maphash.Seed
	now    func() time.Time
	shards [localShards]localShard
}

const localShards = 32

type localShard struct {
	mu  sync.Mutex
	m   map[uint64]localState
	max int
	_   [40]byte // keep the locks on separate cache lines
}

// localState is one key's state; what at, x and y mean depends on the
// algorithm.
type localState struct {
	exp  int64   // Unix ns from which the state equals a new key's
	used float64 // the fraction of the budget in use after the last take
	at   int64   // token bucket: the last update; windows: the window's end
	x, y float64 // token bucket: the tokens; windows: the current count, the previous one
	log  []logEntry
}

// logEntry is a sliding log's admission of n tokens at at (Unix ns).
type logEntry struct{ at, n int64 }

func newLocalStore(maxKeys int, now func() time.Time) *localStore {
	s := &localStore{seed: maphash.MakeSeed(), now: now}
	for i := range s.shards {
		s.shards[i].max = max(1, maxKeys/localShards)
	}
	return s
}

// Local reports true.
func (*localStore) Local() bool { return true }

// Calendars reports true: a calendar limit's windows are Limit.Window's.
func (*localStore) Calendars() bool { return true }

// AllowN implements [Store].
func (s *localStore) AllowN(_ context.Context, key string, limit Limit, n int) (Result, error) {
	if err := ValidateCall(key, limit, n); err != nil {
		return Result{}, err
	}
	now := s.now().UnixNano()
	sh, h := s.shardOf(key, limit)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st, found := sh.m[h]
	if found && st.exp <= now {
		st, found = localState{}, false
	}
	var res Result
	switch limit.Algorithm {
	case FixedWindow:
		res = st.fixedWindow(found, now, limit, n)
	case SlidingWindow:
		res = st.slidingWindow(found, now, limit, n)
	case SlidingLog:
		res = st.slidingLog(now, limit, n)
	default:
		res = st.tokenBucket(found, now, limit, n)
	}
	if res.Allowed && n > 0 {
		sh.put(h, st, found, now)
	}
	return res, nil
}

// shardOf returns the shard of key's state under limit's algorithm, and
// the state's hash there.
func (s *localStore) shardOf(key string, limit Limit) (*localShard, uint64) {
	h := maphash.String(s.seed, key) ^ uint64(limit.Algorithm)*0x9e3779b97f4a7c15
	return &s.shards[h%localShards], h
}

// put stores st as key h's state, making room for a new key first.
func (sh *localShard) put(h uint64, st localState, found bool, now int64) {
	if sh.m == nil {
		sh.m = make(map[uint64]localState)
	}
	if !found && len(sh.m) >= sh.max {
		sh.makeRoom(now)
	}
	sh.m[h] = st
}

// makeRoom drops the keys whose state equals a new key's among the first
// 64 it visits; if none, the least used of 8.
func (sh *localShard) makeRoom(now int64) {
	seen, dropped := 0, false
	var least uint64
	leastUsed := math.Inf(1)
	for h, st := range sh.m { // Go visits a map from a random place
		if st.exp <= now {
			delete(sh.m, h)
			dropped = true
		} else if seen < 8 && st.used < leastUsed {
			least, leastUsed = h, st.used
		}
		if seen++; seen == 64 {
			break
		}
	}
	if !dropped {
		delete(sh.m, least)
	}
}

// tokenBucket is store/memory's token bucket: x/time/rate's decision.
func (st *localState) tokenBucket(found bool, now int64, l Limit, n int) Result {
	rate, burst := l.PerSecondRate(), float64(l.Capacity())
	tokens, last := burst, now
	if found {
		tokens, last = st.x, min(st.at, now)
	}
	tokens = min(burst, tokens+time.Duration(now-last).Seconds()*rate)
	res := Result{Limit: l}
	left := tokens - float64(n)
	if left >= 0 || (-left/rate)*1e9 < 1 {
		res.Allowed, tokens = true, min(burst, left) // a refund (RefundN's n < 0) fills no more than the bucket
	} else {
		res.RetryAfter = ceilNs(-left / rate * 1e9)
	}
	res.Remaining = max(0, int(math.Floor(tokens)))
	res.ResetAfter = ceilNs((burst - tokens) / rate * 1e9)
	*st = localState{x: tokens, at: now, exp: now + int64(res.ResetAfter) + int64(time.Millisecond), used: 1 - tokens/burst}
	return res
}

// fixedWindow is at most Rate per window: Limit.Window's.
func (st *localState) fixedWindow(found bool, now int64, l Limit, n int) Result {
	_, e := l.Window(time.Unix(0, now))
	end := e.UnixNano()
	// A window of another Period (a plan changed) that has not ended
	// carries its count over, and ends with it, as store/memory's.
	count, ends := 0.0, end
	if found && (st.at == end || st.x > 0) {
		count, ends = st.x, st.at
	}
	res := Result{Limit: l}
	if count+float64(n) <= float64(l.Rate) {
		res.Allowed, count = true, count+float64(n)
		if n > 0 {
			ends = max(ends, end) // with this window's takes, until the later end
		}
	} else {
		res.RetryAfter = time.Duration(ends - now)
	}
	res.Remaining = max(0, l.Rate-int(count))
	if count > 0 {
		res.ResetAfter = time.Duration(ends - now)
	}
	*st = localState{at: ends, x: count, exp: ends, used: count / float64(l.Rate)}
	return res
}

// slidingWindow keeps the estimate prev·(1 − elapsed/Period) + curr at
// most Rate.
func (st *localState) slidingWindow(found bool, now int64, l Limit, n int) Result {
	period := int64(l.Period)
	start, _ := l.Window(time.Unix(0, now))
	begin := start.UnixNano()
	var curr, prev float64
	if found {
		switch st.at {
		case begin + period:
			curr, prev = st.x, st.y
		case begin:
			prev = st.x
		default:
			// a window of another Period (a plan changed), its start
			// 2·at − exp, begun within this one's trailing period: every
			// request it counted is this window's, as store/memory's
			if 2*st.at-st.exp > begin-period {
				curr = st.x + st.y
			}
		}
	}
	elapsed := now - begin
	estimate := prev*(1-float64(elapsed)/float64(period)) + curr
	rate := float64(l.Rate)
	res := Result{Limit: l}
	if estimate+float64(n) <= rate {
		res.Allowed, curr, estimate = true, curr+float64(n), estimate+float64(n)
	} else {
		res.RetryAfter = time.Duration(slidingRetry(prev, curr, float64(n), rate, elapsed, period))
	}
	res.Remaining = max(0, int(math.Floor(rate-estimate)))
	switch {
	case curr > 0:
		res.ResetAfter = time.Duration(2*period - elapsed)
	case prev > 0:
		res.ResetAfter = time.Duration(period - elapsed)
	}
	*st = localState{at: begin + period, x: curr, y: prev, exp: begin + 2*period, used: estimate / rate}
	return res
}

// slidingRetry is how long after now (elapsed into its window) the
// estimate leaves room for n: store/memory's.
func slidingRetry(prev, curr, n, rate float64, elapsed, period int64) int64 {
	if room := rate - curr - n; room >= 0 && prev > 0 {
		e := int64(math.Ceil(float64(period) * (1 - room/prev)))
		return max(e-elapsed, 1)
	}
	e := int64(0)
	if curr > rate-n {
		e = int64(math.Ceil(float64(period) * (1 - (rate-n)/curr)))
	}
	return period - elapsed + e
}

// slidingLog is at most Rate tokens within any trailing period.
func (st *localState) slidingLog(now int64, l Limit, n int) Result {
	period := int64(l.Period)
	g := st.log
	if len(g) > 0 {
		now = max(now, g[len(g)-1].at) // keep the log in time order
	}
	var sum int64
	i := 0
	for i < len(g) && g[i].at <= now-period {
		i++
	}
	g = g[i:]
	for _, e := range g {
		sum += e.n
	}
	res := Result{Limit: l}
	if sum+int64(n) <= int64(l.Rate) {
		res.Allowed = true
		if n > 0 {
			g = append(g, logEntry{at: now, n: int64(n)})
			sum += int64(n)
		}
	} else {
		need := sum + int64(n) - int64(l.Rate)
		for _, e := range g {
			if need -= e.n; need <= 0 {
				res.RetryAfter = time.Duration(period - (now - e.at))
				break
			}
		}
	}
	res.Remaining = max(0, l.Rate-int(sum))
	exp := now
	if len(g) > 0 {
		newest := g[len(g)-1].at
		exp = newest + period
		res.ResetAfter = time.Duration(period - (now - newest))
	}
	*st = localState{log: g, exp: exp, used: float64(sum) / float64(l.Rate)}
	return res
}

// ceilNs is ns rounded up to a Duration, saturated.
func ceilNs(ns float64) time.Duration {
	if ns <= 0 {
		return 0
	}
	if ns = math.Ceil(ns); ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

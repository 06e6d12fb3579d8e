package redisstore

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// The scripts' arguments, one builder per script, each following the
// KEYS and ARGV its script's header states: every call starts "evalsha",
// the script's hash, the number of keys (eval swaps in the source after
// NOSCRIPT).

// aloneArgs are the script and arguments of p sent alone: one.lua's for a
// take, onereserve.lua's for a booking or a cancellation, onemulti.lua's
// for an AllowAll.
func (s *Store) aloneArgs(p *pending) (*script, []any) {
	switch p.op {
	case book, unbook:
		return s.scripts.reserve, s.reserveArgs(p)
	case all:
		return s.scripts.multi, s.multiArgs(p)
	}
	sc := s.scripts.one[p.limit.Algorithm]
	a := s.limitArgs(p.limit)
	return sc, []any{"evalsha", sc.script.Hash(), 1, p.key, s.clockArg(), int(p.limit.Algorithm), a[0], a[1], p.n, a[2], p.deadline}
}

// reserveArgs are onereserve.lua's arguments for booking or cancellation p.
func (s *Store) reserveArgs(p *pending) []any {
	a := s.limitArgs(p.limit)
	h := s.scripts.reserve.script.Hash()
	if p.op == unbook {
		return []any{"evalsha", h, 1, p.key, s.clockArg(), p.deadline, "c", a[0], a[1], p.n, p.at / 1000, p.at % 1000}
	}
	return []any{"evalsha", h, 1, p.key, s.clockArg(), p.deadline, "r", a[0], a[1], p.n, int64(p.maxWait)}
}

// multiArgs are multi.lua's arguments for AllowAll p, sent alone.
func (s *Store) multiArgs(p *pending) []any {
	k := len(p.takes)
	args := make([]any, 3, 3+k+2+5*k)
	args[0], args[1], args[2] = "evalsha", s.scripts.multi.script.Hash(), k
	for _, key := range p.keys {
		args = append(args, key)
	}
	args = append(args, s.clockArg(), p.deadline)
	for i := range p.takes {
		t := &p.takes[i]
		a := s.limitArgs(t.Limit)
		args = append(args, int(t.Limit.Algorithm), a[0], a[1], t.N, a[2])
	}
	return args
}

// refundArgs are refund.lua's script and arguments for a refund of n
// tokens of key, taken at most age ago.
func (s *Store) refundArgs(ctx context.Context, key string, limit ratelimit.Limit, n int, age time.Duration) (*script, []any) {
	a := s.limitArgs(limit)
	var before any = ""
	if limit.Calendar != ratelimit.NoCalendar {
		// The start of the window before the app's, which window.lua's
		// calendarStop may pick, and whose start it has no length for.
		start, _ := limit.Window(time.UnixMicro(a[2].(int64)).Add(-time.Nanosecond))
		prev, _ := limit.Window(start.Add(-time.Nanosecond))
		before = prev.UnixMicro()
	}
	sc := s.scripts.refund
	return sc, []any{"evalsha", sc.script.Hash(), 1, s.Key(key, limit.Algorithm), s.clockArg(), s.deadlineArg(ctx),
		int(limit.Algorithm), a[0], a[1], n, a[2], ceilMicros(age), before}
}

// batchArgs are batch.lua's arguments for batch, of at most maxBatch
// takes in all, and their number: the earliest of the takes' deadlines,
// each take's limit as one byte of one string, each distinct limit once
// (with its algorithm: a booking's, a cancellation's and an AllowAll's
// takes' are their own), then each take's cost and deadline (an
// AllowAll's on its first take), then the bookings', cancellations' and
// AllowAlls' own arguments.
func (s *Store) batchArgs(batch []*pending) ([]any, int) {
	var limits [maxBatch]ratelimit.Limit
	var algs [maxBatch]int
	var which [maxBatch]byte // a limit's number fits a byte: see below
	m, w, extra := 0, 0, 0
	index := func(l ratelimit.Limit, alg int) byte {
		j := 0
		for j < m && (limits[j] != l || algs[j] != alg) {
			j++
		}
		if j == m {
			limits[m], algs[m] = l, alg
			m++
		}
		return byte(j + 1)
	}
	var soonest any = ""
	for _, p := range batch {
		if d, ok := p.deadline.(int64); ok {
			if e, ok := soonest.(int64); !ok || d < e {
				soonest = d
			}
		}
		switch p.op {
		case all:
			for i := range p.takes {
				l := p.takes[i].Limit
				which[w] = index(l, algAll+int(l.Algorithm))
				w++
			}
			extra++ // its number of takes
			continue
		case book:
			extra++ // its bound
		case unbook:
			extra += 2 // its instant
		}
		which[w] = index(p.limit, p.alg())
		w++
	}
	args := make([]any, 0, 7+w+4*m+2*w+extra)
	args = append(args, "evalsha", s.scripts.batch.script.Hash(), w)
	for _, p := range batch {
		if p.op == all {
			for _, k := range p.keys {
				args = append(args, k)
			}
		} else {
			args = append(args, p.key)
		}
	}
	args = append(args, s.clockArg(), m, soonest, string(which[:w]))
	for j, l := range limits[:m] {
		a := s.limitArgs(l)
		args = append(args, algs[j], a[0], a[1], a[2])
	}
	for _, p := range batch {
		if p.op != all {
			args = append(args, p.n, p.deadline)
			continue
		}
		for i := range p.takes {
			d := p.deadline
			if i > 0 {
				d = "" // the AllowAll's deadline is its first take's
			}
			args = append(args, p.takes[i].N, d)
		}
	}
	if extra > 0 {
		for _, p := range batch {
			switch p.op {
			case book:
				args = append(args, int64(p.maxWait))
			case unbook:
				args = append(args, p.at/1000, p.at%1000)
			case all:
				args = append(args, len(p.takes))
			}
		}
	}
	return args, w
}

// A take's limit is sent as one byte (batchArgs), and a batch holds at
// most maxBatch distinct limits: this fails to compile past 255.
const _ = uint8(maxBatch)

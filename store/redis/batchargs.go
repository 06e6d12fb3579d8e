package redisstore

import "github.com/ratelimit-go/ratelimit"

// batchArgs are batch.lua's arguments for batch, of at most maxBatch
// takes in all, and their number: each distinct limit once (with its
// algorithm: a booking's, a cancellation's and an AllowAll's takes' are
// their own), then each take's limit, cost and deadline (an AllowAll's on
// its first take), then the bookings', cancellations' and AllowAlls' own
// arguments.
func (s *Store) batchArgs(batch []*pending) ([]any, int) {
	var limits [maxBatch]ratelimit.Limit
	var algs, which [maxBatch]int
	m, w, extra := 0, 0, 0
	index := func(l ratelimit.Limit, alg int) int {
		j := 0
		for j < m && (limits[j] != l || algs[j] != alg) {
			j++
		}
		if j == m {
			limits[m], algs[m] = l, alg
			m++
		}
		return j + 1
	}
	for _, p := range batch {
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
	args := make([]any, 0, 5+w+4*m+3*w+extra)
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
	args = append(args, s.clockArg(), m)
	for j, l := range limits[:m] {
		a := s.limitArgs(l)
		args = append(args, algs[j], a[0], a[1], a[2])
	}
	w = 0
	for _, p := range batch {
		if p.op != all {
			args = append(args, which[w], p.n, p.deadline)
			w++
			continue
		}
		for i := range p.takes {
			d := p.deadline
			if i > 0 {
				d = "" // the AllowAll's deadline is its first take's
			}
			args = append(args, which[w], p.takes[i].N, d)
			w++
		}
	}
	if extra > 0 {
		for _, p := range batch {
			switch p.op {
			case book:
				args = append(args, p.x)
			case unbook:
				args = append(args, p.x, p.y)
			case all:
				args = append(args, len(p.takes))
			}
		}
	}
	return args, w
}

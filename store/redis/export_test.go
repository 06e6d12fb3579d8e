package redisstore

import (
	"context"
	"time"

	"github.com/ratelimit-go/ratelimit"
)

// WithStringEncoding forces the scripts' string encoding, the one servers
// without Lua's struct get, so that tests prove it on real servers too.
func WithStringEncoding() Option {
	return func(s *Store) { s.scripts = &stringsOnly }
}

// WithAppClockSlack keeps keys slack longer than their windows need under
// WithAppClock: on a real server, keys expire by its clock while a test's
// app clock stands still between steps, which on a busy machine under the
// race detector can take longer than the scripts' own second.
func WithAppClockSlack(d time.Duration) Option {
	return func(s *Store) { s.slack = d }
}

// BatchTake is one decision of DecideBatch: AllowN(Key, Limit, N); with
// Reserve, ReserveN(Key, Limit, N, MaxWait); with Cancel,
// CancelReservation(Key, Limit, *Cancel); with All, AllowAll(All,
// Results), which Results (of All's length) receives.
type BatchTake struct {
	Ctx   context.Context
	Key   string
	Limit ratelimit.Limit
	N     int

	Reserve bool
	MaxWait time.Duration
	Cancel  *ratelimit.Reservation

	All     []ratelimit.Take
	Results []ratelimit.Result
}

// DecideBatch sends takes as one batch, in order, as the group commit
// does, and returns each one's outcome.
func DecideBatch(s *Store, takes []BatchTake) ([]ratelimit.Result, []error) {
	rs, errs := DecideMixed(s, takes)
	res := make([]ratelimit.Result, len(takes))
	for i := range rs {
		res[i] = rs[i].Result
	}
	return res, errs
}

// DecideMixed is DecideBatch with each outcome as a booking's: a take's
// and a cancellation's are their Result only.
func DecideMixed(s *Store, takes []BatchTake) ([]ratelimit.Reservation, []error) {
	return decideWith(s, takes, func(batch []*pending) { s.send(nil, batch) })
}

func decideWith(s *Store, takes []BatchTake, send func([]*pending)) ([]ratelimit.Reservation, []error) {
	batch := make([]*pending, len(takes))
	for i, t := range takes {
		p := &pending{ctx: t.Ctx, key: s.Key(t.Key, t.Limit.Algorithm), limit: t.Limit, n: t.N, deadline: s.deadlineArg(t.Ctx)}
		switch {
		case t.All != nil:
			p.op, p.takes = all, t.All
			p.keys, p.rows = make([]string, len(t.All)), make([]row, len(t.All))
			for j, tk := range t.All {
				p.keys[j] = s.Key(tk.Key, tk.Limit.Algorithm)
			}
		case t.Cancel != nil:
			p.op, p.n, p.at = unbook, t.Cancel.Tokens, t.Cancel.At.UnixNano()
		case t.Reserve:
			p.op, p.maxWait = book, t.MaxWait
		}
		batch[i] = p
	}
	send(batch)
	rs, errs := make([]ratelimit.Reservation, len(takes)), make([]error, len(takes))
	for i, p := range batch {
		switch errs[i] = p.err; {
		case p.err != nil:
		case p.op == all && p.rows[0][0] < 0:
			errs[i] = ErrLate
		case p.op == all:
			for j := range p.rows {
				takes[i].Results[j] = p.rows[j].result(p.takes[j].Limit)
			}
		default:
			rs[i] = p.reservation()
		}
	}
	return rs, errs
}

// Queued is the number of decisions waiting in the store's batcher (one
// node).
func Queued(s *Store) int {
	s.batchers.one.mu.Lock()
	defer s.batchers.one.mu.Unlock()
	return len(s.batchers.one.queue)
}

// MaxSenders, MaxBatch and MaxQueued are the batcher's bounds.
const (
	MaxSenders = maxSenders
	MaxBatch   = maxBatch
	MaxQueued  = maxQueued
)

// ErrMissedWindow is the error of a decision whose calendar windows did
// not hold Redis's clock.
var ErrMissedWindow = errMissedWindow

// ClockKnown reports whether s has learnt how far Redis's clock is from the
// app's, which it needs to send a call's deadline.
func ClockKnown(s *Store) bool { return s.skew.known.Load() }

// BatchCall is the call batch.lua gets for a batch of takes and AllowAlls
// (an entry of more than one key is an AllowAll of those keys), each of n
// tokens under limit, with no deadline: for benchmarks of the script
// alone. LoadScripts loads the store's scripts first.
func BatchCall(s *Store, batch [][]string, limit ratelimit.Limit, n int) []any {
	ps := make([]*pending, len(batch))
	for i, keys := range batch {
		p := &pending{ctx: context.Background(), limit: limit, n: n, deadline: ""}
		if len(keys) == 1 {
			p.key = s.Key(keys[0], limit.Algorithm)
		} else {
			p.op = all
			for _, k := range keys {
				p.takes = append(p.takes, ratelimit.Take{Key: k, Limit: limit, N: n})
				p.keys = append(p.keys, s.Key(k, limit.Algorithm))
			}
		}
		ps[i] = p
	}
	args, _ := s.batchArgs(ps)
	return args
}

// LoadScripts loads the store's scripts into its server.
func LoadScripts(s *Store) { s.loadScripts(context.Background()) }

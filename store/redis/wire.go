package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
)

// The wire: a script call sent at most once (eval), its reply read
// (decode), and a batch's call and outcomes (send). What waits and who
// sends is queue.go's; the arguments are args.go's.

// processor is what a script call is sent through: the store's client, or
// on Cluster one master's (cluster.go).
type processor interface {
	Process(ctx context.Context, cmd goredis.Cmder) error
}

// onceCmd is a script call that go-redis must never resend: a resent call
// could count one request twice.
type onceCmd struct{ *goredis.Cmd }

// NoRetry tells go-redis not to retry the command.
func (onceCmd) NoRetry() bool { return true }

// row is one take's reply: allowed (1, 0, -1 for late, or -2 for a
// calendar window Redis's clock is not in: see calendar.go), remaining,
// retry-after µs, reset-after µs.
type row [4]int64

// rowSize is the length of a row in a binary reply: a signed byte and three
// little-endian int64.
const rowSize = 1 + 3*8

// eval runs sc with args, which start "evalsha", sha, and fills rows from
// its reply: one EVALSHA, and an EVAL only after NOSCRIPT (which ran
// nothing), each sent at most once. It returns the clock the script used
// (µs), which the script returns last, and learns Redis's clock from it.
func (s *Store) eval(ctx context.Context, client processor, sc *script, args []any, rows []row) (int64, error) {
	sent := time.Now()
	cmd := onceCmd{goredis.NewCmd(ctx, args...)}
	err := client.Process(ctx, cmd)
	return s.answer(ctx, client, sc, args, rows, cmd, err, sent)
}

// answer reads the answer err or the reply of cmd, a call of sc with args
// sent at sent through client, as eval does: after NOSCRIPT, which ran
// nothing, it sends the EVAL.
func (s *Store) answer(ctx context.Context, client processor, sc *script, args []any, rows []row, cmd onceCmd, err error, sent time.Time) (int64, error) {
	noscript := err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT")
	if noscript {
		defer s.loadScripts(ctx)
		args[0], args[1] = "eval", sc.source
		cmd = onceCmd{goredis.NewCmd(ctx, args...)}
		sent = time.Now()
		err = client.Process(ctx, cmd)
	}
	if err != nil {
		s.reloadRoutes(err) // cluster.go
		return 0, fmt.Errorf("ratelimit/redis: %s: %w", sc.name, classify(err, s.addr()))
	}
	now, err := decode(cmd.Val(), rows)
	if err != nil {
		return 0, fmt.Errorf("ratelimit/redis: %s: %w", sc.name, err)
	}
	if s.now == nil {
		s.skew.observe(now, sent, time.Now(), anyAnswered(rows, late))
		if anyAnswered(rows, missed) {
			s.skew.set(now, sent)
		}
	}
	return now, nil
}

// loadScripts loads every script of the store after a NOSCRIPT (a new or
// restarted server, SCRIPT FLUSH), so that the decisions that follow, alone
// or batched, do not each pay a NOSCRIPT and an EVAL, and a batch does not
// wait for one. Loading is idempotent; an error, or a Ring shard it did not
// reach, leaves the next NOSCRIPT to load them again. On a ClusterClient
// go-redis sends each SCRIPT LOAD to every shard.
func (s *Store) loadScripts(ctx context.Context) {
	all := s.scripts.all()
	switch s.client.(type) {
	case *goredis.ClusterClient, *goredis.Ring:
		for _, sc := range all {
			s.client.ScriptLoad(ctx, sc.source)
		}
	default:
		s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, sc := range all {
				p.ScriptLoad(ctx, sc.source)
			}
			return nil
		})
	}
}

// late is the allowed value of a take that reached Redis after its
// deadline: it took nothing.
const late = -1

// anyAnswered reports whether a take of rows was answered allowed, such
// as late or missed.
func anyAnswered(rows []row, allowed int64) bool {
	for _, r := range rows {
		if r[0] == allowed {
			return true
		}
	}
	return false
}

// decode reads a script's reply, binary or a table of integers (see
// prelude.lua), into rows, and returns the clock the script used.
func decode(v any, rows []row) (now int64, err error) {
	switch v := v.(type) {
	case string:
		if len(v) != len(rows)*rowSize+8 {
			return 0, fmt.Errorf("reply of %d bytes for %d takes, want %d", len(v), len(rows), len(rows)*rowSize+8)
		}
		for i := range rows {
			b := v[i*rowSize:]
			rows[i] = row{
				int64(int8(b[0])),
				int64(binary.LittleEndian.Uint64([]byte(b[1:9]))),
				int64(binary.LittleEndian.Uint64([]byte(b[9:17]))),
				int64(binary.LittleEndian.Uint64([]byte(b[17:25]))),
			}
		}
		return int64(binary.LittleEndian.Uint64([]byte(v[len(v)-8:]))), nil
	case []any:
		if len(v) != 4*len(rows)+1 {
			return 0, fmt.Errorf("reply of %d values for %d takes, want %d", len(v), len(rows), 4*len(rows)+1)
		}
		for i := range rows {
			for j := range 4 {
				n, ok := v[4*i+j].(int64)
				if !ok {
					return 0, fmt.Errorf("reply value %d is %T, want an integer", 4*i+j, v[4*i+j])
				}
				rows[i][j] = n
			}
		}
		now, ok := v[len(v)-1].(int64)
		if !ok {
			return 0, fmt.Errorf("reply's clock is %T, want an integer", v[len(v)-1])
		}
		return now, nil
	}
	return 0, fmt.Errorf("reply is %T, want a string or an array", v)
}

// result reads a decision under limit from a row.
func (r row) result(limit ratelimit.Limit) ratelimit.Result {
	return ratelimit.Result{
		Allowed:    r[0] == 1,
		Limit:      limit,
		Remaining:  int(r[1]),
		RetryAfter: time.Duration(r[2]) * time.Microsecond,
		ResetAfter: time.Duration(r[3]) * time.Microsecond,
	}
}

// clockArg is the scripts' clock argument: the app's clock in µs if the
// store has one (with a test's expiry slack, "µs/ms": see prelude.lua's
// clock), else "" (Redis TIME).
func (s *Store) clockArg() any {
	if s.now != nil {
		if s.slack > 0 {
			return strconv.FormatInt(s.now().UnixMicro(), 10) + "/" + strconv.FormatInt(s.slack.Milliseconds(), 10)
		}
		return s.now().UnixMicro()
	}
	return ""
}

// deadlineArg is the scripts' deadline argument for ctx: its deadline in
// µs in Redis's clock, or "" for none (and always with the app's clock).
// The calls of a limiter's budget that start together share a deadline
// (its cohorts): the last one made is kept boxed, so that they make it
// once, not an allocation each.
func (s *Store) deadlineArg(ctx context.Context) any {
	if s.now == nil {
		if d, ok := ctx.Deadline(); ok {
			if rd, ok := s.skew.deadline(d); ok {
				if last := s.lastDeadline.Load(); last != nil && last.us == rd {
					return last.arg
				}
				last := &boxedDeadline{us: rd, arg: rd}
				s.lastDeadline.Store(last)
				return last.arg
			}
		}
	}
	return ""
}

// boxedDeadline is a deadline argument, and the int64 it holds.
type boxedDeadline struct {
	us  int64
	arg any
}

// send decides batch, sent by b (nil: a decision sent alone, at once), and
// sets each decision's outcome: in one script call, or, for a batch over
// a Cluster master's slots, as sendNode sends it.
func (s *Store) send(b *batcher, batch []*pending) {
	if len(batch) > 1 && b != nil && b.addr != "" {
		s.sendNode(b, batch)
		return
	}
	sc, args, rows := s.call(batch)
	ctx, cancel := batchContext(batch)
	now, err := s.eval(ctx, s.client, sc, args, rows)
	if cancel != nil {
		cancel()
	}
	settle(batch, rows, now, err)
}

// call is the script, arguments and reply rows of batch in one call: its
// decision's own script for one (the rows of an AllowAll are its own),
// batch.lua for several.
func (s *Store) call(batch []*pending) (*script, []any, []row) {
	if len(batch) == 1 {
		p := batch[0]
		sc, args := s.aloneArgs(p)
		if p.op == all {
			return sc, args, p.rows
		}
		return sc, args, make([]row, 1)
	}
	args, width := s.batchArgs(batch)
	return s.scripts.batch, args, make([]row, width)
}

// settle sets the outcome of each decision of batch from the rows of its
// call, which used the clock now, or from the call's error.
func settle(batch []*pending, rows []row, now int64, err error) {
	off := 0
	for _, p := range batch {
		r := rows[off]
		switch {
		case err != nil:
			p.err = err
		case p.op == all:
			if len(batch) > 1 {
				copy(p.rows, rows[off:])
			}
			if anyAnswered(p.rows, missed) {
				p.err = errMissedWindow
			}
		case r[0] == missed:
			p.err = errMissedWindow
		case r[0] < 0:
			p.err = ErrLate
		default:
			p.res = r.result(p.limit)
			if p.op == book && p.res.Allowed {
				// A booking's row has its delay in ns where a denial's
				// retry-after is.
				p.res.RetryAfter, p.delay, p.now = 0, time.Duration(r[2]), now
			}
		}
		off += p.width()
	}
}

// batchContext is the context of the call that carries batch: the
// decision's own for one; for several, the first one's values, never
// canceled, and the latest of their deadlines (none if one has none), so
// that no caller's deadline cuts short the call of the others. Decisions
// whose contexts end together (one Done channel and one deadline, as the
// calls of a limiter's budget that start together have) share the first
// one's context as it is, which costs the call no timer.
func batchContext(batch []*pending) (context.Context, context.CancelFunc) {
	first := batch[0].ctx
	if len(batch) == 1 {
		return first, nil
	}
	done := first.Done()
	var latest time.Time
	together := done != nil
	for _, p := range batch {
		d, ok := p.ctx.Deadline()
		if !ok {
			return context.WithoutCancel(first), nil
		}
		together = together && p.ctx.Done() == done && (latest.IsZero() || d.Equal(latest))
		if d.After(latest) {
			latest = d
		}
	}
	if together {
		return first, nil
	}
	return context.WithDeadline(context.WithoutCancel(first), latest)
}

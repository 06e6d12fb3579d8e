package redisstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Group commit on Redis Cluster. Decisions are batched per master, not per
// slot: with keys spread over 16,384 slots, two decisions of one slot are
// rarely in flight together, while those of one master are whenever the
// store is busy. A decision alone goes as on a single node, routed by its
// key through the cluster client. A batch of several goes to its master's
// client as one call of the node script (batch.lua with node.lua, Redis 7's
// allow-cross-slot-keys flag, the keys undeclared), which reads every key
// before it writes any and answers NOTLOCAL, having done nothing, if one
// is not served there (a slot that moved or is migrating, a master that
// failed over). Then, as after a READONLY (the master became a replica)
// or a redirect, each also a proof that nothing ran, the batch's cached
// routes are dropped and it goes again as a pipeline of one call per slot
// through the cluster client, which follows MOVED and ASK (a slot's call
// answered TRYAGAIN, in a migration, goes again as lone decisions, which
// ASK takes where their keys are). Nothing else is
// resent: a broken connection or a timeout fails the batch's decisions
// (at most once), and drops its routes, so that the next batches find
// their masters again. Where the node script is refused (Redis before 7,
// proxies that refuse undeclared keys) or [WithPerSlotBatches] is set, the
// per-slot pipeline is the way every batch goes. A slot found migrating
// (the key a NOTLOCAL names, a slot's call answered TRYAGAIN) sends its
// decisions alone for a second, so that its master's other batches are
// not sent again and again behind it (batchers.alone).

// stale are the answers of the node script that prove it ran nothing and
// that its route is stale.
var stale = []string{"NOTLOCAL", "READONLY", "MOVED", "ASK"}

// refusals are the answers of servers that do not run the node script:
// Redis before 7 (no flags line), proxies that refuse its undeclared keys.
var refusals = []string{"Error compiling script", "Unknown lua shebang", "Unexpected flag", "unknown command", "Script attempted to access"}

// sendNode sends batch, of several decisions of b's master, and sets
// each decision's outcome.
func (s *Store) sendNode(b *batcher, batch []*pending) {
	node := b.node.Load()
	if s.perSlot.Load() || node == nil {
		s.sendSlots(batch)
		return
	}
	args, width := s.batchArgs(batch)
	args = nodeArgs(s.scripts.node, args)
	rows := make([]row, width)
	ctx, cancel := batchContext(batch)
	now, err := s.eval(ctx, node, s.scripts.node, args, rows)
	if cancel != nil {
		cancel()
	}
	switch {
	case err == nil:
		settle(batch, rows, now, nil)
		return
	case hasPrefix(err, refusals):
		s.perSlot.Store(true)
	case hasPrefix(err, stale):
		s.batchers.forget(batch)
		if slot, ok := awaySlot(err, batch); ok {
			s.batchers.sendAlone(slot)
		}
	default:
		s.batchers.forget(batch)
		settle(batch, rows, 0, err)
		return
	}
	s.sendSlots(batch) // nothing ran
}

// nodeArgs are the node script's arguments for a batch whose batch.lua
// arguments are args ("evalsha", sha, the number of keys, the keys, then
// ARGV): no declared key, then the number of keys, the keys and ARGV.
func nodeArgs(node *script, args []any) []any {
	out := make([]any, 0, len(args)+1)
	out = append(out, "evalsha", node.script.Hash(), 0, args[2])
	return append(out, args[3:]...)
}

// sendSlots sends batch as a pipeline of one call per slot through the
// cluster client (one write per master; MOVED and ASK followed, nothing
// retried after a transport error), and sets each decision's outcome.
func (s *Store) sendSlots(batch []*pending) {
	type call struct {
		group []*pending
		sc    *script
		args  []any
		rows  []row
		cmd   onceCmd
	}
	var calls []call
	for _, group := range bySlot(batch) {
		c := call{group: group}
		c.sc, c.args, c.rows = s.call(group)
		calls = append(calls, c)
	}
	ctx, cancel := batchContext(batch)
	if cancel != nil {
		defer cancel()
	}
	sent := time.Now()
	s.client.Pipelined(ctx, func(pipe goredis.Pipeliner) error {
		for i := range calls {
			calls[i].cmd = onceCmd{goredis.NewCmd(ctx, calls[i].args...)}
			pipe.Process(ctx, calls[i].cmd)
		}
		return nil
	})
	for i := range calls {
		c := &calls[i]
		now, err := s.answer(ctx, s.client, c.sc, c.args, c.rows, c.cmd, c.cmd.Err(), sent)
		if len(c.group) > 1 && hasPrefix(err, retryAlone) {
			// A slot being migrated refused the call (nothing ran): each
			// decision goes alone, which one redirect takes where its keys
			// are, and so do the slot's next ones for a while.
			s.batchers.sendAlone(c.group[0].slot)
			for _, p := range c.group {
				s.send(nil, []*pending{p})
			}
			continue
		}
		settle(c.group, c.rows, now, err)
	}
}

// awaySlot returns the slot of the key that a node batch's NOTLOCAL
// answer names ("NOTLOCAL <key> is not served by this node"), found among
// batch's decisions.
func awaySlot(err error, batch []*pending) (uint16, bool) {
	msg := err.Error()
	i := strings.Index(msg, "NOTLOCAL ")
	if i < 0 { // READONLY, MOVED or ASK: no key named
		return 0, false
	}
	key, ok := strings.CutSuffix(msg[i+len("NOTLOCAL "):], " is not served by this node")
	if !ok {
		return 0, false
	}
	for _, p := range batch {
		if p.key == key || slices.Contains(p.keys, key) {
			return p.slot, true
		}
	}
	return 0, false
}

// retryAlone are the answers to a per-slot call that prove it ran nothing
// and that its decisions can go alone: TRYAGAIN, for keys of a slot being
// migrated, some moved and some not.
var retryAlone = []string{"TRYAGAIN"}

// bySlot splits batch into its slots' decisions, each in batch's order.
func bySlot(batch []*pending) [][]*pending {
	var groups [][]*pending
next:
	for _, p := range batch {
		for i, g := range groups {
			if g[0].slot == p.slot {
				groups[i] = append(g, p)
				continue next
			}
		}
		groups = append(groups, []*pending{p})
	}
	return groups
}

// hasPrefix reports whether err is a Redis error that starts with one of
// prefixes.
func hasPrefix(err error, prefixes []string) bool {
	for _, p := range prefixes {
		if goredis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}

// reloadRoutes asks a Cluster client to read the cluster's slots again
// after a call that Redis did not answer (a refused or broken connection,
// a timeout): a master that died, and whose replica was promoted, is
// otherwise called, and refuses every call, until go-redis reloads on its
// own, a minute later (ClusterStateReloadInterval), since a refused
// connection carries no MOVED. go-redis runs one reload at a time, 200 ms
// apart at most, however many calls ask; the batchers find their slots'
// masters again from the client's view.
func (s *Store) reloadRoutes(err error) {
	cc, ok := s.client.(*goredis.ClusterClient)
	if !ok {
		return
	}
	var answered goredis.Error // an error reply: Redis answered
	if errors.As(err, &answered) || errors.Is(err, context.Canceled) {
		return
	}
	cc.ReloadState(context.Background())
	s.batchers.staleAll()
}

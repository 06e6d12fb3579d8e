package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// batchers are a store's batchers: one for a single node; on a Cluster,
// one per master (made as decisions come), found from a key's slot through
// a cache of the slots' masters (cluster.go).
type batchers struct {
	one batcher

	cluster *goredis.ClusterClient // nil: a single node
	// slots caches each slot's master's batcher; an entry is dropped when
	// a call proves or suggests the slot has moved, and found again from
	// the cluster client's view.
	slots [16384]atomic.Pointer[batcher]
	// alone holds, per slot, until when (Unix ns) its decisions go alone,
	// routed by the cluster client, rather than in its master's batches:
	// a slot being migrated (a node batch answered NOTLOCAL for its key, a
	// slot's call TRYAGAIN), whose every batch would be sent three times
	// (by node, by slot, alone) while the master's other decisions wait.
	alone *[16384]atomic.Int64
	mu    sync.Mutex
	nodes map[string]*batcher // by master address, at most one per master ever seen
}

// batcherFor returns the batcher of keys with hash tag tag, or nil when
// the store does not batch them (or cannot find their master: the
// decision then goes alone, routed by the cluster client).
func (s *Store) batcherFor(ctx context.Context, tag *[10]byte) *batcher {
	if !s.batching {
		return nil
	}
	bs := &s.batchers
	if bs.cluster == nil {
		return &bs.one
	}
	slot := clusterSlot(tag[1:9])
	if until := bs.alone[slot].Load(); until != 0 && time.Now().UnixNano() < until {
		return nil // a slot being migrated: alone, where a redirect takes it
	}
	if b := bs.slots[slot].Load(); b != nil && !b.stale.Load() {
		return b
	}
	node, err := bs.cluster.MasterForKey(ctx, string(tag[:]))
	if err != nil {
		return nil
	}
	addr := node.Options().Addr
	bs.mu.Lock()
	b := bs.nodes[addr]
	if b == nil {
		if bs.nodes == nil {
			bs.nodes = make(map[string]*batcher)
		}
		b = &batcher{addr: addr}
		bs.nodes[addr] = b
	}
	b.node.Store(node) // the same address may come with a new client
	b.stale.Store(false)

	bs.mu.Unlock()
	bs.slots[slot].Store(b)
	return b
}

// migrating is how long a slot found migrating sends its decisions alone
// before a batch tries it again.
const migrating = time.Second

// sendAlone makes the decisions of slot go alone for a while (alone).
func (bs *batchers) sendAlone(slot uint16) {
	if bs.alone != nil {
		bs.alone[slot].Store(time.Now().Add(migrating).UnixNano())
	}
}

// staleAll makes every slot's cached master to be found again, from the
// cluster client's view: a call went unanswered, and a master may have
// died (reloadRoutes).
func (bs *batchers) staleAll() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, b := range bs.nodes {
		b.stale.Store(true)
	}
}

// forget drops the cached masters of the slots of batch: the next
// decisions for them find their master again.
func (bs *batchers) forget(batch []*pending) {
	for _, p := range batch {
		bs.slots[p.slot].Store(nil)
	}
}

// clusterSlot is the Redis Cluster slot of a hash tag's content: CRC16
// (XMODEM) modulo 16384.
func clusterSlot(tag []byte) uint16 {
	var crc uint16
	for _, c := range tag {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc & 16383
}

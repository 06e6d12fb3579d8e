package redisstore

import "sync"

// batchers are a store's batchers: one for a single node, one per Cluster
// slot (made as decisions come) for a ClusterClient.
type batchers struct {
	bySlot bool
	one    batcher
	mu     sync.RWMutex
	slots  map[uint16]*batcher // at most 16,384
}

// batcherFor returns the batcher of keys with hash tag tag, or nil when
// the store does not batch.
func (s *Store) batcherFor(tag *[10]byte) *batcher {
	if !s.batching {
		return nil
	}
	bs := &s.batchers
	if !bs.bySlot {
		return &bs.one
	}
	slot := clusterSlot(tag[1:9])
	bs.mu.RLock()
	b := bs.slots[slot]
	bs.mu.RUnlock()
	if b != nil {
		return b
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b = bs.slots[slot]; b == nil {
		if bs.slots == nil {
			bs.slots = make(map[uint16]*batcher)
		}
		b = &batcher{}
		bs.slots[slot] = b
	}
	return b
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

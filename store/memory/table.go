package memory

import "math/bits"

// table is an open-addressing hash table (linear probing) of cells keyed by
// their key's hash. Unlike a Go map it finds a key once for both the read
// and the write of a decision, keeps no pointers (the garbage collector
// never scans it) and gives memory back when it empties. It grows by a
// quarter at a load of 13/16, so its load stays between 13/20 and 13/16:
// 40-byte slots cost 49 to 62 bytes a key.
type table struct {
	slots []slot // any length; 0 before the first key
	used  int
}

type slot struct {
	h uint64 // the key's hash, never 0; 0 marks an empty slot
	c cell
	k keep // what eviction needs of the key's limit
}

const minTableSize = 8

// home is the slot where h's probe run starts. The hash is mixed first:
// its top bits chose the shard, so they are the same for all keys here.
func (t *table) home(h uint64) int {
	hi, _ := bits.Mul64(h*0x9e3779b97f4a7c15, uint64(len(t.slots)))
	return int(hi)
}

// next is the slot after i, wrapping around.
func (t *table) next(i int) int {
	if i++; i == len(t.slots) {
		return 0
	}
	return i
}

// find returns the index of h's slot, and whether h is there; when it is
// not, the index is where insert would put it.
func (t *table) find(h uint64) (int, bool) {
	if len(t.slots) == 0 {
		return -1, false
	}
	for i := t.home(h); ; i = t.next(i) {
		switch t.slots[i].h {
		case h:
			return i, true
		case 0:
			return i, false
		}
	}
}

// insert puts a new key at i, an index that find returned for it.
func (t *table) insert(i int, h uint64, c cell, k keep) {
	if i < 0 || (t.used+1)*16 > len(t.slots)*13 {
		t.resize(max(minTableSize, len(t.slots)+len(t.slots)/4))
		i, _ = t.find(h)
	}
	t.slots[i] = slot{h: h, c: c, k: k}
	t.used++
}

// deleteAt empties slot i, moving later slots of its probe run back so that
// no key becomes unreachable (backward-shift deletion).
func (t *table) deleteAt(i int) {
	for j := t.next(i); t.slots[j].h != 0; j = t.next(j) {
		home := t.home(t.slots[j].h)
		// The slot at j may move to i unless its home lies cyclically in (i, j].
		if (i <= j && i < home && home <= j) || (i > j && (i < home || home <= j)) {
			continue
		}
		t.slots[i] = t.slots[j]
		i = j
	}
	t.slots[i] = slot{}
	t.used--
}

// deleteIf deletes every key whose slot satisfies drop.
func (t *table) deleteIf(drop func(s *slot) bool) {
	for i := 0; i < len(t.slots); {
		if s := &t.slots[i]; s.h != 0 && drop(s) {
			t.deleteAt(i) // a later slot may have moved into i: look again
			continue
		}
		i++
	}
}

// shrink gives memory back once the table is an eighth full, to a size
// at which it is half full.
func (t *table) shrink() {
	if len(t.slots) > minTableSize && t.used*8 < len(t.slots) {
		t.resize(max(minTableSize, 2*t.used))
	}
}

func (t *table) resize(size int) {
	old := t.slots
	t.slots = make([]slot, size)
	t.used = 0
	for _, s := range old {
		if s.h != 0 {
			i, _ := t.find(s.h)
			t.slots[i] = s
			t.used++
		}
	}
}

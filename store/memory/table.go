package memory

// table is an open-addressing hash table (linear probing) of cells keyed by
// their key's hash. Unlike a Go map it finds a key once for both the read
// and the write of a decision, keeps no pointers (the garbage collector
// never scans it) and gives memory back when it empties.
type table struct {
	slots []slot // len is a power of two, or 0
	used  int
}

type slot struct {
	h uint64 // the key's hash, never 0; 0 marks an empty slot
	c cell
}

const minTableSize = 8

// find returns the index of h's slot, and whether h is there; when it is
// not, the index is where insert would put it.
func (t *table) find(h uint64) (int, bool) {
	if len(t.slots) == 0 {
		return -1, false
	}
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch t.slots[i].h {
		case h:
			return i, true
		case 0:
			return i, false
		}
	}
}

// insert puts a new key at i, an index that find returned for it.
func (t *table) insert(i int, h uint64, c cell) {
	if i < 0 || (t.used+1)*4 > len(t.slots)*3 { // keep the load at most 3/4
		t.resize(max(minTableSize, 2*len(t.slots)))
		i, _ = t.find(h)
	}
	t.slots[i] = slot{h: h, c: c}
	t.used++
}

// deleteAt empties slot i, moving later slots of its probe run back so that
// no key becomes unreachable (backward-shift deletion).
func (t *table) deleteAt(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].h != 0; j = (j + 1) & mask {
		home := int(t.slots[j].h) & mask
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

// deleteIf deletes every key whose cell satisfies drop.
func (t *table) deleteIf(drop func(h uint64, c cell) bool) {
	for i := 0; i < len(t.slots); {
		if s := &t.slots[i]; s.h != 0 && drop(s.h, s.c) {
			t.deleteAt(i) // a later slot may have moved into i: look again
			continue
		}
		i++
	}
}

// shrink gives memory back once the table is an eighth full.
func (t *table) shrink() {
	if len(t.slots) > minTableSize && t.used*8 < len(t.slots) {
		size := minTableSize
		for size*3 < t.used*4*2 { // half of the load bound
			size *= 2
		}
		t.resize(size)
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

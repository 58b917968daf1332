package semaphore

import (
	"hash/maphash"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// leafIndex finds a leaf's position in a Tree: an open-addressing table
// (linear probing, at most 3/4 full: about 2.5 probes to find a leaf, 8.5
// to miss, each reading a leaf) whose slots hold leaf index + 1, 0 marking
// an empty slot, hashed with a per-tree random seed. The leaves themselves
// stay in the tree's level 0, so the index costs 4 bytes per slot, 5.3 to
// 10.7 per leaf, where a map[fr.Element]int entry costs about 100.
type leafIndex struct {
	seed  maphash.Seed
	slots []uint32
}

// maxIndexedLeaves is the most leaves a uint32 slot can name (index + 1).
const maxIndexedLeaves = 1<<32 - 1

// minIndexSlots is the table's smallest size.
const minIndexSlots = 64

// add indexes leaves[from:], which are at their own positions in leaves;
// leaves[:from] are indexed already.
func (x *leafIndex) add(leaves []fr.Element, from int) {
	if 4*len(leaves) > 3*len(x.slots) {
		x.grow(leaves)
		return
	}
	for i := from; i < len(leaves); i++ {
		x.put(leaves, i)
	}
}

// grow replaces the table by the smallest one at most 3/4 full with all
// of leaves and indexes them, in order, so that a repeated leaf is found at
// its first position.
func (x *leafIndex) grow(leaves []fr.Element) {
	if len(x.slots) == 0 {
		x.seed = maphash.MakeSeed()
	}
	size := minIndexSlots
	for 3*size < 4*len(leaves) {
		size *= 2
	}
	x.slots = make([]uint32, size)
	for i := range leaves {
		x.put(leaves, i)
	}
}

func (x *leafIndex) put(leaves []fr.Element, i int) {
	mask := uint64(len(x.slots) - 1)
	for s := maphash.Comparable(x.seed, leaves[i]) & mask; ; s = (s + 1) & mask {
		if x.slots[s] == 0 {
			x.slots[s] = uint32(i + 1)
			return
		}
	}
}

// find returns the first position of leaf in leaves.
func (x *leafIndex) find(leaves []fr.Element, leaf fr.Element) (int, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for s := maphash.Comparable(x.seed, leaf) & mask; x.slots[s] != 0; s = (s + 1) & mask {
		if i := int(x.slots[s]) - 1; leaves[i] == leaf {
			return i, true
		}
	}
	return 0, false
}

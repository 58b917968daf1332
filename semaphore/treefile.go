package semaphore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/poseidon"
)

// treeMagic starts MarshalBinary's encoding; the digit is its version.
// Version 1, which held every level, is still read (its levels the tree
// does not keep are checked to be field elements and skipped).
const (
	treeMagic   = "semaphore tree 2\n"
	treeMagicV1 = "semaphore tree 1\n"
)

// treeHeaderSize is the magic, the depth (one byte) and the leaf count
// (eight bytes, big-endian).
const treeHeaderSize = len(treeMagic) + 1 + 8

// checkedTopNodes bounds the nodes ParseTree rehashes: every level from the
// lowest one with at most this many nodes up to the root (under 2·this
// hashes).
const checkedTopNodes = 1024

// ErrBadTreeEncoding is ParseTree's error for bytes that are not a tree
// TreeSnapshot.MarshalBinary wrote.
var ErrBadTreeEncoding = errors.New("semaphore: not an encoded tree")

// TreeSnapshot is a tree as it was when Snapshot was taken.
type TreeSnapshot struct {
	depth  int
	levels [][]fr.Element // each level's nodes; the last one is in last
	last   []fr.Element
}

// Snapshot captures the tree in O(depth): it shares the nodes that no
// append rewrites and copies the last node of each level, the only ones an
// append does, so inserts proceed while the snapshot is encoded.
func (t *Tree) Snapshot() TreeSnapshot {
	t.mu.RLock()
	defer t.mu.RUnlock()
	s := TreeSnapshot{depth: t.depth, levels: make([][]fr.Element, len(t.nodes)), last: make([]fr.Element, len(t.nodes))}
	for i, l := range t.nodes {
		s.levels[i] = l[:len(l):len(l)]
		if len(l) > 0 {
			s.last[i] = l[len(l)-1]
		}
	}
	return s
}

// Len is the number of leaves the snapshot holds.
func (s TreeSnapshot) Len() int { return len(s.levels[0]) }

// MarshalBinary encodes the snapshot as treeMagic, the depth, the leaf
// count and then every stored node, level by level from the leaves up
// (the levels the tree keeps), each 32 bytes big-endian: about 40 bytes
// per leaf.
func (s TreeSnapshot) MarshalBinary() ([]byte, error) {
	size := treeHeaderSize
	for _, l := range s.levels {
		size += fr.Bytes * len(l)
	}
	b := make([]byte, 0, size)
	b = append(b, treeMagic...)
	b = append(b, byte(s.depth))
	b = binary.BigEndian.AppendUint64(b, uint64(s.Len()))
	for i, l := range s.levels {
		for j := range l {
			e := &l[j]
			if j == len(l)-1 {
				e = &s.last[i]
			}
			v := e.Bytes()
			b = append(b, v[:]...)
		}
	}
	return b, nil
}

// ParseTree reads TreeSnapshot.MarshalBinary's encoding back in time linear in its size:
// every node must be a canonical field element, every leaf nonzero and the
// levels exactly as many as the leaf count implies; the top levels (those
// with at most checkedTopNodes nodes) are rehashed and must match. The
// levels below are taken as given: a caller that did not write b itself
// checks its leaves (HasLeaves) and a digest of b.
func ParseTree(b []byte) (*Tree, error) {
	if len(b) < treeHeaderSize {
		return nil, ErrBadTreeEncoding
	}
	v1 := string(b[:len(treeMagicV1)]) == treeMagicV1
	if !v1 && string(b[:len(treeMagic)]) != treeMagic {
		return nil, ErrBadTreeEncoding
	}
	t, err := NewTree(int(b[len(treeMagic)]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadTreeEncoding, err)
	}
	n := binary.BigEndian.Uint64(b[len(treeMagic)+1:])
	if n > uint64(min(1<<t.depth, maxIndexedLeaves)) {
		return nil, fmt.Errorf("%w: %d leaves in a tree of depth %d", ErrBadTreeEncoding, n, t.depth)
	}
	rest := b[treeHeaderSize:]
	for level, count := range levelSizes(int(n), t.depth) {
		if !t.kept(level) && !v1 {
			continue
		}
		if len(rest) < count*fr.Bytes {
			return nil, fmt.Errorf("%w: truncated at level %d", ErrBadTreeEncoding, level)
		}
		nodes := rest[:count*fr.Bytes]
		rest = rest[count*fr.Bytes:]
		if !t.kept(level) {
			err = checkNodes(nodes)
		} else {
			t.nodes[level], err = decodeNodes(nodes)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: level %d: %w", ErrBadTreeEncoding, level, err)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the root", ErrBadTreeEncoding, len(rest))
	}
	for i := range t.nodes[0] {
		if t.nodes[0][i].IsZero() {
			return nil, fmt.Errorf("%w: leaf %d: %w", ErrBadTreeEncoding, i, ErrZeroLeaf)
		}
	}
	if err := t.checkTop(); err != nil {
		return nil, err
	}
	t.index.grow(t.nodes[0])
	return t, nil
}

// levelSizes is the number of stored nodes of each level of a tree of
// depth with n leaves.
func levelSizes(n, depth int) []int {
	sizes := make([]int, depth+1)
	for level := range sizes {
		sizes[level] = n
		n = (n + 1) / 2
	}
	return sizes
}

func decodeNodes(b []byte) ([]fr.Element, error) {
	nodes := make([]fr.Element, len(b)/fr.Bytes)
	for i := range nodes {
		if err := nodes[i].SetBytesCanonical(b[i*fr.Bytes : (i+1)*fr.Bytes]); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
	}
	return nodes, nil
}

// checkNodes checks that b holds canonical field elements, keeping none.
func checkNodes(b []byte) error {
	var e fr.Element
	for i := 0; i < len(b); i += fr.Bytes {
		if err := e.SetBytesCanonical(b[i : i+fr.Bytes]); err != nil {
			return fmt.Errorf("node %d: %w", i/fr.Bytes, err)
		}
	}
	return nil
}

// checkTop rehashes every kept level above the lowest one with at most
// checkedTopNodes nodes (a skipped level below it is rehashed from the
// leaves, which then number at most 2^skippedLevels·checkedTopNodes).
func (t *Tree) checkTop() error {
	level := 0
	for t.levelLen(level) > checkedTopNodes {
		level++
	}
	z := zeroHashes()
	for level++; level <= t.depth; level++ {
		if !t.kept(level) {
			continue
		}
		below := t.levelLen(level - 1)
		for p := range t.nodes[level] {
			right := z[level-1]
			if 2*p+1 < below {
				right = t.node(level-1, 2*p+1)
			}
			if poseidon.HashV1(t.node(level-1, 2*p), right) != t.nodes[level][p] {
				return fmt.Errorf("%w: node %d of level %d is not the hash of its children", ErrBadTreeEncoding, p, level)
			}
		}
	}
	return nil
}

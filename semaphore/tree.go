package semaphore

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/poseidon"
)

// MaxDepth is the deepest tree supported; the published keys stop at 32.
const MaxDepth = 32

// zeroHashes are the empty-subtree roots z[0] = 0, z[i+1] = P(z[i], z[i])
// (doc/crypto.md §g "Merkle tree").
var zeroHashes = sync.OnceValue(func() [MaxDepth + 1]fr.Element {
	var z [MaxDepth + 1]fr.Element
	for i := range MaxDepth {
		z[i+1] = poseidon.HashV1(z[i], z[i])
	}
	return z
})

// ErrZeroLeaf rejects inserting 0, which is the empty leaf: it would not
// change the root and could never be proven distinct from an empty slot.
var ErrZeroLeaf = errors.New("semaphore: the zero leaf marks an empty slot")

// ErrTreeFull is returned when all 2^depth leaves are used.
var ErrTreeFull = errors.New("semaphore: tree is full")

// Tree is an append-only binary Merkle tree over Poseidon v1 with empty
// leaves 0 (doc/crypto.md §g). It keeps the leaves and every filled node
// from level skippedLevels+1 up (about 1.25 field elements per leaf), so
// that inserting costs O(depth) hashes and a leaf's path 4 hashes (its
// siblings at the skipped levels 1 and 2, rehashed from the leaves), plus
// an index of its leaves (Find, 5.3 to 10.7 bytes per leaf). It is safe for
// concurrent use.
//
// Persistence: the tree is a function of its ordered leaves; store them and
// rebuild with BuildTree, or keep a Snapshot's encoding and read it back
// with ParseTree, which costs no hash below the top levels.
type Tree struct {
	mu    sync.RWMutex
	depth int
	// nodes[i] holds the nodes of level i (0 = leaves) that cover at least
	// one leaf, left to right, for the levels kept (nil for the others);
	// nodes[depth] is the root once a leaf exists. Appending rewrites only
	// the last node of a level: every other node covers a full subtree and
	// never changes (Snapshot relies on it).
	nodes [][]fr.Element
	index leafIndex
}

// skippedLevels is how many levels above the leaves are not kept: levels 1
// and 2 would take 24 of the 64 bytes per leaf that every level takes
// together, and rehashing them for a path costs 1 + 3 hashes (about 40 µs).
const skippedLevels = 2

// kept reports whether the nodes of level are stored: the leaves, the root
// and every level above skippedLevels.
func (t *Tree) kept(level int) bool { return level == 0 || level > skippedLevels || level == t.depth }

// firstKept is the lowest level above the leaves that is kept.
func (t *Tree) firstKept() int { return min(skippedLevels+1, t.depth) }

// levelLen is the number of nodes of level that cover at least one leaf.
func (t *Tree) levelLen(level int) int {
	n := len(t.nodes[0])
	return (n + 1<<level - 1) >> level
}

// node returns node i of level (i < levelLen(level)), rehashing it from
// the level below when that level is not kept; a missing right child is
// the empty subtree.
func (t *Tree) node(level, i int) fr.Element {
	if t.kept(level) {
		return t.nodes[level][i]
	}
	right := zeroHashes()[level-1]
	if 2*i+1 < t.levelLen(level-1) {
		right = t.node(level-1, 2*i+1)
	}
	return poseidon.HashV1(t.node(level-1, 2*i), right)
}

// NewTree returns an empty tree of the given depth (1 to MaxDepth; World ID
// uses 30).
func NewTree(depth int) (*Tree, error) {
	if depth < 1 || depth > MaxDepth {
		return nil, fmt.Errorf("semaphore: tree depth %d is not in 1..%d", depth, MaxDepth)
	}
	return &Tree{depth: depth, nodes: make([][]fr.Element, depth+1)}, nil
}

// BuildTree rebuilds a tree from its ordered leaves in O(len(leaves)) hashes.
func BuildTree(depth int, leaves []fr.Element) (*Tree, error) {
	t, err := NewTree(depth)
	if err != nil {
		return nil, err
	}
	if err := t.append(leaves); err != nil {
		return nil, err
	}
	return t, nil
}

// Depth is the number of levels below the root.
func (t *Tree) Depth() int { return t.depth }

// Len is the number of leaves inserted.
func (t *Tree) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.nodes[0])
}

// Root is the current root; for an empty tree it is z[depth].
func (t *Tree) Root() fr.Element {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.root()
}

func (t *Tree) root() fr.Element {
	if len(t.nodes[0]) == 0 {
		return zeroHashes()[t.depth]
	}
	return t.nodes[t.depth][0]
}

// Insert appends leaf and returns its index and the new root.
func (t *Tree) Insert(leaf fr.Element) (index int, root fr.Element, err error) {
	return t.InsertBatch([]fr.Element{leaf})
}

// InsertBatch appends leaves in order and returns the index of the first
// and the single new root. Hashing is shared: k leaves cost about 2k + depth
// hashes instead of k·depth.
func (t *Tree) InsertBatch(leaves []fr.Element) (first int, root fr.Element, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first = len(t.nodes[0])
	if err := t.append(leaves); err != nil {
		return 0, fr.Element{}, err
	}
	return first, t.root(), nil
}

// append adds leaves and rehashes the nodes above them; on error the tree
// is unchanged.
func (t *Tree) append(leaves []fr.Element) error {
	if len(leaves) == 0 {
		return nil
	}
	start := len(t.nodes[0])
	if len(leaves) > min(1<<t.depth, maxIndexedLeaves)-start {
		return ErrTreeFull
	}
	for i := range leaves {
		if leaves[i].IsZero() {
			return ErrZeroLeaf
		}
	}
	t.nodes[0] = append(t.nodes[0], leaves...)
	t.index.add(t.nodes[0], start)
	z := zeroHashes()
	// below[i-off] is node i of the level being read: a kept level whole,
	// or the part of a skipped one that the next kept level rehashes from.
	below, off := t.nodes[0], 0
	for level := 0; level < t.depth; level++ {
		next := level + 1
		from := start >> next // the first node of next the new leaves change
		var above []fr.Element
		if t.kept(next) {
			above = t.nodes[next]
		} else {
			k := t.firstKept()
			from = start >> k << (k - next)
		}
		for p := from; p < (off+len(below)+1)/2; p++ {
			right := z[level]
			if c := 2*p + 1; c < off+len(below) {
				right = below[c-off]
			}
			h := poseidon.HashV1(below[2*p-off], right)
			if t.kept(next) && p < len(above) {
				above[p] = h
			} else {
				above = append(above, h)
			}
		}
		if t.kept(next) {
			t.nodes[next], below, off = above, above, 0
		} else {
			below, off = above, from
		}
	}
	return nil
}

// Find returns the index of the first leaf equal to leaf.
func (t *Tree) Find(leaf fr.Element) (index int, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.index.find(t.nodes[0], leaf)
}

// HasLeaves reports whether the leaves from index from on are leaves, in
// order (and nothing more): what a caller holding the leaves elsewhere
// checks before trusting a tree it read back.
func (t *Tree) HasLeaves(from int, leaves []fr.Element) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return from >= 0 && from <= len(t.nodes[0]) && slices.Equal(t.nodes[0][from:], leaves)
}

// RootAfter is the root the tree had when it held its first n leaves
// (O(depth) hashes). With the leaves' insertion times it rebuilds a
// RootHistory after a restart.
func (t *Tree) RootAfter(n int) (fr.Element, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if n < 0 || n > len(t.nodes[0]) {
		return fr.Element{}, fmt.Errorf("semaphore: tree has %d leaves, not %d", len(t.nodes[0]), n)
	}
	z := zeroHashes()
	if n == 0 {
		return z[t.depth], nil
	}
	// Walk up from leaf n−1: left siblings cover complete subtrees of the
	// first n leaves, right siblings lie beyond them and are empty.
	node, j := t.nodes[0][n-1], n-1
	for level := 0; level < t.depth; level++ {
		if j%2 == 0 {
			node = poseidon.HashV1(node, z[level])
		} else {
			node = poseidon.HashV1(t.node(level, j-1), node)
		}
		j /= 2
	}
	return node, nil
}

// MerklePath proves that Leaf sits at Index under a root: Siblings[i] is
// the other input at level i, and bit i of Index is 1 when the current node
// is the right input (doc/crypto.md §g "Merkle tree").
type MerklePath struct {
	Index    int
	Leaf     fr.Element
	Siblings []fr.Element
}

// Path returns the Merkle path of the leaf at index.
func (t *Tree) Path(index int) (MerklePath, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if index < 0 || index >= len(t.nodes[0]) {
		return MerklePath{}, fmt.Errorf("semaphore: no leaf at index %d", index)
	}
	z := zeroHashes()
	path := MerklePath{Index: index, Leaf: t.nodes[0][index], Siblings: make([]fr.Element, t.depth)}
	for level, j := 0, index; level < t.depth; level, j = level+1, j/2 {
		path.Siblings[level] = z[level]
		if s := j ^ 1; s < t.levelLen(level) {
			path.Siblings[level] = t.node(level, s)
		}
	}
	return path, nil
}

// Root folds the path: the root it proves membership under.
func (p *MerklePath) Root() fr.Element {
	node := p.Leaf
	for level := range p.Siblings {
		if p.Index>>level&1 == 0 {
			node = poseidon.HashV1(node, p.Siblings[level])
		} else {
			node = poseidon.HashV1(p.Siblings[level], node)
		}
	}
	return node
}

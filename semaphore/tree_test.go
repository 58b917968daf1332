package semaphore

import (
	"errors"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
	"worldid/poseidon"
)

func TestZeroSubtreeHashes(t *testing.T) {
	s, c := loadPoseidon1(t)
	z := zeroHashes()
	for i, h := range s.ZeroSubtreeHashes.ValuesHex {
		if i > MaxDepth {
			t.Fatalf("z[%d] beyond MaxDepth", i)
		}
		assertFE(t, "z", z[i], h)
		if i >= 1 {
			empty, err := NewTree(i)
			if err != nil {
				t.Fatal(err)
			}
			assertFE(t, "empty root", empty.Root(), h)
		}
		c.Inc()
	}
}

func TestSingleLeafRoots(t *testing.T) {
	s, c := loadPoseidon1(t)
	z := zeroHashes()
	for _, v := range s.SingleLeafRoots {
		leaf := vectors.Element(t, v.LeafHex)
		path := MerklePath{Index: v.LeafIndex, Leaf: leaf, Siblings: z[:v.Depth]}
		assertFE(t, "folded root", path.Root(), v.RootHex)
		if v.LeafIndex == 0 {
			tree, err := NewTree(v.Depth)
			if err != nil {
				t.Fatal(err)
			}
			if _, root, err := tree.Insert(leaf); err != nil || root != tree.Root() {
				t.Fatal(err)
			}
			assertFE(t, "tree root", tree.Root(), v.RootHex)
		}
		c.Inc()
	}
}

// TestTreeExample: incremental inserts, the bulk build and every path agree
// with the tree_example vectors.
func TestTreeExample(t *testing.T) {
	s, c := loadPoseidon1(t)
	ex := s.TreeExample
	leaves := make([]fr.Element, len(ex.LeavesHex))
	for i, h := range ex.LeavesHex {
		leaves[i] = vectors.Element(t, h)
	}
	incremental, err := NewTree(ex.Depth)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range leaves {
		if idx, _, err := incremental.Insert(l); err != nil || idx != i {
			t.Fatalf("Insert #%d: index %d, %v", i, idx, err)
		}
	}
	built, err := BuildTree(ex.Depth, leaves)
	if err != nil {
		t.Fatal(err)
	}
	assertFE(t, "incremental root", incremental.Root(), ex.RootHex)
	assertFE(t, "built root", built.Root(), ex.RootHex)
	for _, p := range ex.Proofs {
		path, err := built.Path(p.LeafIndex)
		if err != nil {
			t.Fatal(err)
		}
		assertFE(t, "path leaf", path.Leaf, p.LeafHex)
		if len(p.PathIndices) != ex.Depth || len(p.SiblingsHex) != ex.Depth || len(path.Siblings) != ex.Depth {
			t.Fatalf("leaf %d: path length", p.LeafIndex)
		}
		for level := range ex.Depth {
			if bit := path.Index >> level & 1; bit != p.PathIndices[level] {
				t.Errorf("leaf %d level %d: bit %d, want %d", p.LeafIndex, level, bit, p.PathIndices[level])
			}
			assertFE(t, "sibling", path.Siblings[level], p.SiblingsHex[level])
		}
		assertFE(t, "path root", path.Root(), ex.RootHex)
		c.Inc()
	}
}

// TestTreeIncrementalMatchesBuild: batches of every shape give the same
// nodes as one-by-one insertion, and RootAfter replays every past root.
func TestTreeIncrementalMatchesBuild(t *testing.T) {
	const depth, n = 6, 23
	leaves := make([]fr.Element, n)
	for i := range leaves {
		leaves[i].SetUint64(uint64(1000 + i))
	}
	single, _ := NewTree(depth)
	var roots []fr.Element
	for _, l := range leaves {
		_, root, err := single.Insert(l)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	for _, batch := range []int{1, 2, 3, 5, 8, n} {
		tree, _ := NewTree(depth)
		for start := 0; start < n; start += batch {
			end := min(start+batch, n)
			first, root, err := tree.InsertBatch(leaves[start:end])
			if err != nil || first != start || root != roots[end-1] {
				t.Fatalf("batch %d at %d: first %d, %v", batch, start, first, err)
			}
		}
		for i := range n {
			p, err := tree.Path(i)
			if err != nil || p.Root() != tree.Root() || p.Leaf != leaves[i] {
				t.Fatalf("batch %d: path %d: %v", batch, i, err)
			}
		}
	}
	for k := 1; k <= n; k++ {
		if got, err := single.RootAfter(k); err != nil || got != roots[k-1] {
			t.Fatalf("RootAfter(%d): %v", k, err)
		}
	}
	if got, _ := single.RootAfter(0); got != zeroHashes()[depth] {
		t.Fatal("RootAfter(0) is not the empty root")
	}
	for _, bad := range []int{-1, n + 1} {
		if _, err := single.RootAfter(bad); err == nil {
			t.Fatalf("RootAfter(%d) accepted", bad)
		}
	}
	for _, bad := range []int{-1, n} {
		if _, err := single.Path(bad); err == nil {
			t.Fatalf("Path(%d) accepted", bad)
		}
	}
}

func TestTreeLimits(t *testing.T) {
	for _, d := range []int{0, -1, MaxDepth + 1} {
		if _, err := NewTree(d); err == nil {
			t.Fatalf("depth %d accepted", d)
		}
	}
	tree, _ := NewTree(2)
	var one fr.Element
	one.SetOne()
	if _, _, err := tree.Insert(fr.Element{}); !errors.Is(err, ErrZeroLeaf) {
		t.Fatalf("zero leaf: %v", err)
	}
	if _, _, err := tree.InsertBatch([]fr.Element{one, {}}); !errors.Is(err, ErrZeroLeaf) || tree.Len() != 0 {
		t.Fatalf("zero leaf in batch: %v, len %d", err, tree.Len())
	}
	before := tree.Root()
	if _, _, err := tree.InsertBatch([]fr.Element{one, one, one, one, one}); !errors.Is(err, ErrTreeFull) || tree.Root() != before {
		t.Fatalf("overfull batch: %v", err)
	}
	for range 4 {
		if _, _, err := tree.Insert(one); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := tree.Insert(one); !errors.Is(err, ErrTreeFull) {
		t.Fatalf("full tree: %v", err)
	}
	if _, err := BuildTree(2, []fr.Element{one, one, one, one, one}); !errors.Is(err, ErrTreeFull) {
		t.Fatalf("BuildTree overfull: %v", err)
	}
}

func TestRootHistory(t *testing.T) {
	h := NewRootHistory()
	var r1, r2, r3, unknown fr.Element
	r1.SetUint64(1)
	r2.SetUint64(2)
	r3.SetUint64(3)
	unknown.SetUint64(4)
	t0 := time.Unix(1_700_000_000, 0)
	const week = 604800 * time.Second
	if _, ok := h.Current(); ok {
		t.Fatal("empty history has a current root")
	}
	if err := h.Check(r1, t0, week); !errors.Is(err, ErrUnknownRoot) {
		t.Fatalf("empty history: %v", err)
	}
	h.Add(r1, t0)
	h.Add(r2, t0.Add(time.Hour))
	h.Add(r3, t0.Add(-30*24*time.Hour)) // external root mined a month ago
	cases := []struct {
		name   string
		root   fr.Element
		now    time.Time
		maxAge time.Duration
		want   error
	}{
		{"unknown", unknown, t0, week, ErrUnknownRoot},
		{"fresh", r1, t0, week, nil},
		{"exactly max_age", r1, t0.Add(week), week, nil},
		{"one second over", r1, t0.Add(week + time.Second), week, ErrRootTooOld},
		{"short max_age", r1, t0.Add(2 * time.Hour), time.Hour, ErrRootTooOld},
		{"superseded but young", r2, t0.Add(2 * time.Hour), time.Hour, nil},
		{"current is always valid", r3, t0.Add(365 * 24 * time.Hour), time.Hour, nil},
	}
	for _, tc := range cases {
		if err := h.Check(tc.root, tc.now, tc.maxAge); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// Re-adding keeps the creation time but makes the root current again.
	h.Add(r1, t0.Add(100*24*time.Hour))
	if cur, _ := h.Current(); cur != r1 {
		t.Fatal("re-added root is not current")
	}
	if err := h.Check(r2, t0.Add(2*week), week); !errors.Is(err, ErrRootTooOld) {
		t.Fatalf("superseded r2: %v", err)
	}
	h.Add(r2, t0)
	if err := h.Check(r1, t0.Add(week+time.Second), week); !errors.Is(err, ErrRootTooOld) {
		t.Fatalf("r1 kept its first time: %v", err)
	}
}

// fullLevels is a reference for the skipped levels: every level of the
// tree over leaves, hashed in full.
func fullLevels(depth int, leaves []fr.Element) [][]fr.Element {
	levels := [][]fr.Element{leaves}
	for level := range depth {
		below := levels[level]
		above := make([]fr.Element, (len(below)+1)/2)
		for p := range above {
			right := zeroHashes()[level]
			if 2*p+1 < len(below) {
				right = below[2*p+1]
			}
			above[p] = poseidon.HashV1(below[2*p], right)
		}
		levels = append(levels, above)
	}
	return levels
}

// TestSkippedLevels: a tree that keeps no levels 1 to skippedLevels gives
// the paths and roots of one holding every level, at every depth (including
// those whose root is at a skipped level) and after batches of every shape.
func TestSkippedLevels(t *testing.T) {
	for _, depth := range []int{1, 2, 3, 4, 6} {
		for n := range min(1<<depth, 37) + 1 {
			leaves := elements(1, n)
			full := fullLevels(depth, leaves)
			for _, batch := range []int{1, 3, 4, 7} {
				tree, _ := NewTree(depth)
				for start := 0; start < n; start += batch {
					if _, _, err := tree.InsertBatch(leaves[start:min(start+batch, n)]); err != nil {
						t.Fatal(err)
					}
				}
				for level := 1; level < depth && n > 0; level++ {
					if stored := tree.nodes[level] != nil; stored != (level > skippedLevels) {
						t.Fatalf("depth %d: level %d stored: %v", depth, level, stored)
					}
				}
				if n > 0 && tree.Root() != full[depth][0] {
					t.Fatalf("depth %d, %d leaves, batches of %d: root differs", depth, n, batch)
				}
				for i := range n {
					p, err := tree.Path(i)
					if err != nil {
						t.Fatal(err)
					}
					for level, j := 0, i; level < depth; level, j = level+1, j/2 {
						want := zeroHashes()[level]
						if j^1 < len(full[level]) {
							want = full[level][j^1]
						}
						if p.Siblings[level] != want {
							t.Fatalf("depth %d, %d leaves: path %d, level %d sibling differs", depth, n, i, level)
						}
					}
				}
				for k := 1; k <= n; k++ {
					if got, _ := tree.RootAfter(k); got != fullLevels(depth, leaves[:k])[depth][0] {
						t.Fatalf("depth %d: RootAfter(%d) differs", depth, k)
					}
				}
			}
		}
	}
}

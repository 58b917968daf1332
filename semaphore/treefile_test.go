package semaphore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// elements returns the field elements from, from+1, …, from+n−1.
func elements(from, n int) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		out[i].SetUint64(uint64(from + i))
	}
	return out
}

// TestSnapshotRoundTrip: a tree read back from its snapshot has the same
// leaves, root, paths and index, and grows like the original; more leaves
// than the rehashed top (1024 nodes) are covered.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1023, 3000} {
		tree, err := BuildTree(30, elements(1, n))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tree.Snapshot().MarshalBinary()
		back, err := ParseTree(b)
		if err != nil {
			t.Fatalf("%d leaves: %v", n, err)
		}
		if back.Len() != n || back.Root() != tree.Root() {
			t.Fatalf("%d leaves: read back %d leaves, another root", n, back.Len())
		}
		for i := 0; i < n; i += 97 {
			p, _ := back.Path(i)
			if j, ok := back.Find(p.Leaf); !ok || j != i || p.Root() != tree.Root() {
				t.Fatalf("%d leaves: leaf %d found at %d (%v), path root differs", n, i, j, ok)
			}
		}
		more := elements(n+1, 5)
		if _, r1, _ := tree.InsertBatch(more); func() fr.Element { _, r2, _ := back.InsertBatch(more); return r2 }() != r1 {
			t.Fatalf("%d leaves: the read-back tree grows to another root", n)
		}
	}
}

// TestSnapshotWhileInserting: a snapshot encodes the tree as it was when
// taken, however many inserts run while it is encoded (run with -race).
func TestSnapshotWhileInserting(t *testing.T) {
	tree, err := BuildTree(30, elements(1, 1000))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := tree.Snapshot().MarshalBinary()
	snap := tree.Snapshot()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			if _, _, err := tree.Insert(elements(2000+i, 1)[0]); err != nil {
				t.Error(err)
			}
		}
	})
	got, _ := snap.MarshalBinary()
	wg.Wait()
	if !bytes.Equal(got, want) {
		t.Fatal("the snapshot changed while the tree grew")
	}
}

// TestParseTreeRefuses: bytes that are not an encoded tree are refused
// with ErrBadTreeEncoding.
func TestParseTreeRefuses(t *testing.T) {
	tree, err := BuildTree(4, elements(1, 5))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := tree.Snapshot().MarshalBinary()
	leaf0 := treeHeaderSize
	root := len(good) - fr.Bytes
	for name, change := range map[string]func(b []byte) []byte{
		"empty":          func(b []byte) []byte { return nil },
		"other magic":    func(b []byte) []byte { b[0] ^= 1; return b },
		"depth 0":        func(b []byte) []byte { b[len(treeMagic)] = 0; return b },
		"depth 33":       func(b []byte) []byte { b[len(treeMagic)] = 33; return b },
		"too many":       func(b []byte) []byte { b[treeHeaderSize-1] = 17; return b },
		"truncated":      func(b []byte) []byte { return b[:len(b)-1] },
		"trailing":       func(b []byte) []byte { return append(b, 0) },
		"zero leaf":      func(b []byte) []byte { clear(b[leaf0 : leaf0+fr.Bytes]); return b },
		"non-canonical":  func(b []byte) []byte { copy(b[leaf0:], bytes.Repeat([]byte{0xff}, fr.Bytes)); return b },
		"root changed":   func(b []byte) []byte { b[root+fr.Bytes-1] ^= 1; return b },
		"leaf changed":   func(b []byte) []byte { b[leaf0+fr.Bytes-1] ^= 4; return b },
		"fewer leaves":   func(b []byte) []byte { b[treeHeaderSize-1] = 4; return b },
		"count overflow": func(b []byte) []byte { copy(b[len(treeMagic)+1:], bytes.Repeat([]byte{0xff}, 8)); return b },
	} {
		if _, err := ParseTree(change(bytes.Clone(good))); !errors.Is(err, ErrBadTreeEncoding) {
			t.Errorf("%s: %v, want ErrBadTreeEncoding", name, err)
		}
	}
}

// TestFind: every leaf is found at its first position across the index's
// growth, and a leaf not in the tree is not found.
func TestFind(t *testing.T) {
	tree, err := NewTree(30)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if _, _, err := tree.InsertBatch(elements(1+i%250, 1)); err != nil {
			t.Fatal(err)
		}
	}
	for i, leaf := range elements(1, 250) {
		if j, ok := tree.Find(leaf); !ok || j != i {
			t.Fatalf("leaf %d found at %d, %v", i, j, ok)
		}
	}
	if _, ok := tree.Find(elements(251, 1)[0]); ok {
		t.Fatal("found a leaf never inserted")
	}
}

// encodeV1 writes version 1 of the encoding, which held every level.
func encodeV1(depth int, leaves []fr.Element) []byte {
	b := append([]byte(treeMagicV1), byte(depth))
	b = binary.BigEndian.AppendUint64(b, uint64(len(leaves)))
	for _, level := range fullLevels(depth, leaves) {
		for _, e := range level {
			v := e.Bytes()
			b = append(b, v[:]...)
		}
	}
	return b
}

// TestParseTreeVersion1: checkpoints written before levels were skipped
// read back as the same tree, are written again in version 2 (24 bytes a
// leaf smaller), and a skipped level's node must still be a field element.
func TestParseTreeVersion1(t *testing.T) {
	for _, n := range []int{0, 1, 5, 3000} {
		leaves := elements(1, n)
		want, _ := BuildTree(30, leaves)
		v1 := encodeV1(30, leaves)
		got, err := ParseTree(v1)
		if err != nil {
			t.Fatalf("%d leaves: %v", n, err)
		}
		if got.Len() != n || got.Root() != want.Root() {
			t.Fatalf("%d leaves: another tree", n)
		}
		for i := 0; i < n; i += 101 {
			p, _ := got.Path(i)
			if q, _ := want.Path(i); !slices.Equal(p.Siblings, q.Siblings) {
				t.Fatalf("%d leaves: path %d differs", n, i)
			}
		}
		v2, _ := got.Snapshot().MarshalBinary()
		if again, _ := want.Snapshot().MarshalBinary(); !bytes.Equal(v2, again) || len(v1)-len(v2) != fr.Bytes*((n+1)/2+(n+3)/4) {
			t.Fatalf("%d leaves: version 2 is %d bytes, version 1 %d", n, len(v2), len(v1))
		}
	}
	bad := encodeV1(4, elements(1, 5))
	level1 := treeHeaderSize + 5*fr.Bytes
	copy(bad[level1:], bytes.Repeat([]byte{0xff}, fr.Bytes))
	if _, err := ParseTree(bad); !errors.Is(err, ErrBadTreeEncoding) {
		t.Fatalf("non-canonical level-1 node: %v", err)
	}
}

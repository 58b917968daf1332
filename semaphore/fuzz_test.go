package semaphore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"worldid/internal/vectors"
)

// requireTypedError fails unless err is an *Error with a known code.
func requireTypedError(t *testing.T, err error) {
	var e *Error
	if !errors.As(err, &e) || (e.Code() != CodeInvalidFormat && e.Code() != CodeInvalidProof) {
		t.Fatalf("untyped error %v", err)
	}
}

func FuzzParseProof(f *testing.F) {
	sf := loadSemaphoreVectors(f)
	for _, v := range sf.Vectors {
		for _, s := range proofForms(f, eight(f, packedWords(f, v.ProofPacked))) {
			f.Add(s)
		}
		if v.ProofABIHex != nil {
			f.Add(*v.ProofABIHex)
		}
	}
	f.Add(`"[[\"0x1\",\"0x2\"],[[\"3\",\"4\"],[\"5\",\"6\"]],[7,8]]"`)
	f.Add("[[1,2],[[3,4],[5,6]],[7,8]]")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProof(s)
		if err != nil {
			requireTypedError(t, err)
			return
		}
		again, err := ParseProof(p.ABIHex())
		if err != nil || again.Packed() != p.Packed() {
			t.Fatalf("ABI round trip: %v", err)
		}
		if c, err := p.Compress(); err == nil {
			d, err := DecompressProof(c)
			if err != nil || d.Packed() != p.Packed() {
				t.Fatalf("compression round trip: %v", err)
			}
		}
	})
}

func FuzzDecompressProof(f *testing.F) {
	sf := loadSemaphoreVectors(f)
	add := func(w []word) {
		f.Add(bytes.Join([][]byte{w[0][:], w[1][:], w[2][:], w[3][:]}, nil))
	}
	for _, v := range sf.Vectors {
		if v.ProofCompressed != nil {
			add(packedWords(f, v.ProofCompressed))
		}
	}
	add(decimalWords(f, sf.CompressionKAT.Compressed))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4*32 {
			return
		}
		var c [4][32]byte
		for i := range c {
			copy(c[i][:], b[32*i:])
		}
		p, err := DecompressProof(c)
		if err != nil {
			requireTypedError(t, err)
			return
		}
		// Decoding is injective: a decoded proof re-encodes to its input.
		again, err := p.Compress()
		if err != nil || again != c {
			t.Fatalf("Compress(Decompress(c)) = %x, %v", again, err)
		}
	})
}

func FuzzParseVerifyingKey(f *testing.F) {
	sf := loadSemaphoreVectors(f)
	for name, file := range sf.VKFiles {
		if _, err := strconv.Atoi(name); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(vectors.Dir(f), file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"IC":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		vk, err := ParseVerifyingKey(b)
		if err != nil {
			requireTypedError(t, err)
			return
		}
		out, err := json.Marshal(vk)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseVerifyingKey(out)
		if err != nil {
			t.Fatal(err)
		}
		if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatal("MarshalJSON round trip differs")
		}
	})
}

// FuzzParseTree: ParseTree never panics, and a tree it accepts encodes
// back to the same bytes (version 1: to bytes read back as the same tree),
// with every leaf found at its first position and its root consistent with
// a tree built from its leaves when the levels fit in the rehashed top (at
// most 1024 nodes). Seeds: encodings of trees of 0, 1, 2, 3 and 5 leaves
// at depths 1, 4 and 30, in both versions.
func FuzzParseTree(f *testing.F) {
	for _, depth := range []int{1, 4, 30} {
		for _, n := range []int{0, 1, 2, 3, 5} {
			if n > 1<<depth {
				continue
			}
			tree, err := BuildTree(depth, elements(1, n))
			if err != nil {
				f.Fatal(err)
			}
			b, _ := tree.Snapshot().MarshalBinary()
			f.Add(b)
			f.Add(encodeV1(depth, elements(1, n)))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tree, err := ParseTree(b)
		if err != nil {
			if !errors.Is(err, ErrBadTreeEncoding) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, _ := tree.Snapshot().MarshalBinary()
		if bytes.HasPrefix(b, []byte(treeMagicV1)) {
			// Version 1 is read, never written: it encodes to version 2.
			if back, err := ParseTree(again); err != nil || back.Root() != tree.Root() || !back.HasLeaves(0, tree.nodes[0]) {
				t.Fatalf("version 1 re-encoded does not read back: %v", err)
			}
		} else if !bytes.Equal(again, b) {
			t.Fatal("accepted bytes do not encode back to themselves")
		}
		leaves := tree.nodes[0]
		for i, leaf := range leaves {
			if j, ok := tree.Find(leaf); !ok || j > i || leaves[j] != leaf {
				t.Fatalf("leaf %d found at %d, %v", i, j, ok)
			}
		}
		if len(leaves) <= checkedTopNodes {
			built, err := BuildTree(tree.Depth(), leaves)
			if err != nil || built.Root() != tree.Root() {
				t.Fatalf("root differs from a tree built from the same leaves (%v)", err)
			}
		}
	})
}

package refresh

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/vectors"
)

// TestOneLeafRootVectors: the depth-30 one-leaf roots of poseidon1.json
// (doc/crypto.md §g "One-leaf root"), directly and through the cache.
func TestOneLeafRootVectors(t *testing.T) {
	f, n := vectors.LoadPoseidon1(t)
	cache := newRootCache(4)
	for _, v := range f.Semaphore.SingleLeafRoots {
		if v.Depth != treeDepth || v.LeafIndex != 0 {
			continue // the refresh proof uses only depth 30, index 0
		}
		leaf, err := field.ParseStrict(v.LeafHex)
		if err != nil {
			t.Fatal(err)
		}
		for _, get := range []func(fr.Element) (fr.Element, error){oneLeafRoot, cache.get, cache.get} {
			root, err := get(leaf)
			if err != nil || field.Format(&root) != v.RootHex {
				t.Errorf("root = %s (%v), want %s", field.Format(&root), err, v.RootHex)
			}
		}
		n.Inc()
	}
}

func TestRootCacheBounded(t *testing.T) {
	cache := newRootCache(3)
	for i := range 10 {
		var c fr.Element
		c.SetUint64(uint64(i + 1))
		got, err := cache.get(c)
		want, _ := oneLeafRoot(c)
		if err != nil || got != want {
			t.Fatalf("commitment %d: wrong root", i+1)
		}
		if len(cache.roots) > 3 {
			t.Fatalf("cache grew to %d", len(cache.roots))
		}
	}
	if _, err := cache.get(fr.Element{}); err == nil {
		t.Error("the zero commitment has a one-leaf root")
	}
}

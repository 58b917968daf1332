package poseidon

import (
	"fmt"
	"math/big"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	iden3 "github.com/iden3/go-iden3-crypto/poseidon"

	"worldid/internal/vectors"
)

func TestV1Parameters(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	if f.Parameters.RoundsF != v1FullRounds {
		t.Errorf("rounds_f = %d, want %d", f.Parameters.RoundsF, v1FullRounds)
	}
	for key, rp := range f.Parameters.RoundsPByWidth {
		c.Inc()
		w, err := strconv.Atoi(key)
		if err != nil {
			t.Fatalf("rounds_p_by_width key %q: %v", key, err)
		}
		if got := V1PartialRounds(w); got != rp {
			t.Errorf("V1PartialRounds(%d) = %d, want %d", w, got, rp)
		}
	}
}

// TestV1GrainCheck checks the Grain LFSR output against the published first,
// last and MDS values (doc/crypto.md §c).
func TestV1GrainCheck(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	for name, g := range f.Parameters.GrainCheck {
		t.Run(name, func(t *testing.T) {
			c.Inc()
			if g.Inputs != g.T-1 || g.RoundsF != v1FullRounds || g.RoundsP != V1PartialRounds(g.T) {
				t.Fatalf("parameters t=%d inputs=%d rf=%d rp=%d do not match the implementation", g.T, g.Inputs, g.RoundsF, g.RoundsP)
			}
			cs, m := V1Constants(g.T)
			if len(cs) != g.NRoundConstants {
				t.Fatalf("%d round constants, want %d", len(cs), g.NRoundConstants)
			}
			for i, want := range g.First4Hex {
				wantFE(t, fmt.Sprintf("C[%d]", i), cs[i], want)
			}
			wantFE(t, "C[last]", cs[len(cs)-1], g.LastHex)
			if len(m) != len(g.MDSHex) {
				t.Fatalf("MDS has %d rows, want %d", len(m), len(g.MDSHex))
			}
			for i, row := range g.MDSHex {
				if len(m[i]) != len(row) {
					t.Fatalf("MDS row %d has %d entries, want %d", i, len(m[i]), len(row))
				}
				for j, want := range row {
					wantFE(t, fmt.Sprintf("M[%d][%d]", i, j), m[i][j], want)
				}
			}
		})
	}
}

func TestV1KATs(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	for _, k := range f.KATs {
		t.Run(k.Name, func(t *testing.T) {
			c.Inc()
			got := HashV1(decFEs(t, k.Inputs)...)
			wantDec(t, "P", got, k.Output)
			wantFE(t, "P", got, k.OutputHex)
		})
	}
}

func TestV1SemaphoreIdentity(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	id := f.Semaphore.Identity
	c.Inc()
	secret := HashV1(decFE(t, id.IdentityNullifier), decFE(t, id.IdentityTrapdoor))
	wantDec(t, "secret", secret, id.Secret)
	wantFE(t, "secret", secret, id.SecretHex)
	commitment := HashV1(secret)
	wantDec(t, "commitment", commitment, id.Commitment)
	wantFE(t, "commitment", commitment, id.CommitmentHex)
}

func TestV1SemaphoreNullifierHash(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	for _, v := range f.Semaphore.NullifierHash {
		c.Inc()
		got := HashV1(hexFE(t, v.ExternalNullifierHex), decFE(t, v.IdentityNullifier))
		wantFE(t, "nullifierHash", got, v.OutputHex)
	}
}

// zeroHashes returns z[0..n] with z[0] = 0 and z[i+1] = P(z[i], z[i])
// (doc/crypto.md §g "Merkle tree").
func zeroHashes(n int) []fr.Element {
	z := make([]fr.Element, n+1)
	for i := range n {
		z[i+1] = HashV1(z[i], z[i])
	}
	return z
}

// foldPath hashes leaf up to the root: at level i, bit i of the index says
// whether the current node is the right (1) or left (0) input.
func foldPath(leaf fr.Element, index int, siblings []fr.Element) fr.Element {
	acc := leaf
	for i, s := range siblings {
		if index>>i&1 == 1 {
			acc = HashV1(s, acc)
		} else {
			acc = HashV1(acc, s)
		}
	}
	return acc
}

func TestV1SemaphoreZeroSubtreeHashes(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	want := f.Semaphore.ZeroSubtreeHashes.ValuesHex
	if len(want) == 0 {
		return
	}
	z := zeroHashes(len(want) - 1)
	for i, w := range want {
		c.Inc()
		wantFE(t, fmt.Sprintf("z[%d]", i), z[i], w)
	}
}

func TestV1SemaphoreSingleLeafRoots(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	for _, v := range f.Semaphore.SingleLeafRoots {
		c.Inc()
		z := zeroHashes(v.Depth)
		got := foldPath(hexFE(t, v.LeafHex), v.LeafIndex, z[:v.Depth])
		wantFE(t, fmt.Sprintf("root(depth %d)", v.Depth), got, v.RootHex)
	}
}

// treeLevels builds every level of a tree of the given depth whose first
// leaves are given and whose other leaves are 0; missing nodes are zero
// subtree hashes.
func treeLevels(leaves []fr.Element, depth int) [][]fr.Element {
	z := zeroHashes(depth)
	levels := [][]fr.Element{leaves}
	for d := range depth {
		cur := levels[d]
		next := make([]fr.Element, (len(cur)+1)/2)
		for i := range next {
			right := z[d]
			if 2*i+1 < len(cur) {
				right = cur[2*i+1]
			}
			next[i] = HashV1(cur[2*i], right)
		}
		levels = append(levels, next)
	}
	return levels
}

func TestV1SemaphoreTreeExample(t *testing.T) {
	f, c := vectors.LoadPoseidon1(t)
	ex := f.Semaphore.TreeExample
	leaves := hexFEs(t, ex.LeavesHex)
	levels := treeLevels(leaves, ex.Depth)
	c.Inc()
	wantFE(t, "root", levels[ex.Depth][0], ex.RootHex)
	z := zeroHashes(ex.Depth)
	for _, p := range ex.Proofs {
		c.Inc()
		if len(p.PathIndices) != ex.Depth || len(p.SiblingsHex) != ex.Depth {
			t.Fatalf("proof for leaf %d has %d path bits and %d siblings, want %d", p.LeafIndex, len(p.PathIndices), len(p.SiblingsHex), ex.Depth)
		}
		if p.LeafIndex >= len(leaves) {
			t.Fatalf("proof leaf index %d outside the %d leaves", p.LeafIndex, len(leaves))
		}
		wantFE(t, "proof leaf", leaves[p.LeafIndex], p.LeafHex)
		for d := range ex.Depth {
			if want := int(p.LeafIndex >> d & 1); p.PathIndices[d] != want {
				t.Errorf("leaf %d: path_indices[%d] = %d, want bit %d of the index = %d", p.LeafIndex, d, p.PathIndices[d], d, want)
			}
			sib := z[d]
			if i := (p.LeafIndex >> d) ^ 1; i < len(levels[d]) {
				sib = levels[d][i]
			}
			wantFE(t, fmt.Sprintf("leaf %d sibling %d", p.LeafIndex, d), sib, p.SiblingsHex[d])
		}
		got := foldPath(hexFE(t, p.LeafHex), p.LeafIndex, hexFEs(t, p.SiblingsHex))
		wantFE(t, fmt.Sprintf("root from leaf %d", p.LeafIndex), got, ex.RootHex)
	}
}

// TestV1AgainstIden3 compares every width with go-iden3-crypto's circomlib
// Poseidon, an independent implementation with pasted constants.
func TestV1AgainstIden3(t *testing.T) {
	for n := 1; n <= v1MaxWidth-1; n++ {
		for range 3 {
			in := randomFEs(n)
			bigs := make([]*big.Int, n)
			for i := range in {
				bigs[i] = in[i].BigInt(new(big.Int))
			}
			want, err := iden3.Hash(bigs)
			if err != nil {
				t.Fatal(err)
			}
			got := HashV1(in...)
			if got.BigInt(new(big.Int)).Cmp(want) != 0 {
				t.Fatalf("n=%d: HashV1 = %s, iden3 = %s", n, got.String(), want)
			}
		}
	}
}

func TestV1ConstantsAreCopies(t *testing.T) {
	c1, m1 := V1Constants(3)
	c1[0].SetOne()
	m1[0][0].SetOne()
	c2, m2 := V1Constants(3)
	if c2[0].IsOne() || m2[0][0].IsOne() {
		t.Fatal("V1Constants returned shared storage")
	}
}

func TestV1Panics(t *testing.T) {
	mustPanic(t, "HashV1()", func() { HashV1() })
	mustPanic(t, "HashV1(17 inputs)", func() { HashV1(make([]fr.Element, 17)...) })
	mustPanic(t, "V1Constants(1)", func() { V1Constants(1) })
	mustPanic(t, "V1Constants(18)", func() { V1Constants(18) })
	mustPanic(t, "V1PartialRounds(18)", func() { V1PartialRounds(18) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// referenceV1 is doc/crypto.md §c written literally over V1Constants: add
// constants, S-box (all slots in full rounds, slot 0 otherwise), s ← M·s.
func referenceV1(inputs []fr.Element) fr.Element {
	t := len(inputs) + 1
	c, m := V1Constants(t)
	rp := V1PartialRounds(t)
	s := append([]fr.Element{{}}, inputs...)
	for r := range v1FullRounds + rp {
		for i := range s {
			s[i].Add(&s[i], &c[r*t+i])
			if i == 0 || r < v1FullRounds/2 || r >= v1FullRounds/2+rp {
				var x2, x4 fr.Element
				x2.Square(&s[i])
				x4.Square(&x2)
				s[i].Mul(&s[i], &x4)
			}
		}
		next := make([]fr.Element, t)
		for i := range next {
			for j := range s {
				var p fr.Element
				p.Mul(&m[i][j], &s[j])
				next[i].Add(&next[i], &p)
			}
		}
		s = next
	}
	return s[0]
}

// TestV1ScheduleMatchesSpec checks the optimised schedule of every width
// against the literal rounds.
func TestV1ScheduleMatchesSpec(t *testing.T) {
	for n := 1; n <= v1MaxWidth-1; n++ {
		for _, in := range [][]fr.Element{make([]fr.Element, n), randomFEs(n), randomFEs(n)} {
			want := referenceV1(in)
			if got := HashV1(in...); !got.Equal(&want) {
				t.Fatalf("n=%d: HashV1 = %s, reference %s", n, got.String(), want.String())
			}
		}
	}
}

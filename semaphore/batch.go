package semaphore

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// BatchItem is one proof to verify in VerifyBatch.
type BatchItem struct {
	Key    *VerifyingKey
	Proof  *Proof
	Inputs PublicInputs
}

// VerifyBatch returns, for each item, the same answer as Verify.
//
// It checks a random linear combination of the verification equations with
// one final exponentiation: with fresh randomizers rᵢ read from rand (see
// randomizer for their form and the 2^-128 bound),
//
//	∏ e(rᵢ·Aᵢ, Bᵢ) · ∏_keys e(−(Σrᵢ)·α, β) · e(−Σrᵢ·vk_xᵢ, γ) · e(−Σrᵢ·Cᵢ, δ) = 1,
//
// where each key's sums run over its own items, so items may use different
// keys (three fixed-argument pairings per distinct key pointer). If the
// combination fails, the batch is split in halves and each half is checked
// again, down to single proofs checked with Verify: only a proof that Verify
// accepts is reported true, up to the 2^-128 chance that a random
// combination hides an invalid proof. If rand fails, every item is checked
// with Verify.
func VerifyBatch(items []BatchItem, rand io.Reader) []bool {
	generic := make([]batchItem, len(items))
	for i, it := range items {
		generic[i] = batchItem{it.Key, it.Proof, it.Inputs.scalars()}
	}
	return verifyBatch(generic, rand)
}

// batchItem is a proof of any statement: VerifyScalars' arguments.
type batchItem struct {
	key    *VerifyingKey
	proof  *Proof
	inputs []fr.Element
}

func verifyBatch(items []batchItem, rand io.Reader) []bool {
	ok := make([]bool, len(items))
	idx := make([]int, 0, len(items))
	for i := range items {
		if items[i].key.usable() && items[i].proof.usable() && len(items[i].inputs) == items[i].key.NPublic() {
			idx = append(idx, i)
		}
	}
	r, err := randomizers(rand, len(items))
	if err != nil {
		for _, i := range idx {
			ok[i] = VerifyScalars(items[i].key, items[i].proof, items[i].inputs)
		}
		return ok
	}
	bisect(items, idx, r, ok)
	return ok
}

// bisect marks ok[i] for the items idx, checking the whole set at once and
// halving it on failure.
func bisect(items []batchItem, idx []int, r []randomizer, ok []bool) {
	switch {
	case len(idx) == 0:
	case len(idx) == 1:
		it := &items[idx[0]]
		ok[idx[0]] = VerifyScalars(it.key, it.proof, it.inputs)
	case combinationHolds(items, idx, r):
		for _, i := range idx {
			ok[i] = true
		}
	default:
		half := len(idx) / 2
		bisect(items, idx[:half], r, ok)
		bisect(items, idx[half:], r, ok)
	}
}

// keyGroup accumulates the fixed-argument side of one key.
type keyGroup struct {
	vk     *VerifyingKey
	sumR   split            // Σ rᵢ
	inputs []fr.Element     // Σ rᵢ·inᵢⱼ for each public input j
	cs     []bn254.G1Affine // Cᵢ
	rs     []split          // rᵢ
}

// pairsPerChunk trades the E12 squarings each Miller loop pays (shared by
// the pairs of one chunk) against balancing work across cores.
const pairsPerChunk = 16

// combinationHolds evaluates the randomized equation over idx. Chunks of
// variable pairs (rᵢ·Aᵢ, Bᵢ) are taken by GOMAXPROCS goroutines; this
// goroutine computes the fixed-argument side first and then helps.
func combinationHolds(items []batchItem, idx []int, r []randomizer) bool {
	chunks := make([][]int, 0, len(idx)/pairsPerChunk+1)
	for rest := idx; len(rest) > 0; {
		n := min(pairsPerChunk, len(rest))
		chunks, rest = append(chunks, rest[:n]), rest[n:]
	}
	partial := make([]bn254.GT, len(chunks))
	failed := make([]bool, len(chunks))
	var next atomic.Int64
	work := func() {
		for c := int(next.Add(1) - 1); c < len(chunks); c = int(next.Add(1) - 1) {
			var err error
			partial[c], err = variableLoops(items, chunks[c], r)
			failed[c] = err != nil
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(chunks)) - 1 {
		wg.Go(work)
	}
	fixed, err := fixedLoops(groupByKey(items, idx, r))
	work()
	wg.Wait()
	if err != nil {
		return false
	}
	for c := range chunks {
		if failed[c] {
			return false
		}
		fixed.Mul(&fixed, &partial[c])
	}
	result := bn254.FinalExponentiation(&fixed)
	return result.IsOne()
}

// variableLoops is the multi-Miller loop of (rᵢ·Aᵢ, Bᵢ) over chunk.
func variableLoops(items []batchItem, chunk []int, r []randomizer) (bn254.GT, error) {
	as := make([]bn254.G1Affine, len(chunk))
	ks := make([]split, len(chunk))
	qs := make([]bn254.G2Affine, len(chunk))
	for k, i := range chunk {
		as[k], ks[k], qs[k] = items[i].proof.a, r[i].split(), items[i].proof.b
	}
	return bn254.MillerLoop(scale(as, ks), qs)
}

// groupByKey sums the randomized inputs and collects the C points per key,
// in order of first appearance.
func groupByKey(items []batchItem, idx []int, r []randomizer) []*keyGroup {
	var groups []*keyGroup
	byKey := make(map[*VerifyingKey]*keyGroup)
	for _, i := range idx {
		it := &items[i]
		g := byKey[it.key]
		if g == nil {
			g = &keyGroup{vk: it.key, inputs: make([]fr.Element, it.key.NPublic())}
			byKey[it.key] = g
			groups = append(groups, g)
		}
		rho := &r[i].rho
		g.sumR.add(r[i].split())
		in := it.inputs
		for j := range in {
			var t fr.Element
			t.Mul(rho, &in[j])
			g.inputs[j].Add(&g.inputs[j], &t)
		}
		g.cs = append(g.cs, it.proof.c)
		g.rs = append(g.rs, r[i].split())
	}
	return groups
}

// fixedLoops is the multi-Miller loop, over every key, of
// (−(Σr)·α, β), (−Σ r·vk_x, γ) and (−Σ r·C, δ).
func fixedLoops(groups []*keyGroup) (bn254.GT, error) {
	ps := make([]bn254.G1Affine, 0, 3*len(groups))
	lines := make([]fixedLines, 0, 3*len(groups))
	for _, g := range groups {
		scaled := scale([]bn254.G1Affine{g.vk.alpha, g.vk.ic[0]}, []split{g.sumR, g.sumR})
		var vkx bn254.G1Jac
		vkx.FromAffine(&scaled[1])
		g.vk.addInputs(&vkx, g.inputs)
		c := sumScaled(g.cs, g.rs)
		var negVkx, negC bn254.G1Affine
		negVkx.FromJacobian(&vkx).Neg(&negVkx)
		negC.FromJacobian(&c).Neg(&negC)
		ps = append(ps, *new(bn254.G1Affine).Neg(&scaled[0]), negVkx, negC)
		// Appending copies the lines: MillerLoopFixedQ writes into them.
		lines = append(lines, g.vk.betaLines, g.vk.gammaLines, g.vk.deltaLines)
	}
	return bn254.MillerLoopFixedQ(ps, lines)
}

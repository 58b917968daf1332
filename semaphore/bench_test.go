//go:build unix

package semaphore

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
)

// cpuMeter reports the process CPU time (user + system) per unit of work as
// "cpu-ns/<unit>". On a shared machine it is steadier than wall time, and
// with every core busy it is what bounds throughput.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b, cpuTime(b)} }

func (m cpuMeter) report(units int, unit string) {
	m.b.ReportMetric(float64(cpuTime(m.b)-m.start)/float64(m.b.N*units), "cpu-ns/"+unit)
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// depth30Case is the real World ID staging orb proof at depth 30.
func depth30Case(b *testing.B) (vectorCase, string) {
	f := loadSemaphoreVectors(b)
	for _, v := range f.Vectors {
		if v.Depth == 30 && v.ExpectValid != nil && *v.ExpectValid && v.ProofABIHex != nil {
			p, err := ParseProof(*v.ProofABIHex)
			if err != nil {
				b.Fatal(err)
			}
			in, err := v.publicInputs(b)
			if err != nil {
				b.Fatal(err)
			}
			return vectorCase{v.Name, mustPublishedB(b, 30), p, in, true}, *v.ProofABIHex
		}
	}
	b.Fatal("no valid depth-30 vector with proof_abi_hex")
	return vectorCase{}, ""
}

func mustPublishedB(b *testing.B, depth int) *VerifyingKey {
	vk, err := PublishedKey(depth)
	if err != nil {
		b.Fatal(err)
	}
	vk.icTable()
	return vk
}

// BenchmarkVerify: our single verification of a parsed proof.
func BenchmarkVerify(b *testing.B) {
	vc, _ := depth30Case(b)
	cpu := startCPU(b)
	for b.Loop() {
		if !Verify(vc.key, vc.proof, vc.inputs) {
			b.Fatal("rejected")
		}
	}
	cpu.report(1, "op")
}

// BenchmarkVerifyParallel: single verifications on every core at once, the
// throughput baseline for BenchmarkVerifyBatch64.
func BenchmarkVerifyParallel(b *testing.B) {
	vc, _ := depth30Case(b)
	cpu := startCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !Verify(vc.key, vc.proof, vc.inputs) {
				b.Error("rejected")
			}
		}
	})
	cpu.report(1, "op")
}

// BenchmarkParseAndVerify: from the ABI hex string, including every point
// and subgroup check, to the verdict.
func BenchmarkParseAndVerify(b *testing.B) {
	vc, abi := depth30Case(b)
	cpu := startCPU(b)
	for b.Loop() {
		p, err := ParseProof(abi)
		if err != nil || !Verify(vc.key, p, vc.inputs) {
			b.Fatal("rejected")
		}
	}
	cpu.report(1, "op")
}

// BenchmarkGnarkVerify: gnark groth16.Verify on the same proof and key
// (it includes its own subgroup checks).
func BenchmarkGnarkVerify(b *testing.B) {
	vc, _ := depth30Case(b)
	vk, proof, w := gnarkKey(b, vc.key), gnarkProof(vc.proof), gnarkWitness(&vc.inputs)
	cpu := startCPU(b)
	for b.Loop() {
		if err := groth16bn254.Verify(proof, vk, w); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(1, "op")
}

// BenchmarkVerifyBatch reports the CPU per proof of VerifyBatch for
// batch sizes from a lone pair of proofs to the batcher's default maximum.
func BenchmarkVerifyBatch(b *testing.B) {
	vc, _ := depth30Case(b)
	for _, n := range []int{2, 8, 16, 32, 64} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			items := make([]BatchItem, n)
			for i := range items {
				items[i] = BatchItem{vc.key, vc.proof, vc.inputs}
			}
			cpu := startCPU(b)
			for b.Loop() {
				for _, ok := range VerifyBatch(items, rand.Reader) {
					if !ok {
						b.Fatal("rejected")
					}
				}
			}
			cpu.report(n, "proof")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/proof")
		})
	}
}

// BenchmarkParseProof: decoding and point checks alone.
func BenchmarkParseProof(b *testing.B) {
	_, abi := depth30Case(b)
	cpu := startCPU(b)
	for b.Loop() {
		if _, err := ParseProof(abi); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(1, "op")
}

// BenchmarkTreeInsert: one leaf appended to a depth-30 tree, root updated
// (depth hashes).
func BenchmarkTreeInsert(b *testing.B) {
	tree, err := NewTree(30)
	if err != nil {
		b.Fatal(err)
	}
	var leaf fr.Element
	cpu := startCPU(b)
	for b.Loop() {
		leaf.SetUint64(uint64(tree.Len() + 1))
		if _, _, err := tree.Insert(leaf); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(1, "op")
}

// BenchmarkTreePath: a Merkle path in a depth-30 tree of 100,000 leaves
// (what /api/v1/inclusion-proof answers with).
func BenchmarkTreePath(b *testing.B) {
	leaves := make([]fr.Element, 100_000)
	for i := range leaves {
		leaves[i].SetUint64(uint64(i + 1))
	}
	tree, err := BuildTree(30, leaves)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		if _, err := tree.Path(i); err != nil {
			b.Fatal(err)
		}
		i = (i + 7919) % len(leaves)
	}
}

// BenchmarkTreeInsertBatch64 reports ns per leaf for batches of 64 leaves
// sharing one root update.
func BenchmarkTreeInsertBatch64(b *testing.B) {
	tree, err := NewTree(30)
	if err != nil {
		b.Fatal(err)
	}
	leaves := make([]fr.Element, 64)
	cpu := startCPU(b)
	for b.Loop() {
		for i := range leaves {
			leaves[i].SetUint64(uint64(tree.Len() + i + 1))
		}
		if _, _, err := tree.InsertBatch(leaves); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(len(leaves), "leaf")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(leaves)), "ns/leaf")
}

// BenchmarkScaleA: ρ·A for 16 proofs' A points (one chunk of a batch),
// split as a·A + b·φ(A) with width-4 NAF digits ("glv"), against gnark-crypto's ScalarMultiplication
// of a uniform 129-bit scalar 2^128 + x, the randomizer form before
// ("scalar"); per point.
func BenchmarkScaleA(b *testing.B) {
	vc, _ := depth30Case(b)
	rs, err := randomizers(rand.Reader, pairsPerChunk)
	if err != nil {
		b.Fatal(err)
	}
	as := make([]bn254.G1Affine, pairsPerChunk)
	ks := make([]split, pairsPerChunk)
	for i := range as {
		as[i], ks[i] = vc.proof.a, rs[i].split()
	}
	b.Run("glv", func(b *testing.B) {
		cpu := startCPU(b)
		for b.Loop() {
			scale(as, ks)
		}
		cpu.report(len(as), "point")
	})
	b.Run("scalar", func(b *testing.B) {
		old := make([]big.Int, len(as))
		for i := range old {
			x := make([]byte, 1+16)
			x[0] = 1
			rand.Read(x[1:])
			old[i].SetBytes(x)
		}
		cpu := startCPU(b)
		for b.Loop() {
			out := make([]bn254.G1Jac, len(as))
			for i := range as {
				out[i].FromAffine(&as[i])
				out[i].ScalarMultiplication(&out[i], &old[i])
			}
			bn254.BatchJacobianToAffineG1(out)
		}
		cpu.report(len(as), "point")
	})
}

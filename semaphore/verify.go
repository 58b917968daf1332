package semaphore

import (
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// PublicInputs are the four public signals of the Semaphore v3 circuit, in
// circuit order (doc/crypto.md §g "Public inputs"). An fr.Element is always
// below r; build one from untrusted bytes with NewPublicInputs, which
// rejects values ≥ r instead of reducing them.
type PublicInputs struct {
	Root, NullifierHash, SignalHash, ExternalNullifier fr.Element
}

// NewPublicInputs checks that each big-endian uint256 is below r
// (doc/crypto.md §g "Verification" step 2: never reduce).
func NewPublicInputs(root, nullifierHash, signalHash, externalNullifier [32]byte) (PublicInputs, error) {
	var in PublicInputs
	for _, v := range []struct {
		dst  *fr.Element
		src  [32]byte
		name string
	}{
		{&in.Root, root, "root"},
		{&in.NullifierHash, nullifierHash, "nullifier hash"},
		{&in.SignalHash, signalHash, "signal hash"},
		{&in.ExternalNullifier, externalNullifier, "external nullifier"},
	} {
		if err := v.dst.SetBytesCanonical(v.src[:]); err != nil {
			return PublicInputs{}, proofError("public input " + v.name + " is not below r")
		}
	}
	return in, nil
}

func (in *PublicInputs) scalars() []fr.Element {
	return []fr.Element{in.Root, in.NullifierHash, in.SignalHash, in.ExternalNullifier}
}

// Verify reports whether p is a valid proof of the Semaphore v3 statement
// for the public inputs under vk (doc/crypto.md §g "Verification" steps 3–4):
//
//	e(A, B) = e(α, β) · e(vk_x, γ) · e(C, δ),  vk_x = IC[0] + Σ inᵢ·IC[i+1].
//
// The point checks of step 1 were done when p was parsed. The Miller loop of
// (A, B) runs on a second goroutine while vk_x and the fixed-argument loops
// of γ and δ are computed.
func Verify(vk *VerifyingKey, p *Proof, in PublicInputs) bool {
	return VerifyScalars(vk, p, in.scalars())
}

// VerifyScalars is Verify for any statement: in holds vk.NPublic() public
// inputs in circuit order (a different count is false). fr.Elements are
// below r by construction; build them from untrusted bytes with
// SetBytesCanonical, never by reducing.
func VerifyScalars(vk *VerifyingKey, p *Proof, in []fr.Element) bool {
	if !vk.usable() || !p.usable() || len(in) != vk.NPublic() {
		return false
	}
	var variable bn254.GT
	done := make(chan error, 1)
	go func() {
		var err error
		variable, err = bn254.MillerLoop([]bn254.G1Affine{p.a}, []bn254.G2Affine{p.b})
		done <- err
	}()

	var vkx bn254.G1Jac
	vkx.FromAffine(&vk.ic[0])
	vk.addInputs(&vkx, in)
	var negVkx, negC bn254.G1Affine
	negVkx.FromJacobian(&vkx).Neg(&negVkx)
	negC.Neg(&p.c)
	// The slice literal copies the lines: MillerLoopFixedQ writes into them.
	fixed, err := bn254.MillerLoopFixedQ([]bn254.G1Affine{negVkx, negC}, []fixedLines{vk.gammaLines, vk.deltaLines})
	if errV := <-done; err != nil || errV != nil {
		return false
	}
	fixed.Mul(&fixed, &variable)
	result := bn254.FinalExponentiation(&fixed)
	return result.Equal(&vk.alphaBeta)
}

// usable is false for nil and for the zero Proof, which no parser returns.
func (p *Proof) usable() bool {
	return p != nil && !p.a.IsInfinity() && !p.b.IsInfinity() && !p.c.IsInfinity()
}

// usable is false for nil and for the zero VerifyingKey.
func (vk *VerifyingKey) usable() bool {
	return vk != nil && !vk.alpha.IsInfinity() && len(vk.ic) >= 2
}

// Fixed-base table for vk_x: for input j, window w (byte w of the scalar,
// least significant first) and digit d in 1..255, the entry
// d·2^(8w)·IC[j+1]. vk_x then costs at most 128 mixed additions instead of
// four full scalar multiplications. Inputs are public, so the lookups need
// not be constant time.
const (
	tableWindows = fr.Bytes
	tableDigits  = 255
)

// icTable builds the table on first use (about 0.5 MiB per public input
// of a key in use: 2 MiB for Semaphore v3, 7.5 MiB for 15 inputs).
func (vk *VerifyingKey) icTable() []bn254.G1Affine {
	vk.tableOnce.Do(func() {
		n := vk.NPublic()
		jac := make([]bn254.G1Jac, 0, n*tableWindows*tableDigits)
		for j := 1; j <= n; j++ {
			base := vk.ic[j]
			for range tableWindows {
				var acc bn254.G1Jac
				for range tableDigits {
					acc.AddMixed(&base)
					jac = append(jac, acc)
				}
				acc.AddMixed(&base) // 256·base is the next window's base
				base.FromJacobian(&acc)
			}
		}
		vk.table = bn254.BatchJacobianToAffineG1(jac)
	})
	return vk.table
}

// addInputs adds Σ s[j]·IC[j+1] to acc.
func (vk *VerifyingKey) addInputs(acc *bn254.G1Jac, s []fr.Element) {
	table := vk.icTable()
	for j := range s {
		b := s[j].Bytes()
		for w := range tableWindows {
			if d := b[fr.Bytes-1-w]; d != 0 {
				acc.AddMixed(&table[(j*tableWindows+w)*tableDigits+int(d)-1])
			}
		}
	}
}

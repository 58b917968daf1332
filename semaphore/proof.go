package semaphore

import (
	"encoding/hex"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
)

// Proof is a Groth16 proof (A, B, C) over BN254. A Proof obtained from this
// package has passed every point check of doc/crypto.md §g "Verification" step 1:
// coordinates < q, A and C on the curve, B on the twist and in the order-r
// subgroup, none at infinity. The zero Proof is not valid.
type Proof struct {
	a, c bn254.G1Affine
	b    bn254.G2Affine
}

// NewProof makes a Proof from its points (a prover's output), running the
// point checks of doc/crypto.md §g "Verification" step 1.
func NewProof(a *bn254.G1Affine, b *bn254.G2Affine, c *bn254.G1Affine) (*Proof, error) {
	if err := checkG1(a, "A"); err != nil {
		return nil, err
	}
	if err := checkG2(b, "B"); err != nil {
		return nil, err
	}
	if err := checkG1(c, "C"); err != nil {
		return nil, err
	}
	return &Proof{a: *a, b: *b, c: *c}, nil
}

// checkG1 requires a finite point on y² = x³ + 3. G1 has cofactor 1, so
// that is also subgroup membership.
func checkG1(p *bn254.G1Affine, name string) error {
	if p.IsInfinity() {
		return proofError(name + " is the point at infinity")
	}
	if !p.IsOnCurve() {
		return proofError(name + " is not on the curve y² = x³ + 3")
	}
	return nil
}

// checkG2 requires a finite point on the twist in the order-r subgroup; the
// twist has a large cofactor, so the subgroup check is essential.
func checkG2(p *bn254.G2Affine, name string) error {
	if p.IsInfinity() {
		return proofError(name + " is the point at infinity")
	}
	if !p.IsOnCurve() {
		return proofError(name + " is not on the twist curve")
	}
	if !p.IsInSubGroup() {
		return proofError(name + " is not in the order-r subgroup of G2")
	}
	return nil
}

// ProofFromPacked decodes the eight packed words
// [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y] (EVM order, imaginary
// part first). When words 4–7 are zero, words 0–3 are a compressed proof and
// are decompressed (doc/crypto.md §g "Padded compressed form").
func ProofFromPacked(w [8][32]byte) (*Proof, error) {
	if w[4] == (word{}) && w[5] == (word{}) && w[6] == (word{}) && w[7] == (word{}) {
		return DecompressProof([4][32]byte(w[:4]))
	}
	var a, c bn254.G1Affine
	var b bn254.G2Affine
	coords := []struct {
		dst  *fp.Element
		src  word
		name string
	}{
		{&a.X, w[0], "A.x"}, {&a.Y, w[1], "A.y"},
		{&b.X.A1, w[2], "B.x.im"}, {&b.X.A0, w[3], "B.x.re"},
		{&b.Y.A1, w[4], "B.y.im"}, {&b.Y.A0, w[5], "B.y.re"},
		{&c.X, w[6], "C.x"}, {&c.Y, w[7], "C.y"},
	}
	for _, k := range coords {
		if err := setCoordinate(k.dst, k.src, k.name); err != nil {
			return nil, err
		}
	}
	return NewProof(&a, &b, &c)
}

// setCoordinate reads a base-field coordinate, rejecting values ≥ q instead
// of reducing them.
func setCoordinate(dst *fp.Element, w word, name string) error {
	if err := dst.SetBytesCanonical(w[:]); err != nil {
		return proofError(name + " is not below q")
	}
	return nil
}

// Packed returns [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y], the
// uint256[8] that World ID clients and contracts use.
func (p *Proof) Packed() [8][32]byte {
	return [8][32]byte{
		p.a.X.Bytes(), p.a.Y.Bytes(),
		p.b.X.A1.Bytes(), p.b.X.A0.Bytes(),
		p.b.Y.A1.Bytes(), p.b.Y.A0.Bytes(),
		p.c.X.Bytes(), p.c.Y.Bytes(),
	}
}

// ABIHex returns "0x" and the 512 lowercase hex digits of Packed.
func (p *Proof) ABIHex() string {
	w := p.Packed()
	buf := make([]byte, 0, 8*32)
	for i := range w {
		buf = append(buf, w[i][:]...)
	}
	return "0x" + hex.EncodeToString(buf)
}

package semaphore

import (
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
)

// twistB is the twist constant 3/(9+i) = 27/82 − (3/82)·i of doc/crypto.md §g
// "Padded compressed form", derived here rather than pasted.
var twistB = func() bn254.E2 {
	var inv82 fp.Element
	inv82.SetUint64(82)
	inv82.Inverse(&inv82)
	var b bn254.E2
	b.A0.SetUint64(27)
	b.A0.Mul(&b.A0, &inv82)
	b.A1.SetUint64(3)
	b.A1.Mul(&b.A1, &inv82).Neg(&b.A1)
	return b
}()

// errNotCompressible is returned for points that are not in the image of the
// compression rules (including the zero Proof).
var errNotCompressible = errors.New("semaphore: point cannot be compressed")

// DecompressProof decodes the compressed words [cA, B.x.im, cB.x.re, cC]
// (doc/crypto.md §g "Padded compressed form") and runs the full point checks.
func DecompressProof(c [4][32]byte) (*Proof, error) {
	a, err := decompressG1(c[0], "A")
	if err != nil {
		return nil, err
	}
	b, err := decompressG2(c[2], c[1])
	if err != nil {
		return nil, err
	}
	cc, err := decompressG1(c[3], "C")
	if err != nil {
		return nil, err
	}
	return NewProof(&a, &b, &cc)
}

// Compress returns [cA, B.x.im, cB.x.re, cC], the inverse of DecompressProof.
// It fails only for the zero Proof or the rare point the rules cannot encode.
func (p *Proof) Compress() ([4][32]byte, error) {
	ca, err := compressG1(&p.a)
	if err != nil {
		return [4][32]byte{}, err
	}
	xIm, cbRe, err := compressG2(&p.b)
	if err != nil {
		return [4][32]byte{}, err
	}
	cc, err := compressG1(&p.c)
	if err != nil {
		return [4][32]byte{}, err
	}
	return [4][32]byte{ca, xIm, cbRe, cc}, nil
}

// sqrtFp is a^((q+1)/4), accepted only if it squares back to a. gnark-crypto's
// fp.Sqrt computes exactly this root (q ≡ 3 mod 4).
func sqrtFp(a *fp.Element) (fp.Element, bool) {
	var s fp.Element
	if s.Sqrt(a) == nil {
		return s, false
	}
	return s, true
}

// g1Y returns sqrt(x³ + 3).
func g1Y(x *fp.Element) (fp.Element, bool) {
	var rhs, three fp.Element
	three.SetUint64(3)
	rhs.Square(x).Mul(&rhs, x).Add(&rhs, &three)
	return sqrtFp(&rhs)
}

// decompressG1: x = c >> 1, y = sqrt(x³+3), negated when c is odd.
func decompressG1(c word, name string) (bn254.G1Affine, error) {
	var p bn254.G1Affine
	if c == (word{}) {
		return p, proofError(name + " is the point at infinity")
	}
	if err := setCoordinate(&p.X, shiftRight(c, 1), name+".x"); err != nil {
		return p, err
	}
	y, ok := g1Y(&p.X)
	if !ok {
		return p, proofError(name + " does not decompress to a curve point")
	}
	p.Y = y
	if c[31]&1 == 1 {
		p.Y.Neg(&p.Y)
	}
	return p, nil
}

// compressG1: c = (x << 1) | b, b = 1 iff y is the negated root.
func compressG1(p *bn254.G1Affine) (word, error) {
	y, ok := g1Y(&p.X)
	if !ok || p.IsInfinity() {
		return word{}, errNotCompressible
	}
	c := shiftLeft(p.X.Bytes(), 1)
	if !p.Y.Equal(&y) {
		if !p.Y.Equal(y.Neg(&y)) {
			return word{}, errNotCompressible
		}
		c[31] |= 1
	}
	return c, nil
}

// twistRHS is a = x³ + 3/(9+i) as (a0, a1).
func twistRHS(x *bn254.E2) bn254.E2 {
	var a bn254.E2
	a.Square(x).Mul(&a, x).Add(&a, &twistB)
	return a
}

// twistNormRoot is d = sqrt(a0² + a1²), step 2 of the G2 decompression.
func twistNormRoot(a *bn254.E2) (fp.Element, bool) {
	var norm, t fp.Element
	norm.Square(&a.A0)
	t.Square(&a.A1)
	norm.Add(&norm, &t)
	return sqrtFp(&norm)
}

// g2Y runs steps 2–4 of the G2 decompression: the root y of y² = a that the
// hint selects, and whether it squares back to a.
func g2Y(a *bn254.E2, d fp.Element, hint bool) (bn254.E2, bool) {
	var y bn254.E2
	if hint {
		d.Neg(&d)
	}
	var half fp.Element
	half.Add(&a.A0, &d).Halve()
	yRe, ok := sqrtFp(&half)
	if !ok {
		return y, false
	}
	var twoYRe fp.Element
	twoYRe.Double(&yRe)
	y.A0 = yRe
	y.A1.Inverse(&twoYRe).Mul(&y.A1, &a.A1)
	var check bn254.E2
	check.Square(&y)
	return y, check.Equal(a)
}

// decompressG2: neg = bit 0, hint = bit 1, x.re = cBre >> 2, x.im = w1.
func decompressG2(cBre, xIm word) (bn254.G2Affine, error) {
	var p bn254.G2Affine
	if err := setCoordinate(&p.X.A0, shiftRight(cBre, 2), "B.x.re"); err != nil {
		return p, err
	}
	if err := setCoordinate(&p.X.A1, xIm, "B.x.im"); err != nil {
		return p, err
	}
	a := twistRHS(&p.X)
	d, ok := twistNormRoot(&a)
	var y bn254.E2
	if ok {
		y, ok = g2Y(&a, d, cBre[31]&2 != 0)
	}
	if !ok {
		return p, proofError("B does not decompress to a twist point")
	}
	p.Y = y
	if cBre[31]&1 == 1 {
		p.Y.Neg(&p.Y)
	}
	return p, nil
}

// compressG2: hint = 1 iff (a0 + d)/2 is not a square for the un-negated d;
// neg = 1 iff y is the negation of the root that hint yields.
func compressG2(p *bn254.G2Affine) (xIm, cBre word, err error) {
	a := twistRHS(&p.X)
	d, ok := twistNormRoot(&a)
	if !ok || p.IsInfinity() {
		return xIm, cBre, errNotCompressible
	}
	var half fp.Element
	half.Add(&a.A0, &d).Halve()
	_, isSquare := sqrtFp(&half)
	hint := !isSquare
	y, ok := g2Y(&a, d, hint)
	if !ok {
		return xIm, cBre, errNotCompressible
	}
	cBre = shiftLeft(p.X.A0.Bytes(), 2)
	if hint {
		cBre[31] |= 2
	}
	if !p.Y.Equal(&y) {
		if !p.Y.Equal(y.Neg(&y)) {
			return word{}, word{}, errNotCompressible
		}
		cBre[31] |= 1
	}
	return p.X.A1.Bytes(), cBre, nil
}

// shiftRight returns w >> n for 0 < n < 8.
func shiftRight(w word, n uint) word {
	var r word
	for i := 31; i >= 0; i-- {
		r[i] = w[i] >> n
		if i > 0 {
			r[i] |= w[i-1] << (8 - n)
		}
	}
	return r
}

// shiftLeft returns w << n for 0 < n < 8; callers pass values below 2^254.
func shiftLeft(w word, n uint) word {
	var r word
	for i := range 32 {
		r[i] = w[i] << n
		if i < 31 {
			r[i] |= w[i+1] >> (8 - n)
		}
	}
	return r
}

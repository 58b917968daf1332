package babyjub

import (
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// pointSize is the length of a compressed point (doc/crypto.md §d).
const pointSize = 32

// Decoding failures, one per rule of doc/crypto.md §d "Strict decoding".
var (
	errPointLength       = errors.New("point encoding is not 32 bytes")                                     // doc/crypto.md §d rule 1
	errPointYNotCanon    = errors.New("point y is not canonical: y ≥ p or bit 6 of byte 31 set")            // doc/crypto.md §d rule 1
	errPointDenominator  = errors.New("point y makes a − d·y² zero")                                        // doc/crypto.md §d rule 2
	errPointNotOnCurve   = errors.New("point y has no x on the curve: (1 − y²)/(a − d·y²) is not a square") // doc/crypto.md §d rule 2
	errPointNegativeZero = errors.New("point encodes x = 0 with the sign bit set")                          // doc/crypto.md §d rule 3
	errPointNotInGroup   = errors.New("point is not in the prime-order subgroup")                           // doc/crypto.md §d rule 4
)

// signFlag is bit 7 of byte 31 of a compressed point.
const signFlag = 0x80

// compress returns LE32(y) with bit 7 of byte 31 set iff x > (p−1)/2
// (doc/crypto.md §d "Compressed point", arkworks format).
func (a *affinePoint) compress() [pointSize]byte {
	var b [pointSize]byte
	fr.LittleEndian.PutElement(&b, a.y)
	if a.x.LexicographicallyLargest() {
		b[31] |= signFlag
	}
	return b
}

// decompress applies doc/crypto.md §d strict decoding rules 1–3. The point is
// on the curve; rule 4 (subgroup) is the caller's, because with the point's
// splitTable it is much cheaper (see inSubgroup).
func decompress(b []byte) (affinePoint, error) {
	if len(b) != pointSize {
		return affinePoint{}, errPointLength
	}
	var buf [pointSize]byte
	copy(buf[:], b)
	negative := buf[31]&signFlag != 0
	buf[31] &^= signFlag
	var a affinePoint
	var err error
	if a.y, err = fr.LittleEndian.Element(&buf); err != nil {
		return affinePoint{}, errPointYNotCanon
	}
	// Rule 2: x² = u = (1 − y²) / (a − d·y²).
	var y2, num, den, u fr.Element
	y2.Square(&a.y)
	num.Sub(&one, &y2)
	den.Mul(&curveD, &y2)
	den.Sub(&curveA, &den)
	if den.IsZero() { // unreachable here (a/d is not a square), but a MUST
		return affinePoint{}, errPointDenominator
	}
	u.Div(&num, &den)
	if a.x.Sqrt(&u) == nil {
		return affinePoint{}, errPointNotOnCurve
	}
	// Rule 3: x0 is the root ≤ (p−1)/2; the flag selects p − x0.
	if a.x.LexicographicallyLargest() {
		a.x.Neg(&a.x)
	}
	if negative {
		if a.x.IsZero() {
			return affinePoint{}, errPointNegativeZero
		}
		a.x.Neg(&a.x)
	}
	return a, nil
}

// inSubgroup checks L·P = O (doc/crypto.md §d rule 4) using P's splitTable.
func inSubgroup(t *splitTable) bool {
	lp := vartimeMultiExp((*[4]uint64)(&orderL), t, &[4]uint64{})
	return lp.isIdentity()
}

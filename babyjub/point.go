package babyjub

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Curve constants (crypto.md §d; circomlib / EIP-2494 form):
// a·x² + y² = 1 + d·x²·y² over F_p with a = 168700, d = 168696.
// a is a square and d is not, so the addition law is complete.
var (
	curveA = fr.NewElement(168700)
	curveD = fr.NewElement(168696)
)

// generator is circomlib's Base8 (crypto.md §d), the generator of the
// order-L subgroup:
// x = 5299619240641551281634865583518297030282874472190772894086521144482721001553
// y = 16950150798460657717958625567821834550301663161624707787222815936182638968203
var generator = affinePoint{
	x: elementFromCanonical([4]uint64{0x2893f3f6bb957051, 0x2ab8d8010534e0b6, 0x4eacb2e09d6277c1, 0x0bb77a6ad63e739b}),
	y: elementFromCanonical([4]uint64{0x4b3c257a872d7d8b, 0xfce0051fb9e13377, 0x25572e1cd16bf9ed, 0x25797203f7a0b249}),
}

// elementFromCanonical converts little-endian limbs of a value < p into
// Montgomery form.
func elementFromCanonical(limbs [4]uint64) fr.Element {
	var b [fr.Bytes]byte
	for i, w := range limbs {
		for j := 0; j < 8; j++ {
			b[8*i+j] = byte(w >> (8 * j))
		}
	}
	e, err := fr.LittleEndian.Element(&b)
	if err != nil {
		panic("babyjub: constant is not a canonical field element")
	}
	return e
}

// affinePoint is a curve point (x, y).
type affinePoint struct {
	x, y fr.Element
}

// point is a curve point in extended coordinates (X:Y:Z:T) with
// x = X/Z, y = Y/Z and x·y = T/Z (Hisil–Wong–Carter–Dawson 2008).
type point struct {
	x, y, z, t fr.Element
}

// projPoint is (X:Y:Z) without T; doubling needs nothing more, so chains of
// doublings skip computing T.
type projPoint struct {
	x, y, z fr.Element
}

// completedPoint holds the intermediate (E, F, G, H) of an addition or
// doubling: x = E/G and y = H/F. Finishing to extended costs 4M, to
// projective 3M.
type completedPoint struct {
	e, f, g, h fr.Element
}

// cachedPoint is a point prepared as the second operand of an addition:
// (X, Y, Z, d·T).
type cachedPoint struct {
	x, y, z, dt fr.Element
}

// affineCached is an affine point prepared as the second operand of an
// addition: (x, y, d·x·y); it saves the Z multiplication.
type affineCached struct {
	x, y, dt fr.Element
}

func (p *point) setIdentity() *point {
	p.x.SetZero()
	p.y.SetOne()
	p.z.SetOne()
	p.t.SetZero()
	return p
}

func (p *point) fromAffine(a *affinePoint) *point {
	p.x = a.x
	p.y = a.y
	p.z.SetOne()
	p.t.Mul(&a.x, &a.y)
	return p
}

func (p *point) fromCompleted(c *completedPoint) *point {
	p.x.Mul(&c.e, &c.f)
	p.y.Mul(&c.g, &c.h)
	p.z.Mul(&c.f, &c.g)
	p.t.Mul(&c.e, &c.h)
	return p
}

func (p *projPoint) fromCompleted(c *completedPoint) *projPoint {
	p.x.Mul(&c.e, &c.f)
	p.y.Mul(&c.g, &c.h)
	p.z.Mul(&c.f, &c.g)
	return p
}

func (p *projPoint) fromPoint(q *point) *projPoint {
	p.x, p.y, p.z = q.x, q.y, q.z
	return p
}

func (c *cachedPoint) fromPoint(p *point) *cachedPoint {
	c.x, c.y, c.z = p.x, p.y, p.z
	c.dt.Mul(&p.t, &curveD)
	return c
}

func (c *affineCached) fromAffine(a *affinePoint) *affineCached {
	c.x, c.y = a.x, a.y
	c.dt.Mul(&a.x, &a.y)
	c.dt.Mul(&c.dt, &curveD)
	return c
}

// affine returns (X/Z, Y/Z) using gnark-crypto's variable-time inversion; the
// point must be public.
func (p *point) affine() affinePoint {
	var zInv fr.Element
	zInv.Inverse(&p.z)
	return p.affineWithInverse(&zInv)
}

// blindSize is the number of secret bytes that blind one inversion.
const blindSize = 32

// affineBlinded returns (X/Z, Y/Z) for a point derived from a secret.
// gnark-crypto's inversion is fast but variable time, so it inverts Z·β for
// a secret β read from blind (uniform below 2^253 < p, independent of Z)
// and multiplies by β again: the timing depends only on Z·β, which is
// uniform and reveals nothing about Z.
func (p *point) affineBlinded(blind *[blindSize]byte) affinePoint {
	b := *blind
	b[31] &= 0x1f
	beta, err := fr.LittleEndian.Element(&b)
	if err != nil || beta.IsZero() { // impossible, resp. probability 2^-253
		beta.SetOne()
	}
	var zb, zInv fr.Element
	zb.Mul(&p.z, &beta)
	zInv.Inverse(&zb)
	zInv.Mul(&zInv, &beta)
	return p.affineWithInverse(&zInv)
}

func (p *point) affineWithInverse(zInv *fr.Element) affinePoint {
	var a affinePoint
	a.x.Mul(&p.x, zInv)
	a.y.Mul(&p.y, zInv)
	return a
}

// add sets c = p + q (add-2008-hwcd, complete for this curve).
func (c *completedPoint) add(p *point, q *cachedPoint) *completedPoint {
	var a, b, cc, d fr.Element
	a.Mul(&p.x, &q.x)
	b.Mul(&p.y, &q.y)
	cc.Mul(&p.t, &q.dt)
	d.Mul(&p.z, &q.z)
	c.finishAdd(p, &q.x, &q.y, &a, &b, &cc, &d)
	return c
}

// addAffine sets c = p + q for an affine second operand (Z2 = 1).
func (c *completedPoint) addAffine(p *point, q *affineCached) *completedPoint {
	var a, b, cc fr.Element
	a.Mul(&p.x, &q.x)
	b.Mul(&p.y, &q.y)
	cc.Mul(&p.t, &q.dt)
	c.finishAdd(p, &q.x, &q.y, &a, &b, &cc, &p.z)
	return c
}

// finishAdd completes add-2008-hwcd from A = X1·X2, B = Y1·Y2,
// C = T1·d·T2 and D = Z1·Z2.
func (c *completedPoint) finishAdd(p *point, qx, qy, a, b, cc, d *fr.Element) {
	var s1, s2 fr.Element
	feAdd(&s1, &p.x, &p.y)
	feAdd(&s2, qx, qy)
	c.e.Mul(&s1, &s2)
	feSub(&c.e, &c.e, a)
	feSub(&c.e, &c.e, b)
	feSub(&c.f, d, cc)
	feAdd(&c.g, d, cc)
	var aa fr.Element
	aa.Mul(a, &curveA)
	feSub(&c.h, b, &aa)
}

// double sets c = 2p (dbl-2008-hwcd); T is not needed.
func (c *completedPoint) double(p *projPoint) *completedPoint {
	var a, b, cc, d, s fr.Element
	a.Square(&p.x)
	b.Square(&p.y)
	cc.Square(&p.z)
	feAdd(&cc, &cc, &cc)
	d.Mul(&a, &curveA)
	feAdd(&s, &p.x, &p.y)
	c.e.Square(&s)
	feSub(&c.e, &c.e, &a)
	feSub(&c.e, &c.e, &b)
	feAdd(&c.g, &d, &b)
	feSub(&c.f, &c.g, &cc)
	feSub(&c.h, &d, &b)
	return c
}

// negate sets c = −c: −(x, y) = (−x, y), so X and d·T change sign.
func (c *cachedPoint) negate() *cachedPoint {
	feNeg(&c.x, &c.x)
	feNeg(&c.dt, &c.dt)
	return c
}

func (c *affineCached) negate() *affineCached {
	feNeg(&c.x, &c.x)
	feNeg(&c.dt, &c.dt)
	return c
}

func moveElement(dst, src *fr.Element, mask uint64) {
	dst[0] ^= mask & (dst[0] ^ src[0])
	dst[1] ^= mask & (dst[1] ^ src[1])
	dst[2] ^= mask & (dst[2] ^ src[2])
	dst[3] ^= mask & (dst[3] ^ src[3])
}

// isIdentity reports whether p is (0, 1) projectively.
func (p *point) isIdentity() bool {
	return p.x.IsZero() && p.y.Equal(&p.z)
}

// setIdentity sets c to the identity: E = 0, F = G = H = 1.
func (c *completedPoint) setIdentity() *completedPoint {
	c.e.SetZero()
	c.f.SetOne()
	c.g.SetOne()
	c.h.SetOne()
	return c
}

// isOnCurve checks a·x² + y² = 1 + d·x²·y².
func (a *affinePoint) isOnCurve() bool {
	var x2, y2, lhs, rhs fr.Element
	x2.Square(&a.x)
	y2.Square(&a.y)
	lhs.Mul(&x2, &curveA)
	lhs.Add(&lhs, &y2)
	rhs.Mul(&x2, &y2)
	rhs.Mul(&rhs, &curveD)
	rhs.Add(&rhs, &one)
	return lhs.Equal(&rhs)
}

// equalAffine reports whether p = (a.x, a.y), comparing X = x·Z and Y = y·Z.
func (p *point) equalAffine(a *affinePoint) bool {
	var x, y fr.Element
	x.Mul(&a.x, &p.z)
	y.Mul(&a.y, &p.z)
	return x.Equal(&p.x) && y.Equal(&p.y)
}

func (a *affinePoint) isIdentity() bool {
	return a.x.IsZero() && a.y.IsOne()
}

func (a *affinePoint) equal(b *affinePoint) bool {
	return a.x.Equal(&b.x) && a.y.Equal(&b.y)
}

var one = fr.One()

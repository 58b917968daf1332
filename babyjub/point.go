package babyjub

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Curve constants (doc/crypto.md §d; circomlib / EIP-2494 form):
// a·x² + y² = 1 + d·x²·y² over F_p with a = 168700, d = 168696.
// a is a square and d is not, so the addition law is complete.
var (
	curveA = fr.NewElement(168700)
	curveD = fr.NewElement(168696)
)

// generator is circomlib's Base8 (doc/crypto.md §d), the generator of the
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

// affinePoint is a curve point (x, y) in the circom form of doc/crypto.md §d:
// the form of every encoding, hash input and test vector.
type affinePoint struct {
	x, y fr.Element
}

// Internally, points live on the isomorphic a = −1 curve
//
//	−u² + y² = 1 + d'·u²·y²,  u = λ·x,  λ² = −a,  d' = −d/a
//
// (Bernstein–Birkner–Joye–Lange–Peters 2008, "Twisted Edwards curves", §3).
// −1 is a square mod p and d' is not, so the a = −1 formulas of
// Hisil–Wong–Carter–Dawson 2008 (§3.1–3.3) are complete there, and none of
// them multiplies by a. The map costs one multiplication each way.
var (
	// isoLambda = √(−168700) mod p =
	// 15527681003928902128179717624703512672403908117992798440346960750464748824729,
	// the λ of gnark-crypto's a = −1 BabyJubJub (vectors: curve.gnark_*).
	isoLambda = elementFromCanonical([4]uint64{0xd76612d2174d2899, 0xb38df17e479acf79, 0x8bd584e7fc9b46e5, 0x22545b22db5abade})
	// isoLambdaInv = 1/isoLambda =
	// 1911982854305225074381251344103329931637610209014896889891168275855466657090.
	isoLambdaInv = elementFromCanonical([4]uint64{0x21ec5cd3e0097542, 0xc22fa6626c121e9a, 0x5f55ef19c539fa43, 0x043a24d9a1c954e7})
	// iso2D = 2·d' = −2·168696/168700 mod p =
	// 2475045175004185027501911298141836274980133961483913877536377848625489762075.
	iso2D = elementFromCanonical([4]uint64{0x5d099f85f9afd71b, 0xdf026a6b5db6203e, 0xc3909ff8b278cb9a, 0x0578d36fdd1172a8})
)

// point is a point of the a = −1 curve in extended coordinates (U:Y:Z:T)
// with u = U/Z, y = Y/Z and u·y = T/Z.
type point struct {
	u, y, z, t fr.Element
}

// projPoint is (U:Y:Z) without T; doubling needs nothing more, so chains of
// doublings skip computing T.
type projPoint struct {
	u, y, z fr.Element
}

// completedPoint holds the intermediate (E, F, G, H) of an addition or
// doubling: u = E/G and y = H/F. Finishing to extended costs 4M, to
// projective 3M.
type completedPoint struct {
	e, f, g, h fr.Element
}

// cachedPoint is a point prepared as the second operand of an addition:
// (Y − U, Y + U, 2Z, 2d'·T).
type cachedPoint struct {
	yMinusU, yPlusU, z2, t2d fr.Element
}

// nielsPoint is an affine point prepared as the second operand of an
// addition: (y − u, y + u, 2d'·u·y); it saves the Z multiplication.
type nielsPoint struct {
	yMinusU, yPlusU, t2d fr.Element
}

// fromAffine maps the circom point (x, y) to (λ·x : y : 1 : λ·x·y).
func (p *point) fromAffine(a *affinePoint) *point {
	p.u.Mul(&a.x, &isoLambda)
	p.y = a.y
	p.z.SetOne()
	p.t.Mul(&p.u, &a.y)
	return p
}

func (p *point) fromCompleted(c *completedPoint) *point {
	p.u.Mul(&c.e, &c.f)
	p.y.Mul(&c.g, &c.h)
	p.z.Mul(&c.f, &c.g)
	p.t.Mul(&c.e, &c.h)
	return p
}

func (p *projPoint) fromCompleted(c *completedPoint) *projPoint {
	p.u.Mul(&c.e, &c.f)
	p.y.Mul(&c.g, &c.h)
	p.z.Mul(&c.f, &c.g)
	return p
}

func (p *projPoint) fromPoint(q *point) *projPoint {
	p.u, p.y, p.z = q.u, q.y, q.z
	return p
}

func (c *cachedPoint) fromPoint(p *point) *cachedPoint {
	feSub(&c.yMinusU, &p.y, &p.u)
	feAdd(&c.yPlusU, &p.y, &p.u)
	feAdd(&c.z2, &p.z, &p.z)
	c.t2d.Mul(&p.t, &iso2D)
	return c
}

// fromAffine prepares the circom point (x, y).
func (n *nielsPoint) fromAffine(a *affinePoint) *nielsPoint {
	var u fr.Element
	u.Mul(&a.x, &isoLambda)
	feSub(&n.yMinusU, &a.y, &u)
	feAdd(&n.yPlusU, &a.y, &u)
	n.t2d.Mul(&u, &a.y)
	n.t2d.Mul(&n.t2d, &iso2D)
	return n
}

// affine returns the circom point (U/(λ·Z), Y/Z) using gnark-crypto's
// variable-time inversion; the point must be public.
func (p *point) affine() affinePoint {
	var zInv fr.Element
	zInv.Inverse(&p.z)
	return p.affineWithInverse(&zInv)
}

// blindSize is the number of secret bytes that blind one inversion.
const blindSize = 32

// affineBlinded is affine for a point derived from a secret.
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
	var uScale fr.Element
	uScale.Mul(zInv, &isoLambdaInv)
	a.x.Mul(&p.u, &uScale)
	a.y.Mul(&p.y, zInv)
	return a
}

// add sets c = p + q (HWCD 2008 §3.3 "add-2008-hwcd-3", 8M, complete):
//
//	A = (Y1−U1)·(Y2−U2), B = (Y1+U1)·(Y2+U2), C = T1·2d'·T2, D = Z1·2Z2,
//	E = B−A, F = D−C, G = D+C, H = B+A.
func (c *completedPoint) add(p *point, q *cachedPoint) *completedPoint {
	var d fr.Element
	d.Mul(&p.z, &q.z2)
	c.finishAdd(p, &q.yMinusU, &q.yPlusU, &q.t2d, &d)
	return c
}

// addNiels sets c = p + q for an affine second operand (7M): D = 2·Z1.
func (c *completedPoint) addNiels(p *point, q *nielsPoint) *completedPoint {
	var d fr.Element
	feAdd(&d, &p.z, &p.z)
	c.finishAdd(p, &q.yMinusU, &q.yPlusU, &q.t2d, &d)
	return c
}

func (c *completedPoint) finishAdd(p *point, yMinusU, yPlusU, t2d, d *fr.Element) {
	var a, b, cc fr.Element
	feSub(&a, &p.y, &p.u)
	a.Mul(&a, yMinusU)
	feAdd(&b, &p.y, &p.u)
	b.Mul(&b, yPlusU)
	cc.Mul(&p.t, t2d)
	feSub(&c.e, &b, &a)
	feSub(&c.f, d, &cc)
	feAdd(&c.g, d, &cc)
	feAdd(&c.h, &b, &a)
}

// double sets c = 2p (HWCD 2008 §3.3 "dbl-2008-hwcd" with a = −1, 4S; T is
// not needed):
//
//	A = U², B = Y², C = 2Z², E = (U+Y)² − A − B, G = B − A, F = G − C,
//	H = −A − B.
func (c *completedPoint) double(p *projPoint) *completedPoint {
	var a, b, cc, s fr.Element
	a.Square(&p.u)
	b.Square(&p.y)
	cc.Square(&p.z)
	feAdd(&cc, &cc, &cc)
	feAdd(&s, &p.u, &p.y)
	c.e.Square(&s)
	feAdd(&s, &a, &b)
	feSub(&c.e, &c.e, &s)
	feSub(&c.g, &b, &a)
	feSub(&c.f, &c.g, &cc)
	feNeg(&c.h, &s)
	return c
}

// negate sets c = −c: −(u, y) = (−u, y) swaps Y − U and Y + U and negates
// 2d'·T.
func (c *cachedPoint) negate() *cachedPoint {
	c.yMinusU, c.yPlusU = c.yPlusU, c.yMinusU
	feNeg(&c.t2d, &c.t2d)
	return c
}

func (n *nielsPoint) negate() *nielsPoint {
	n.yMinusU, n.yPlusU = n.yPlusU, n.yMinusU
	feNeg(&n.t2d, &n.t2d)
	return n
}

func moveElement(dst, src *fr.Element, mask uint64) {
	dst[0] ^= mask & (dst[0] ^ src[0])
	dst[1] ^= mask & (dst[1] ^ src[1])
	dst[2] ^= mask & (dst[2] ^ src[2])
	dst[3] ^= mask & (dst[3] ^ src[3])
}

// isIdentity reports whether p is (0, 1) projectively.
func (p *point) isIdentity() bool {
	return p.u.IsZero() && p.y.Equal(&p.z)
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

// equalAffine reports whether p is the circom point (a.x, a.y), comparing
// U = λ·x·Z and Y = y·Z.
func (p *point) equalAffine(a *affinePoint) bool {
	var u, y fr.Element
	u.Mul(&a.x, &isoLambda)
	u.Mul(&u, &p.z)
	y.Mul(&a.y, &p.z)
	return u.Equal(&p.u) && y.Equal(&p.y)
}

func (a *affinePoint) isIdentity() bool {
	return a.x.IsZero() && a.y.IsOne()
}

func (a *affinePoint) equal(b *affinePoint) bool {
	return a.x.Equal(&b.x) && a.y.Equal(&b.y)
}

var one = fr.One()

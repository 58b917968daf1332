package babyjub

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/cryptotest"
	"worldid/internal/vectors"
)

// affineAdd is the textbook addition law of doc/crypto.md §d, an oracle
// independent of the extended-coordinate formulas.
func affineAdd(p, q *affinePoint) affinePoint {
	var x1y2, y1x2, y1y2, x1x2, dxxyy, ax1x2, xNum, xDen, yNum, yDen fr.Element
	x1y2.Mul(&p.x, &q.y)
	y1x2.Mul(&p.y, &q.x)
	y1y2.Mul(&p.y, &q.y)
	x1x2.Mul(&p.x, &q.x)
	dxxyy.Mul(&x1x2, &y1y2)
	dxxyy.Mul(&dxxyy, &curveD)
	ax1x2.Mul(&x1x2, &curveA)
	xNum.Add(&x1y2, &y1x2)
	xDen.Add(&one, &dxxyy)
	yNum.Sub(&y1y2, &ax1x2)
	yDen.Sub(&one, &dxxyy)
	var out affinePoint
	out.x.Div(&xNum, &xDen)
	out.y.Div(&yNum, &yDen)
	return out
}

// naiveMult is double-and-add with affineAdd.
func naiveMult(k *big.Int, p *affinePoint) affinePoint {
	acc := affinePoint{y: one}
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = affineAdd(&acc, &acc)
		if k.Bit(i) == 1 {
			acc = affineAdd(&acc, p)
		}
	}
	return acc
}

func randomScalarBig(rng *rand.Rand) *big.Int {
	return new(big.Int).Mod(leBytesToBig(randomWide(rng)), bigL)
}

func TestGeneratorOnCurveOfOrderL(t *testing.T) {
	if !generator.isOnCurve() {
		t.Fatal("G not on curve")
	}
	if !inSubgroup(generatorTable()) {
		t.Fatal("L·G ≠ O")
	}
	if g8 := naiveMult(big.NewInt(8), &generator); g8.isIdentity() {
		t.Fatal("8·G = O")
	}
}

func TestPointsVectors(t *testing.T) { cryptotest.ForEachPath(t, testPointsVectors) }

func testPointsVectors(t *testing.T) {
	var file struct {
		Points []struct {
			Name          string  `json:"name"`
			Scalar        string  `json:"scalar"`
			Negate        *bool   `json:"negate"`
			X             string  `json:"x"`
			Y             string  `json:"y"`
			XGtHalf       *bool   `json:"x_gt_half"`
			CompressedHex *string `json:"compressed_hex"`
		} `json:"points"`
	}
	vectors.Load(t, "eddsa_babyjubjub.json", &file)
	c := vectors.NewCounter(t, "eddsa_babyjubjub.json")
	for _, v := range file.Points {
		t.Run(v.Name, func(t *testing.T) {
			k := parseBig(t, v.Scalar)
			want := affinePoint{x: parseFE(t, v.X), y: parseFE(t, v.Y)}
			ks := scalarFromBig(k)
			results := map[string]affinePoint{"constant-time": scalarMultAffine(k)}
			for name, p := range map[string]point{
				"vartime base":  vartimeMultiExp(&[4]uint64{}, generatorTable(), (*[4]uint64)(&ks)),
				"vartime table": vartimeMultiExp((*[4]uint64)(&ks), generatorTable(), &[4]uint64{}),
			} {
				results[name] = p.affine()
			}
			for name, got := range results {
				if v.Negate != nil && *v.Negate {
					got.x.Neg(&got.x)
				}
				if !got.equal(&want) {
					t.Fatalf("%s mult: got (%s, %s)", name, elementString(&got.x), elementString(&got.y))
				}
			}
			if !want.isOnCurve() || !inSubgroup(tableOf(&want)) {
				t.Fatal("vector point not in the subgroup")
			}
			if v.XGtHalf != nil && want.x.LexicographicallyLargest() != *v.XGtHalf {
				t.Errorf("x_gt_half: got %v", !*v.XGtHalf)
			}
			if v.CompressedHex != nil {
				enc := vectors.Hex(t, *v.CompressedHex)
				if b := want.compress(); string(b[:]) != string(enc) {
					t.Errorf("compress: got %x want %x", b, enc)
				}
				dec, err := decompress(enc)
				if err != nil || !dec.equal(&want) {
					t.Errorf("decompress: %v, (%s, %s)", err, elementString(&dec.x), elementString(&dec.y))
				}
			}
			c.Inc()
		})
	}
}

func tableOf(a *affinePoint) *splitTable {
	var p point
	p.fromAffine(a)
	t := new(splitTable)
	t.init(&p)
	return t
}

func generatorTable() *splitTable { return tableOf(&generator) }

func TestGroupLawMatchesAffine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	order2 := affinePoint{}
	order2.y.Neg(&one)
	for i := 0; i < 50; i++ {
		p := scalarMultAffine(randomScalarBig(rng))
		q := scalarMultAffine(randomScalarBig(rng))
		if i%5 == 0 {
			q = affineAdd(&q, &order2) // leave the subgroup too
		}
		var pe, qe point
		pe.fromAffine(&p)
		qe.fromAffine(&q)
		var qc cachedPoint
		qc.fromPoint(&qe)
		var c completedPoint
		var sum point
		sum.fromCompleted(c.add(&pe, &qc))
		want := affineAdd(&p, &q)
		if got := sum.affine(); !got.equal(&want) {
			t.Fatalf("add mismatch at %d", i)
		}
		var qn nielsPoint
		qn.fromAffine(&q)
		sum.fromCompleted(c.addNiels(&pe, &qn))
		if got := sum.affine(); !got.equal(&want) {
			t.Fatalf("affine add mismatch at %d", i)
		}
		var pp projPoint
		pp.fromPoint(&pe)
		sum.fromCompleted(c.double(&pp))
		want = affineAdd(&p, &p)
		if got := sum.affine(); !got.equal(&want) {
			t.Fatalf("double mismatch at %d", i)
		}
		if got := sum.affine(); !got.isOnCurve() {
			t.Fatal("result off curve")
		}
	}
}

func TestScalarMultMatchesNaive(t *testing.T) { cryptotest.ForEachPath(t, testScalarMultMatchesNaive) }

func testScalarMultMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	lMinus1 := new(big.Int).Sub(bigL, big.NewInt(1))
	ks := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(15), big.NewInt(16), lMinus1}
	for i := 0; i < 10; i++ {
		ks = append(ks, randomScalarBig(rng))
	}
	for _, k := range ks {
		want := naiveMult(k, &generator)
		if got := scalarMultAffine(k); !got.equal(&want) {
			t.Errorf("scalarBaseMult(%v) mismatch", k)
		}
		// a·A + b·G with A = 3·G: compare against (3a + b)·G.
		a := randomScalarBig(rng)
		three := naiveMult(big.NewInt(3), &generator)
		sa, sk := scalarFromBig(a), scalarFromBig(k)
		got := vartimeMultiExp((*[4]uint64)(&sa), tableOf(&three), (*[4]uint64)(&sk))
		e := new(big.Int).Mul(a, big.NewInt(3))
		e.Add(e, k)
		if ga, wa := got.affine(), naiveMult(e.Mod(e, bigL), &generator); !ga.equal(&wa) {
			t.Errorf("vartimeMultiExp(%v, 3G, %v) mismatch", a, k)
		}
	}
}

func TestSignedRadix16(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 200; i++ {
		k := randomScalarBig(rng)
		s := scalarFromBig(k)
		d := s.signedRadix16()
		sum := new(big.Int)
		for j := len(d) - 1; j >= 0; j-- {
			if d[j] < -8 || d[j] > 8 {
				t.Fatalf("digit %d out of range", d[j])
			}
			sum.Lsh(sum, 4).Add(sum, big.NewInt(int64(d[j])))
		}
		if sum.Cmp(k) != 0 {
			t.Fatalf("digits of %v sum to %v", k, sum)
		}
	}
}

func TestPartNAF(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	values := []uint32{0, 1, 15, 16, 1<<31 - 1, 1 << 31, ^uint32(0)}
	for i := 0; i < 500; i++ {
		values = append(values, rng.Uint32())
	}
	for _, w := range []uint{wnafWidthBase, wnafWidthPoint} {
		for _, v := range values {
			naf := partNAF(v, w)
			sum := new(big.Int)
			last := -1
			for j := len(naf) - 1; j >= 0; j-- {
				if d := naf[j]; d != 0 {
					if d%2 == 0 || abs8(d) >= 1<<(w-1) {
						t.Fatalf("w=%d: bad digit %d", w, d)
					}
					if last >= 0 && last-j < int(w) {
						t.Fatalf("w=%d: digits at %d and %d too close", w, last, j)
					}
					last = j
				}
				sum.Lsh(sum, 1).Add(sum, big.NewInt(int64(naf[j])))
			}
			if want := new(big.Int).SetUint64(uint64(v)); sum.Cmp(want) != 0 {
				t.Fatalf("w=%d: NAF of %d sums to %v", w, v, sum)
			}
		}
	}
}

func TestNielsTable(t *testing.T) {
	table := nielsTable()
	rng := rand.New(rand.NewPCG(13, 14))
	var got nielsLanes
	for n := 0; n < 20; n++ {
		i, j, l := rng.IntN(len(table)), rng.IntN(len(table[0])), rng.IntN(lanes)
		k := new(big.Int).Lsh(big.NewInt(int64(j+1)), uint(4*i))
		want := naiveMult(k, &generator)
		var wn nielsPoint
		wn.fromAffine(&want)
		table[i].lookup(&got, l, int8(j+1))
		if (nielsPoint{yMinusU: got.yMinusU[l], yPlusU: got.yPlusU[l], t2d: got.t2d[l]}) != wn {
			t.Errorf("row %d digit %d ≠ %v·G", i, j+1, k)
		}
		neg := affinePoint{y: want.y}
		neg.x.Neg(&want.x)
		wn.fromAffine(&neg)
		table[i].lookup(&got, l, int8(-j-1))
		if (nielsPoint{yMinusU: got.yMinusU[l], yPlusU: got.yPlusU[l], t2d: got.t2d[l]}) != wn {
			t.Errorf("row %d digit %d ≠ −%v·G", i, -j-1, k)
		}
	}
	if table[5].lookup(&got, 3, 0); got.yPlusU[3] != one || got.yMinusU[3] != one || !got.t2d[3].IsZero() {
		t.Error("digit 0 is not the identity")
	}
}

// TestIsomorphism checks the a = −1 model's constants and that it maps
// BabyJubJub points onto −u² + y² = 1 + d'·u²·y².
func TestIsomorphism(t *testing.T) {
	var sq, minusA, prod, dPrime, want fr.Element
	sq.Square(&isoLambda)
	minusA.Neg(&curveA)
	if !sq.Equal(&minusA) {
		t.Fatal("λ² ≠ −a")
	}
	if prod.Mul(&isoLambda, &isoLambdaInv); !prod.IsOne() {
		t.Fatal("λ·λ⁻¹ ≠ 1")
	}
	dPrime.Set(&iso2D).Halve()
	want.Inverse(&curveA).Mul(&want, &curveD).Neg(&want)
	if !dPrime.Equal(&want) {
		t.Fatal("iso2D ≠ −2d/a")
	}
	if dPrime.Legendre() != -1 {
		t.Fatal("d' is a square: the a = −1 formulas would not be complete")
	}
	p := naiveMult(big.NewInt(12345), &generator)
	var u, u2, y2, lhs, rhs fr.Element
	u.Mul(&p.x, &isoLambda)
	u2.Square(&u)
	y2.Square(&p.y)
	lhs.Sub(&y2, &u2)
	rhs.Mul(&u2, &y2).Mul(&rhs, &dPrime).Add(&rhs, &one)
	if !lhs.Equal(&rhs) {
		t.Fatal("image is not on the a = −1 curve")
	}
}

func TestAffineBlinded(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	blinds := [][blindSize]byte{{}, {1}} // zero falls back to β = 1
	for i := 0; i < 50; i++ {
		var b [blindSize]byte
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		blinds = append(blinds, b)
	}
	for i, blind := range blinds {
		s := scalarFromBig(randomScalarBig(rng))
		p := scalarBaseMult(&s)
		if got, want := p.affineBlinded(&blind), p.affine(); !got.equal(&want) {
			t.Fatalf("blind %d: affine conversion differs", i)
		}
	}
}

// le32 encodes a value < 2^256 little-endian.
func le32(v *big.Int) []byte {
	be := v.FillBytes(make([]byte, 32))
	le := make([]byte, 32)
	for i := range be {
		le[i] = be[31-i]
	}
	return le
}

func TestDecompressRejects(t *testing.T) {
	pMinus1 := new(big.Int).Sub(bigP, big.NewInt(1))
	withFlag := func(b []byte) []byte { b[31] |= signFlag; return b }
	for _, tc := range []struct {
		name string
		enc  []byte
		want error
	}{
		{"empty", nil, errPointLength},
		{"31 bytes", make([]byte, 31), errPointLength},
		{"33 bytes", make([]byte, 33), errPointLength},
		{"y = p", le32(bigP), errPointYNotCanon},
		{"y = 2^255 - 1 without flag", le32(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(1))), errPointYNotCanon},
		{"bit 6 set", withFlag(le32(new(big.Int).Lsh(big.NewInt(1), 254))), errPointYNotCanon},
		{"y = 2 off curve", le32(big.NewInt(2)), errPointNotOnCurve},
		{"identity with sign bit", withFlag(le32(big.NewInt(1))), errPointNegativeZero},
		{"(0, -1) with sign bit", withFlag(le32(pMinus1)), errPointNegativeZero},
	} {
		_, err := decompress(tc.enc)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	// Rules 1-3 pass for the torsion points (0, -1) and (1/√a, 0); the
	// subgroup check (rule 4) rejects them.
	for _, enc := range [][]byte{le32(pMinus1), le32(big.NewInt(0))} {
		p, err := decompress(enc)
		if err != nil || !p.isOnCurve() {
			t.Fatalf("%x: %v", enc, err)
		}
		if inSubgroup(tableOf(&p)) {
			t.Errorf("%x: torsion point passes the subgroup check", enc)
		}
	}
	// The identity itself decodes (doc/crypto.md §d rule 4 note).
	if p, err := decompress(le32(big.NewInt(1))); err != nil || !p.isIdentity() {
		t.Errorf("identity: %v", err)
	}
}

// TestCompressRoundTrip covers both signs and every decoding branch.
func TestCompressRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	sawFlag := [2]bool{}
	for i := 0; i < 100; i++ {
		p := scalarMultAffine(randomScalarBig(rng))
		if i%2 == 1 {
			p.x.Neg(&p.x)
		}
		enc := p.compress()
		sawFlag[enc[31]>>7] = true
		got, err := decompress(enc[:])
		if err != nil || !got.equal(&p) {
			t.Fatalf("round trip failed: %v", err)
		}
	}
	if !sawFlag[0] || !sawFlag[1] {
		t.Error("round trip did not exercise both signs")
	}
}

// TestCurveParameters asserts the curve section of the vector file against
// the package constants, including the gnark-crypto isomorphism.
func TestCurveParameters(t *testing.T) {
	type xy struct{ X, Y string }
	var file struct {
		Curve struct {
			A, D, P             string
			L                   string `json:"subgroup_order_L"`
			Cofactor            string
			Generator, Identity xy
			Montgomery          struct{ A, B string } `json:"montgomery_form"`
			Gnark               struct {
				A      string `json:"gnark_a"`
				D      string `json:"gnark_d"`
				BaseX  string `json:"gnark_base_x"`
				BaseY  string `json:"gnark_base_y"`
				Lambda string `json:"lambda_"`
			} `json:"gnark_crypto_v0_19_0_isomorphism"`
		}
	}
	vectors.Load(t, "eddsa_babyjubjub.json", &file)
	c := vectors.NewCounter(t, "eddsa_babyjubjub.json")
	cv := file.Curve
	if parseBig(t, cv.P).Cmp(bigP) != 0 || parseBig(t, cv.L).Cmp(bigL) != 0 {
		t.Error("p or L differs")
	}
	if a := parseFE(t, cv.A); !a.Equal(&curveA) {
		t.Error("a differs")
	}
	if d := parseFE(t, cv.D); !d.Equal(&curveD) {
		t.Error("d differs")
	}
	// Group order 8·L: the cofactor clears every torsion point.
	cofactor := parseBig(t, cv.Cofactor)
	for _, tp := range torsionPoints(t) {
		if q := naiveMult(cofactor, &tp); !q.isIdentity() {
			t.Errorf("cofactor %v does not clear a torsion point", cofactor)
		}
	}
	if g := (affinePoint{x: parseFE(t, cv.Generator.X), y: parseFE(t, cv.Generator.Y)}); !g.equal(&generator) {
		t.Error("generator differs")
	}
	if id := (affinePoint{x: parseFE(t, cv.Identity.X), y: parseFE(t, cv.Identity.Y)}); !id.isIdentity() {
		t.Error("identity differs")
	}
	// Montgomery form: A = 2(a+d)/(a−d), B = 4/(a−d).
	var sum, diff, mA, mB fr.Element
	sum.Add(&curveA, &curveD)
	diff.Sub(&curveA, &curveD)
	mA.Double(&sum).Div(&mA, &diff)
	mB.SetUint64(4).Div(&mB, &diff)
	if want := parseFE(t, cv.Montgomery.A); !mA.Equal(&want) {
		t.Error("Montgomery A differs")
	}
	if want := parseFE(t, cv.Montgomery.B); !mB.Equal(&want) {
		t.Error("Montgomery B differs")
	}
	// gnark form: x_g = λ·x with λ² = −a, a_g = −1, d_g = −d/a.
	lambda := parseFE(t, cv.Gnark.Lambda)
	var l2, negA fr.Element
	l2.Square(&lambda)
	negA.Neg(&curveA)
	if !l2.Equal(&negA) {
		t.Error("λ² ≠ −a")
	}
	if !lambda.Equal(&isoLambda) {
		t.Error("the internal a = −1 model uses a different λ")
	}
	if cv.Gnark.A != "-1" {
		t.Errorf("gnark a = %q", cv.Gnark.A)
	}
	gnarkD, _, _ := strings.Cut(cv.Gnark.D, " ")
	var wantD fr.Element
	wantD.Div(&curveD, &curveA).Neg(&wantD)
	if d := parseFE(t, gnarkD); !d.Equal(&wantD) {
		t.Error("gnark d ≠ −d/a")
	}
	var gx fr.Element
	gx.Mul(&lambda, &generator.x)
	if bx, by := parseFE(t, cv.Gnark.BaseX), parseFE(t, cv.Gnark.BaseY); !bx.Equal(&gx) || !by.Equal(&generator.y) {
		t.Error("gnark base point ≠ (λ·G.x, G.y)")
	}
	c.Inc()
}

// TestBaseMultPathsAgree compares k·G on the scalar and vector paths for
// random and edge scalars.
func TestBaseMultPathsAgree(t *testing.T) {
	if !field.VectorAvailable() {
		t.Skip("no AVX-512 IFMA here (or a noavx/purego build): only the scalar path can run")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	ks := []scalar{{}, {1}, scalarFromBig(new(big.Int).Sub(bigL, big.NewInt(1)))}
	for range 20 {
		ks = append(ks, scalarFromBig(randomScalarBig(rng)))
	}
	for _, k := range ks {
		s, v := scalarBaseMultOn(&k, field.Scalar), scalarBaseMultOn(&k, field.Vector)
		if sa, va := s.affine(), v.affine(); !sa.equal(&va) {
			t.Fatalf("k = %v: the scalar and vector paths disagree", k)
		}
	}
}

// TestPaths: the fixed-base multiplication reports a calibrated choice,
// measured exactly where the vector path can run.
func TestPaths(t *testing.T) {
	choices := Paths()
	if len(choices) != 1 || choices[0].Op != "babyjub-base-mult" {
		t.Fatalf("Paths() = %+v, want one choice for babyjub-base-mult", choices)
	}
	c := choices[0]
	if c.Path != field.Scalar && c.Path != field.Vector || c.Measured != field.VectorAvailable() {
		t.Errorf("choice %+v with vector path available = %v", c, field.VectorAvailable())
	}
	t.Logf("%s: %v (scalar %v, vector %v)", c.Op, c.Path, c.ScalarTime, c.VectorTime)
}

package field

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

func TestParsePath(t *testing.T) {
	for _, p := range []Path{Auto, Scalar, Vector} {
		got, err := ParsePath(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePath(%q) = %v, %v", p.String(), got, err)
		}
	}
	for _, s := range []string{"", "Scalar", "avx", "vector "} {
		if _, err := ParsePath(s); err == nil {
			t.Errorf("ParsePath(%q) accepted", s)
		}
	}
}

func TestForcePath(t *testing.T) {
	defer func() {
		if err := ForcePath(Auto); err != nil {
			t.Fatal(err)
		}
	}()
	if err := ForcePath(Vector + 1); err == nil {
		t.Error("ForcePath accepted an unknown path")
	}
	if err := ForcePath(Scalar); err != nil || Effective(Vector) != Scalar {
		t.Errorf("forced scalar: err %v, effective %v", err, Effective(Vector))
	}
	err := ForcePath(Vector)
	if VectorAvailable() != (err == nil) {
		t.Errorf("ForcePath(Vector) = %v with VectorAvailable() = %v", err, VectorAvailable())
	}
	if err := ForcePath(Auto); err != nil || Effective(Vector) != Vector || Effective(Scalar) != Scalar {
		t.Errorf("auto: err %v; the calibrated path is not kept", err)
	}
}

func TestMulVecPathsAgree(t *testing.T) {
	for _, n := range []int{1, 4, 8, 12, 16, 17} {
		x, y := make(fr.Vector, n), make(fr.Vector, n)
		for i := range x {
			x[i].MustSetRandom()
			y[i].MustSetRandom()
		}
		paths := []Path{Scalar}
		if VectorAvailable() {
			paths = append(paths, Vector)
		}
		for _, p := range paths {
			z := make(fr.Vector, n)
			MulVec(p, z, x, y)
			for i := range z {
				var want fr.Element
				want.Mul(&x[i], &y[i])
				if !z[i].Equal(&want) {
					t.Fatalf("%v path, n = %d: element %d wrong", p, n, i)
				}
			}
		}
	}
}

// TestCalibratePicksTheFasterPath gives one path a thousand times the work
// of the other, so the choice cannot depend on load.
func TestCalibratePicksTheFasterPath(t *testing.T) {
	work := func(slow Path) func(Path) {
		return func(p Path) {
			n := 10
			if p == slow {
				n = 10000
			}
			var x fr.Element
			x.SetUint64(3)
			for range n {
				x.Square(&x)
			}
		}
	}
	for _, slow := range []Path{Scalar, Vector} {
		c := Calibrate("test", work(slow))
		if !VectorAvailable() {
			if c.Path != Scalar || c.Measured {
				t.Fatalf("without the vector path: %+v", c)
			}
			return
		}
		if c.Path == slow || !c.Measured || c.Op != "test" {
			t.Errorf("slow path %v: chose %+v", slow, c)
		}
	}
}

// TestMulScalarEdges checks the scalar path's assembly on edge values
// (0, 1, p − 1, values with all-ones limbs below p) and aliased operands.
func TestMulScalarEdges(t *testing.T) {
	var edges fr.Vector
	for _, s := range []string{"0", "1", "2", "21888242871839275222246405745257275088548364400416034343698204186575808495616",
		"21888242871839275222246405745257275088548364400416034343698204186575808495615",
		"18446744073709551615", "340282366920938463463374607431768211455",
		"6277101735386680763835789423207666416102355444464034512895"} {
		x, err := ParseDecimal(s)
		if err != nil {
			t.Fatal(err)
		}
		edges = append(edges, x)
	}
	n := len(edges)
	x, y := make(fr.Vector, n*n), make(fr.Vector, n*n)
	for i := range n {
		for j := range n {
			x[i*n+j], y[i*n+j] = edges[i], edges[j]
		}
	}
	z := make(fr.Vector, n*n)
	mulScalar(z, x, y)
	for i := range z {
		var want fr.Element
		want.Mul(&x[i], &y[i])
		if !z[i].Equal(&want) {
			t.Fatalf("%s · %s: got %s, want %s", x[i].String(), y[i].String(), z[i].String(), want.String())
		}
	}
	sq := append(fr.Vector(nil), x...)
	mulScalar(sq, sq, sq)
	for i := range sq {
		var want fr.Element
		want.Square(&x[i])
		if !sq[i].Equal(&want) {
			t.Fatalf("in-place square of %s wrong", x[i].String())
		}
	}
}

func TestRejectsLengthMismatch(t *testing.T) {
	var c fr.Element
	for name, f := range map[string]func(){
		"MulVec":    func() { MulVec(Scalar, make(fr.Vector, 8), make(fr.Vector, 8), make(fr.Vector, 7)) },
		"MulAddVec": func() { MulAddVec(Scalar, make(fr.Vector, 8), make(fr.Vector, 7), make(fr.Vector, 8), &c) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s accepted operands of different lengths", name)
				}
			}()
			f()
		}()
	}
}

// TestMulAddVecPathsAgree checks z = x·y + c on each path, with the edge
// values of TestMulScalarEdges as c, in place as the permutation calls it.
func TestMulAddVecPathsAgree(t *testing.T) {
	paths := []Path{Scalar}
	if VectorAvailable() {
		paths = append(paths, Vector)
	}
	x, y := make(fr.Vector, 16), make(fr.Vector, 16)
	for i := range x {
		x[i].MustSetRandom()
		y[i].MustSetRandom()
	}
	x[0].SetZero()
	x[1].SetOne()
	x[2].Neg(&x[1])
	y[3].Neg(&x[1])
	var cs [4]fr.Element
	cs[1].SetOne()
	cs[2].Neg(&cs[1])
	cs[3].MustSetRandom()
	for _, p := range paths {
		for _, c := range cs {
			for _, n := range []int{1, 7, 8, 16} {
				z := append(fr.Vector(nil), x[:n]...)
				MulAddVec(p, z, z, y[:n], &c)
				for i := range z {
					var want fr.Element
					want.Mul(&x[i], &y[i])
					want.Add(&want, &c)
					if !z[i].Equal(&want) {
						t.Fatalf("%v path, n = %d, c = %s: element %d wrong", p, n, c.String(), i)
					}
				}
			}
		}
	}
}

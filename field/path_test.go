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

package field

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/utils/cpu"
)

// Path is an implementation of the element-wise products of field vectors
// that the Poseidon2 permutations and the BabyJubJub fixed-base
// multiplication are built on.
type Path uint8

const (
	// Auto lets each operation use the path its start-up calibration chose.
	Auto Path = iota
	// Scalar multiplies one element at a time (gnark-crypto's fr.Element.Mul,
	// ADX/BMI2 assembly on amd64).
	Scalar
	// Vector multiplies eight elements at a time with gnark-crypto's
	// fr.Vector.Mul, which uses AVX-512 IFMA. Only available on CPUs with
	// IFMA, in builds without the noavx and purego tags.
	Vector
)

var pathNames = [...]string{Auto: "auto", Scalar: "scalar", Vector: "vector"}

func (p Path) String() string {
	if int(p) < len(pathNames) {
		return pathNames[p]
	}
	return fmt.Sprintf("Path(%d)", uint8(p))
}

// ParsePath reads "auto", "scalar" or "vector".
func ParsePath(s string) (Path, error) {
	for p, name := range pathNames {
		if s == name {
			return Path(p), nil
		}
	}
	return Auto, fmt.Errorf("field: unknown crypto path %q (want auto, scalar or vector)", s)
}

// VectorAvailable reports whether the Vector path can run here: the CPU
// has AVX-512 IFMA (with the AVX-512 features gnark-crypto requires next
// to it) and the binary was built without the noavx and purego tags.
func VectorAvailable() bool { return cpu.SupportAVX512IFMA }

// errNoVector is returned when the Vector path is forced where it cannot run.
var errNoVector = errors.New("field: the vector crypto path needs AVX-512 IFMA (and a build without the noavx and purego tags)")

// forced is the path set by ForcePath; Auto (0) means none.
var forced atomic.Uint32

// ForcePath makes every operation use p (Scalar or Vector) instead of the
// path its calibration chose; Auto restores the calibrated choices. It is
// meant to be called once at start-up (the serve flag -crypto-path) and by
// tests that cover each path; it returns an error for Vector where
// VectorAvailable is false, and for values other than the three constants.
func ForcePath(p Path) error {
	switch {
	case p > Vector:
		return fmt.Errorf("field: unknown crypto path %v", p)
	case p == Vector && !VectorAvailable():
		return errNoVector
	}
	forced.Store(uint32(p))
	return nil
}

// Effective returns the path an operation whose calibration chose calibrated
// runs on: the forced path if ForcePath set one, calibrated otherwise.
func Effective(calibrated Path) Path {
	if p := Path(forced.Load()); p != Auto {
		return p
	}
	return calibrated
}

// MulVec sets z[i] = x[i]·y[i] on path p (Scalar unless p is Vector). It
// panics unless all three have the same length. Both paths are branch-free
// on the values.
func MulVec(p Path, z, x, y fr.Vector) {
	if len(x) != len(z) || len(y) != len(z) {
		panic("field: MulVec operands differ in length")
	}
	if p == Vector {
		z.Mul(x, y)
		return
	}
	mulScalar(z, x, y)
}

// MulAddVec sets z[i] = x[i]·y[i] + c on path p (the Poseidon2 internal
// matrix: s[i]·diag[i] + Σs). It panics unless z, x and y have the same
// length. Both paths are branch-free on the values.
func MulAddVec(p Path, z, x, y fr.Vector, c *fr.Element) {
	if len(x) != len(z) || len(y) != len(z) {
		panic("field: MulAddVec operands differ in length")
	}
	if p == Vector {
		z.Mul(x, y)
		addToEach(z, c)
		return
	}
	mulAddScalar(z, x, y, c)
}

func mulAddEach(z, x, y fr.Vector, c *fr.Element) {
	mulEach(z, x, y)
	addToEach(z, c)
}

func addToEach(z fr.Vector, c *fr.Element) {
	for i := range z {
		Add(&z[i], &z[i], c)
	}
}

func mulEach(z, x, y fr.Vector) {
	for i := range z {
		z[i].Mul(&x[i], &y[i])
	}
}

// Choice records how one operation's path was chosen.
type Choice struct {
	Op         string        // the operation, e.g. "poseidon2-t8"
	Path       Path          // the calibrated path (Scalar or Vector)
	Measured   bool          // false when only Scalar can run here
	ScalarTime time.Duration // best time of one run on each path, when Measured
	VectorTime time.Duration
}

// Calibration bounds: at most calibrationPairs interleaved runs of each
// path, stopping early once calibrationBudget has passed after at least
// two pairs, so that one operation costs a few milliseconds at start-up
// even on a loaded machine.
const (
	calibrationPairs  = 16
	calibrationBudget = 3 * time.Millisecond
)

// Calibrate chooses op's path by timing run on each path: one warm-up run
// of each, then interleaved pairs (so that load from other processes hits
// both alike); the faster minimum wins, Scalar on a tie. Without
// VectorAvailable it returns Scalar unmeasured. run must perform one
// complete operation on the given path. The clock is read here because
// measuring the machine is this function's purpose; no result of the
// operation depends on it.
func Calibrate(op string, run func(Path)) Choice {
	if !VectorAvailable() {
		return Choice{Op: op, Path: Scalar}
	}
	run(Scalar)
	run(Vector)
	best := [2]time.Duration{1<<63 - 1, 1<<63 - 1}
	start := time.Now()
	for i := 0; i < calibrationPairs && (i < 2 || time.Since(start) < calibrationBudget); i++ {
		for k, p := range [2]Path{Scalar, Vector} {
			t0 := time.Now()
			run(p)
			best[k] = min(best[k], time.Since(t0))
		}
	}
	c := Choice{Op: op, Path: Scalar, Measured: true, ScalarTime: best[0], VectorTime: best[1]}
	if c.VectorTime < c.ScalarTime {
		c.Path = Vector
	}
	return c
}

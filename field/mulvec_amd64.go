//go:build !purego

package field

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/utils/cpu"
)

// The scalar path's products run in assembly loops (mulvec_amd64.s) where
// the CPU has BMI2 and ADX, one call per vector instead of one per product,
// and with fr.Element.Mul otherwise.
// MulVec has checked the lengths.

//go:noescape
func mulVecADX(z, x, y *fr.Element, n uint64)

func mulScalar(z, x, y fr.Vector) {
	if !cpu.SupportADX || len(z) == 0 {
		mulEach(z, x, y)
		return
	}
	mulVecADX(&z[0], &x[0], &y[0], uint64(len(z)))
}

//go:noescape
func mulAddVecADX(z, x, y, c *fr.Element, n uint64)

func mulAddScalar(z, x, y fr.Vector, c *fr.Element) {
	if !cpu.SupportADX || len(z) == 0 {
		mulAddEach(z, x, y, c)
		return
	}
	mulAddVecADX(&z[0], &x[0], &y[0], c, uint64(len(z)))
}

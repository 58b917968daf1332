//go:build purego || !amd64

package field

import "github.com/consensys/gnark-crypto/ecc/bn254/fr"

// Without the amd64 assembly, the scalar path uses fr.Element.Mul.

func mulScalar(z, x, y fr.Vector) { mulEach(z, x, y) }

func mulAddScalar(z, x, y fr.Vector, c *fr.Element) { mulAddEach(z, x, y, c) }

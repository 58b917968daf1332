package oprfproof

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/semaphore"
)

func verifyInputs(vk *semaphore.VerifyingKey, p *Proof, in []fr.Element) bool {
	return semaphore.VerifyScalars(vk, p.groth16, in)
}

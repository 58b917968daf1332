package semaphore

import (
	"io"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/poseidon"
)

// identitySecretBytes is the size of each random identity secret: 31 bytes
// are below 2^248 < r, so they are uniform field elements without reduction.
const identitySecretBytes = 31

// Identity is a Semaphore identity: two secrets, never revealed.
type Identity struct {
	Nullifier, Trapdoor fr.Element
}

// NewIdentity draws a fresh identity from rand.
func NewIdentity(rand io.Reader) (Identity, error) {
	var buf [2 * identitySecretBytes]byte
	if _, err := io.ReadFull(rand, buf[:]); err != nil {
		return Identity{}, err
	}
	var id Identity
	id.Nullifier.SetBytes(buf[:identitySecretBytes])
	id.Trapdoor.SetBytes(buf[identitySecretBytes:])
	return id, nil
}

// Secret is P(nullifier, trapdoor) (doc/crypto.md §g "Identity").
func (id Identity) Secret() fr.Element {
	return poseidon.HashV1(id.Nullifier, id.Trapdoor)
}

// Commitment is P(secret): the leaf inserted in the identity tree.
func (id Identity) Commitment() fr.Element {
	return poseidon.HashV1(id.Secret())
}

// NullifierHash is P(externalNullifier, nullifier): one per identity and
// action, revealed by the proof.
func (id Identity) NullifierHash(externalNullifier fr.Element) fr.Element {
	return poseidon.HashV1(externalNullifier, id.Nullifier)
}

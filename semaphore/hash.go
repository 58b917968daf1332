package semaphore

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"golang.org/x/crypto/sha3"
)

// HashToField is uint256(Keccak-256(b)) >> 8 (crypto.md §g "Hashing
// helpers"), with the original Keccak padding. The result is below 2^248,
// so it is always a field element and is never reduced.
func HashToField(b []byte) fr.Element {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	var digest, shifted [32]byte
	h.Sum(digest[:0])
	copy(shifted[1:], digest[:31])
	var e fr.Element
	e.SetBytes(shifted[:])
	return e
}

// ExternalNullifier is hashToField(BE32(hashToField(appID)) ‖ action), with
// nothing appended for an empty action (crypto.md §g). appID is the
// registered "app_…" id.
func ExternalNullifier(appID, action string) fr.Element {
	app := HashToField([]byte(appID))
	b := app.Bytes()
	return HashToField(append(b[:], action...))
}

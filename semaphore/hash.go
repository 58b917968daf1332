package semaphore

import (
	"encoding/hex"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"golang.org/x/crypto/sha3"
)

// HashToField is uint256(Keccak-256(b)) >> 8 (doc/crypto.md §g "Hashing
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
// nothing appended for an empty action (doc/crypto.md §g). appID is the
// registered "app_…" id.
func ExternalNullifier(appID, action string) fr.Element {
	app := HashToField([]byte(appID))
	b := app.Bytes()
	return HashToField(append(b[:], action...))
}

// HashSignal is IDKit 4's hashSignal of a string signal (idkit-core 4.3.0,
// doc/crypto.md §g "Hashing helpers"): "0x" followed by a non-empty, even
// number of hex digits (either case) is hashed as the bytes it encodes,
// anything else — "0x" alone and odd-length hex included — as its UTF-8
// bytes. (idkit-core 2.x hashed "0x" as the empty byte string.) World's
// portal hashes a 4.0 action string with the same function.
func HashSignal(signal string) fr.Element {
	if digits, ok := strings.CutPrefix(signal, "0x"); ok && digits != "" && len(digits)%2 == 0 {
		if b, err := hex.DecodeString(digits); err == nil {
			return HashToField(b)
		}
	}
	return HashToField([]byte(signal))
}

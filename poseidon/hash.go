package poseidon

import (
	"crypto/sha3"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
)

const (
	// maxTagLen keeps fe(tag) below 2^248 < p (doc/crypto.md §a, fe("TAG")).
	maxTagLen = 31
	// spongeRate is the number of state slots a sponge block fills; slot
	// 15 holds the tag.
	spongeRate = 15
	// chunkLen bytes read big-endian are < 2^248 < p, so every chunk is a
	// field element without reduction (doc/crypto.md §b step 4).
	chunkLen = 31
	// absorbFlag marks the SAFE "absorb" call in the sponge tag preimage.
	absorbFlag = 0x80000000
)

// Hash is the Poseidon2 hash mode of doc/crypto.md §b: the state
// [fe(tag), x1, …, xN, 0, …] of width t(N) is permuted and slot 1 returned.
// The width is 2, 3, 4, 8, 12 or 16 for N = 1, 2, 3, 4–7, 8–11, 12–15.
// It panics if N is not in 1..15 or tag is longer than 31 bytes: both are
// programming errors, since tags and arities are fixed by the caller's spec.
func Hash(tag string, inputs ...fr.Element) fr.Element {
	t := hashWidth(len(inputs))
	var buf [p2MaxWidth]fr.Element
	s := buf[:t]
	s[0] = tagElement(tag)
	copy(s[1:], inputs)
	p2Instances[t]().permute(s)
	return s[1]
}

// hashWidth returns the hash-mode width for n inputs (doc/crypto.md §b table).
func hashWidth(n int) int {
	switch {
	case 1 <= n && n <= 3:
		return n + 1
	case 4 <= n && n <= 7:
		return 8
	case 8 <= n && n <= 11:
		return 12
	case 12 <= n && n <= 15:
		return 16
	}
	panic(fmt.Sprintf("poseidon: Hash takes 1 to 15 inputs, got %d", n))
}

// tagElement returns fe(tag), the ASCII bytes of tag as a big-endian integer.
func tagElement(tag string) fr.Element {
	if len(tag) > maxTagLen {
		panic(fmt.Sprintf("poseidon: tag is %d bytes, at most %d allowed", len(tag), maxTagLen))
	}
	var b [fr.Bytes]byte
	copy(b[fr.Bytes-len(tag):], tag)
	var x fr.Element
	x.SetBytes(b[:]) // < 2^248, never reduced
	return x
}

// Compress is the World ID 4.0 Merkle compression P2_2([l, r])[0] + l
// (doc/crypto.md §b). Note the feed-forward of the left input.
func Compress(l, r fr.Element) fr.Element {
	s := [2]fr.Element{l, r}
	Permute2(&s)
	field.Add(&s[0], &s[0], &l)
	return s[0]
}

var errEmptyInput = errors.New("poseidon: sponge input is empty")

// HashBytes is the byte sponge S(tag, data) of doc/crypto.md §b: data is cut
// into 31-byte big-endian chunks (each < p), absorbed 15 at a time into a
// width-16 state whose slot 15 holds a SHA3-256 tag bound to tag and
// len(data); the result is slot 0. Empty data is an error, as is data of
// 2^31 bytes or more, whose length the tag cannot encode.
func HashBytes(tag string, data []byte) (fr.Element, error) {
	t, err := spongeTag(tag, len(data))
	if err != nil {
		return fr.Element{}, err
	}
	var s [p2MaxWidth]fr.Element
	s[p2MaxWidth-1] = t
	for len(data) > 0 {
		for j := 0; j < spongeRate && len(data) > 0; j++ {
			n := min(chunkLen, len(data))
			c := chunkElement(data[:n])
			field.Add(&s[j], &s[j], &c)
			data = data[n:]
		}
		Permute16(&s)
	}
	return s[0], nil
}

// chunkElement reads up to 31 bytes as a big-endian integer, always < p.
func chunkElement(chunk []byte) fr.Element {
	var b [fr.Bytes]byte
	copy(b[fr.Bytes-len(chunk):], chunk)
	var x fr.Element
	x.SetBytes(b[:])
	return x
}

// spongeTag returns T = SHA3-256(BE4(0x80000000 + n) ‖ BE4(32) ‖ tag) mod p
// for a sponge over n bytes (doc/crypto.md §b step 2).
func spongeTag(tag string, n int) (fr.Element, error) {
	var buf [64]byte
	pre, err := appendTagPreimage(buf[:0], tag, n)
	if err != nil {
		return fr.Element{}, err
	}
	return reduce256(sha3.Sum256(pre)), nil
}

// twoTo253 is 2^253 < p, the weight of the top three bits in reduce256.
var twoTo253 = func() (x fr.Element) {
	var b [fr.Bytes]byte
	b[0] = 0x20
	x.SetBytes(b[:])
	return x
}()

// reduce256 returns b mod p for any 32-byte big-endian b, as
// low + top·2^253 where low (the low 253 bits) is already < p.
func reduce256(b [fr.Bytes]byte) fr.Element {
	top := uint64(b[0] >> 5)
	b[0] &= 0x1f
	var low, high fr.Element
	low.SetBytes(b[:])
	high.SetUint64(top)
	high.Mul(&high, &twoTo253)
	field.Add(&low, &low, &high)
	return low
}

// appendTagPreimage appends BE4(0x80000000 + n) ‖ BE4(32) ‖ tag to dst.
// n must be in 1..2^31−1: the spec forbids empty input, and a larger n
// would overflow the 32-bit absorb word (doc/crypto.md §b step 1 requires
// n < 2^32; the word itself requires n < 2^31).
func appendTagPreimage(dst []byte, tag string, n int) ([]byte, error) {
	if n == 0 {
		return nil, errEmptyInput
	}
	if uint64(n) >= 1<<31 {
		return nil, fmt.Errorf("poseidon: sponge input of %d bytes is too long: the length must be below 2^31", n)
	}
	dst = binary.BigEndian.AppendUint32(dst, absorbFlag+uint32(n))
	dst = binary.BigEndian.AppendUint32(dst, 32)
	return append(dst, tag...), nil
}

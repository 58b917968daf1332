package babyjub

import (
	"encoding/binary"
	"math/bits"
)

// The subset of BLAKE3 that EdDSA key expansion and nonce derivation need
// (doc/crypto.md §e "BLAKE3 subset"): the unkeyed hash of a single chunk
// (≤ 1024 bytes), read through the extendable output. Constants are from the
// BLAKE3 specification (BLAKE3-team/BLAKE3, blake3.pdf §2).

const (
	blake3BlockLen    = 64
	blake3ChunkLen    = 1024
	blake3ChunkStart  = 1
	blake3ChunkEnd    = 2
	blake3Root        = 8
	blake3OutBlockLen = 64
)

var blake3IV = [8]uint32{
	0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
	0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
}

var blake3MsgPermutation = [16]int{2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}

// blake3XOF fills out with the BLAKE3 extendable output of in.
// It panics if in is longer than one chunk: every caller in this package
// hashes 32 or 64 bytes.
func blake3XOF(out, in []byte) {
	if len(in) > blake3ChunkLen {
		panic("babyjub: blake3 input longer than one chunk")
	}
	h := blake3IV
	flags := uint32(blake3ChunkStart)
	// doc/crypto.md §e step 3: every block except the last is chained.
	for len(in) > blake3BlockLen {
		m := blake3Block(in[:blake3BlockLen])
		v := blake3Compress(&h, &m, 0, blake3BlockLen, flags)
		copy(h[:], v[:8])
		in = in[blake3BlockLen:]
		flags = 0
	}
	// Steps 4-6: the last block is the root; output block k uses counter k.
	m := blake3Block(in)
	flags |= blake3ChunkEnd | blake3Root
	var buf [blake3OutBlockLen]byte
	for counter := uint64(0); len(out) > 0; counter++ {
		v := blake3Compress(&h, &m, counter, uint32(len(in)), flags)
		for i, w := range v {
			binary.LittleEndian.PutUint32(buf[4*i:], w)
		}
		out = out[copy(out, buf[:]):]
	}
}

// blake3Block reads up to 64 bytes as 16 little-endian words, zero-padded.
func blake3Block(b []byte) [16]uint32 {
	var padded [blake3BlockLen]byte
	copy(padded[:], b)
	var m [16]uint32
	for i := range m {
		m[i] = binary.LittleEndian.Uint32(padded[4*i:])
	}
	return m
}

// blake3Schedule[r] lists the message words that round r reads: the
// message permutation applied r times (blake3.pdf §2.2).
var blake3Schedule = func() (s [7][16]uint8) {
	for i := range s[0] {
		s[0][i] = uint8(i)
	}
	for r := 1; r < len(s); r++ {
		for i, j := range blake3MsgPermutation {
			s[r][i] = s[r-1][j]
		}
	}
	return s
}()

// blake3Compress is the BLAKE3 compression function; it returns all 16
// output words (doc/crypto.md §e "Compression"). The state lives in locals so
// that it stays in registers.
func blake3Compress(h *[8]uint32, m *[16]uint32, counter uint64, blockLen, flags uint32) [16]uint32 {
	v0, v1, v2, v3, v4, v5, v6, v7 := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	v8, v9, v10, v11 := blake3IV[0], blake3IV[1], blake3IV[2], blake3IV[3]
	v12, v13, v14, v15 := uint32(counter), uint32(counter>>32), blockLen, flags
	for r := range blake3Schedule {
		s := &blake3Schedule[r]
		// Columns, then diagonals.
		v0, v4, v8, v12 = blake3G(v0, v4, v8, v12, m[s[0]&15], m[s[1]&15])
		v1, v5, v9, v13 = blake3G(v1, v5, v9, v13, m[s[2]&15], m[s[3]&15])
		v2, v6, v10, v14 = blake3G(v2, v6, v10, v14, m[s[4]&15], m[s[5]&15])
		v3, v7, v11, v15 = blake3G(v3, v7, v11, v15, m[s[6]&15], m[s[7]&15])
		v0, v5, v10, v15 = blake3G(v0, v5, v10, v15, m[s[8]&15], m[s[9]&15])
		v1, v6, v11, v12 = blake3G(v1, v6, v11, v12, m[s[10]&15], m[s[11]&15])
		v2, v7, v8, v13 = blake3G(v2, v7, v8, v13, m[s[12]&15], m[s[13]&15])
		v3, v4, v9, v14 = blake3G(v3, v4, v9, v14, m[s[14]&15], m[s[15]&15])
	}
	return [16]uint32{
		v0 ^ v8, v1 ^ v9, v2 ^ v10, v3 ^ v11, v4 ^ v12, v5 ^ v13, v6 ^ v14, v7 ^ v15,
		v8 ^ h[0], v9 ^ h[1], v10 ^ h[2], v11 ^ h[3], v12 ^ h[4], v13 ^ h[5], v14 ^ h[6], v15 ^ h[7],
	}
}

// blake3G is the quarter-round G (blake3.pdf §2.2).
func blake3G(a, b, c, d, mx, my uint32) (uint32, uint32, uint32, uint32) {
	a += b + mx
	d = bits.RotateLeft32(d^a, -16)
	c += d
	b = bits.RotateLeft32(b^c, -12)
	a += b + my
	d = bits.RotateLeft32(d^a, -8)
	c += d
	b = bits.RotateLeft32(b^c, -7)
	return a, b, c, d
}

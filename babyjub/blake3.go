package babyjub

import (
	"encoding/binary"
	"math/bits"
)

// The subset of BLAKE3 that EdDSA key expansion and nonce derivation need
// (crypto.md §e "BLAKE3 subset"): the unkeyed hash of a single chunk
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
	// crypto.md §e step 3: every block except the last is chained.
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

// blake3Compress is the BLAKE3 compression function; it returns all 16
// output words (crypto.md §e "Compression").
func blake3Compress(h *[8]uint32, block *[16]uint32, counter uint64, blockLen, flags uint32) [16]uint32 {
	v := [16]uint32{
		h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
		blake3IV[0], blake3IV[1], blake3IV[2], blake3IV[3],
		uint32(counter), uint32(counter >> 32), blockLen, flags,
	}
	m := *block
	for round := 0; round < 7; round++ {
		blake3Round(&v, &m)
		if round < 6 {
			m = blake3Permute(&m)
		}
	}
	for i := 0; i < 8; i++ {
		v[i] ^= v[i+8]
		v[i+8] ^= h[i]
	}
	return v
}

func blake3Round(v *[16]uint32, m *[16]uint32) {
	blake3G(v, 0, 4, 8, 12, m[0], m[1])
	blake3G(v, 1, 5, 9, 13, m[2], m[3])
	blake3G(v, 2, 6, 10, 14, m[4], m[5])
	blake3G(v, 3, 7, 11, 15, m[6], m[7])
	blake3G(v, 0, 5, 10, 15, m[8], m[9])
	blake3G(v, 1, 6, 11, 12, m[10], m[11])
	blake3G(v, 2, 7, 8, 13, m[12], m[13])
	blake3G(v, 3, 4, 9, 14, m[14], m[15])
}

func blake3G(v *[16]uint32, a, b, c, d int, mx, my uint32) {
	v[a] += v[b] + mx
	v[d] = bits.RotateLeft32(v[d]^v[a], -16)
	v[c] += v[d]
	v[b] = bits.RotateLeft32(v[b]^v[c], -12)
	v[a] += v[b] + my
	v[d] = bits.RotateLeft32(v[d]^v[a], -8)
	v[c] += v[d]
	v[b] = bits.RotateLeft32(v[b]^v[c], -7)
}

func blake3Permute(m *[16]uint32) [16]uint32 {
	var out [16]uint32
	for i, j := range blake3MsgPermutation {
		out[i] = m[j]
	}
	return out
}

package poseidon

import "github.com/consensys/gnark-crypto/ecc/bn254/fr"

// grain is the 80-bit Grain LFSR that derives Poseidon round constants and
// the Poseidon v1 MDS matrix (doc/crypto.md §c). Register bit b_i is bit i of lo
// for i < 64 and bit i−64 of hi otherwise.
type grain struct{ lo, hi uint64 }

// fieldBits is n, the bit size of p written into the register and the length
// of one candidate.
const fieldBits = 254

// newGrain loads the register for an x^5 instance over F_p with width t, rf
// full rounds and rp partial rounds, then runs the 160 warm-up steps.
func newGrain(t, rf, rp int) *grain {
	fields := [...]struct {
		value uint64
		bits  int
	}{
		{1, 2},           // field type: prime field
		{0, 4},           // S-box type: x^alpha
		{fieldBits, 12},  // field size n
		{uint64(t), 12},  // width
		{uint64(rf), 10}, // full rounds
		{uint64(rp), 10}, // partial rounds
		{1<<30 - 1, 30},  // padding
	}
	g := &grain{}
	i := 0
	for _, f := range fields {
		for k := f.bits - 1; k >= 0; k-- { // most significant bit first
			g.set(i, f.value>>k&1)
			i++
		}
	}
	for range 160 {
		g.step()
	}
	return g
}

func (g *grain) set(i int, b uint64) {
	if i < 64 {
		g.lo |= b << i
	} else {
		g.hi |= b << (i - 64)
	}
}

// step computes b62 ⊕ b51 ⊕ b38 ⊕ b23 ⊕ b13 ⊕ b0, shifts the register
// (dropping b0) and appends the new bit as b79.
func (g *grain) step() uint64 {
	b := (g.lo>>62 ^ g.lo>>51 ^ g.lo>>38 ^ g.lo>>23 ^ g.lo>>13 ^ g.lo) & 1
	g.lo = g.lo>>1 | g.hi<<63
	g.hi = g.hi>>1 | b<<15
	return b
}

// bit returns the next self-shrunk output bit: of each pair (a, b) of steps,
// b is emitted when a = 1 and the pair is discarded otherwise.
func (g *grain) bit() uint64 {
	for {
		a, b := g.step(), g.step()
		if a == 1 {
			return b
		}
	}
}

// candidate returns the next 254 output bits, first bit most significant, as
// a 32-byte big-endian integer.
func (g *grain) candidate() [fr.Bytes]byte {
	var out [fr.Bytes]byte
	for i := fieldBits - 1; i >= 0; i-- {
		out[fr.Bytes-1-i/8] |= byte(g.bit() << (i % 8))
	}
	return out
}

// roundConstant draws candidates until one is < p (rejection sampling).
func (g *grain) roundConstant() fr.Element {
	for {
		c := g.candidate()
		var x fr.Element
		if x.SetBytesCanonical(c[:]) == nil {
			return x
		}
	}
}

// reduced draws one candidate and reduces it mod p, as the MDS step does.
func (g *grain) reduced() fr.Element {
	c := g.candidate()
	var x fr.Element
	x.SetBytes(c[:])
	return x
}

package oidc

import (
	"errors"
	"fmt"
	"strings"
)

// A QR code encoder (ISO/IEC 18004:2015) for the wait page's wallet link:
// byte mode, error correction level M (15 % of the symbol recoverable),
// versions 1 to 40, the mask with the lowest penalty score (§7.8.3). The
// page renders it server-side as inline SVG, so no script or image load is
// needed under the page's CSP.

// Error correction level M (ISO/IEC 18004 Table 9): EC codewords per block
// and number of blocks, by version 1–40.
var (
	qrECPerBlock = [41]int{0,
		10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
		26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28}
	qrBlocks = [41]int{0,
		1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
		17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49}
)

const (
	qrFormatM     = 0 // EC level M in the format information (Table 12)
	qrModeByte    = 4 // 0100
	qrMaxVersion  = 40
	qrQuietZone   = 4 // modules of light border (§6.3.8)
	qrFormatPoly  = 0x537
	qrFormatMask  = 0x5412
	qrVersionPoly = 0x1f25
)

// qrCode is a square matrix of modules; true is dark.
type qrCode struct {
	size    int
	version int
	mask    int
	modules [][]bool
	fn      [][]bool // function patterns: not data
}

var errQRTooLong = errors.New("qr: data too long for a version 40-M symbol")

// encodeQR encodes data in the smallest version that holds it.
func encodeQR(data []byte) (*qrCode, error) {
	for v := 1; v <= qrMaxVersion; v++ {
		if 4+qrCountBits(v)+8*len(data) <= 8*qrDataCodewords(v) {
			return encodeQRVersion(data, v, -1)
		}
	}
	return nil, errQRTooLong
}

// encodeQRVersion encodes data in version v with the given mask, or the
// best mask when mask < 0.
func encodeQRVersion(data []byte, v, mask int) (*qrCode, error) {
	capacity := qrDataCodewords(v)
	if 4+qrCountBits(v)+8*len(data) > 8*capacity {
		return nil, fmt.Errorf("qr: %d bytes do not fit version %d-M", len(data), v)
	}
	var bits qrBits
	bits.put(qrModeByte, 4)
	bits.put(len(data), qrCountBits(v))
	for _, b := range data {
		bits.put(int(b), 8)
	}
	bits.put(0, min(4, 8*capacity-bits.n)) // terminator
	bits.put(0, (8-bits.n%8)%8)
	codewords := bits.bytes()
	for pad := byte(0xec); len(codewords) < capacity; pad ^= 0xec ^ 0x11 {
		codewords = append(codewords, pad)
	}
	q := newQR(v)
	q.drawCodewords(qrInterleave(codewords, v))
	if mask >= 0 {
		q.applyMask(mask)
		return q, nil
	}
	best, bestScore := 0, -1
	for m := range 8 {
		q.applyMask(m)
		if s := q.penalty(); bestScore < 0 || s < bestScore {
			best, bestScore = m, s
		}
		q.applyMask(m) // XOR undoes it
	}
	q.applyMask(best)
	return q, nil
}

// qrCountBits is the character count indicator length of byte mode
// (Table 3).
func qrCountBits(v int) int {
	if v <= 9 {
		return 8
	}
	return 16
}

// qrRawModules is the number of modules of version v left for data and
// EC codewords after the function patterns (and remainder bits).
func qrRawModules(v int) int {
	n := (16*v+128)*v + 64
	if v >= 2 {
		align := v/7 + 2
		n -= (25*align-10)*align - 55
		if v >= 7 {
			n -= 36
		}
	}
	return n
}

func qrDataCodewords(v int) int {
	return qrRawModules(v)/8 - qrECPerBlock[v]*qrBlocks[v]
}

// qrInterleave splits the data codewords into blocks, appends each
// block's Reed-Solomon EC codewords and interleaves them (§7.6).
func qrInterleave(data []byte, v int) []byte {
	nBlocks, ecLen := qrBlocks[v], qrECPerBlock[v]
	total := qrRawModules(v) / 8
	nShort := nBlocks - total%nBlocks
	shortLen := total/nBlocks - ecLen // data codewords of a short block
	gen := rsGenerator(ecLen)
	var blocks, ecs [][]byte
	for i, off := 0, 0; i < nBlocks; i++ {
		n := shortLen
		if i >= nShort {
			n++
		}
		blocks = append(blocks, data[off:off+n])
		ecs = append(ecs, rsRemainder(data[off:off+n], gen))
		off += n
	}
	var out []byte
	for i := 0; i <= shortLen; i++ {
		for j, b := range blocks {
			if i < shortLen || j >= nShort {
				out = append(out, b[i])
			}
		}
	}
	for i := range ecLen {
		for _, ec := range ecs {
			out = append(out, ec[i])
		}
	}
	return out
}

// GF(256) with the QR polynomial x^8+x^4+x^3+x^2+1 (0x11d), generator α=2.
func gfMul(a, b byte) byte {
	var r byte
	for ; b != 0; b >>= 1 {
		if b&1 != 0 {
			r ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1d
		}
	}
	return r
}

// rsGenerator is ∏(x − α^i), i < degree, coefficients from the highest
// power down, leading 1 omitted.
func rsGenerator(degree int) []byte {
	g := make([]byte, degree)
	g[degree-1] = 1
	root := byte(1)
	for range degree {
		for j := range g {
			g[j] = gfMul(g[j], root)
			if j+1 < len(g) {
				g[j] ^= g[j+1]
			}
		}
		root = gfMul(root, 2)
	}
	return g
}

// rsRemainder is data·x^degree mod the generator: the EC codewords.
func rsRemainder(data, gen []byte) []byte {
	r := make([]byte, len(gen))
	for _, b := range data {
		factor := b ^ r[0]
		copy(r, r[1:])
		r[len(r)-1] = 0
		for i, c := range gen {
			r[i] ^= gfMul(c, factor)
		}
	}
	return r
}

// qrBits accumulates a bit stream, most significant bit first.
type qrBits struct {
	buf []byte
	n   int
}

func (b *qrBits) put(v, n int) {
	for i := n - 1; i >= 0; i-- {
		if b.n%8 == 0 {
			b.buf = append(b.buf, 0)
		}
		if v>>i&1 != 0 {
			b.buf[b.n/8] |= 0x80 >> (b.n % 8)
		}
		b.n++
	}
}

func (b *qrBits) bytes() []byte { return b.buf }

// newQR draws the function patterns of version v (§6.3).
func newQR(v int) *qrCode {
	size := 17 + 4*v
	q := &qrCode{size: size, version: v, modules: make([][]bool, size), fn: make([][]bool, size)}
	for i := range size {
		q.modules[i] = make([]bool, size)
		q.fn[i] = make([]bool, size)
	}
	for i := range size { // timing patterns
		q.setFn(6, i, i%2 == 0)
		q.setFn(i, 6, i%2 == 0)
	}
	q.finder(3, 3)
	q.finder(size-4, 3)
	q.finder(3, size-4)
	pos := qrAlignment(v)
	for i, x := range pos {
		for j, y := range pos {
			if (i == 0 && j == 0) || (i == 0 && j == len(pos)-1) || (i == len(pos)-1 && j == 0) {
				continue // finder corners
			}
			q.alignment(x, y)
		}
	}
	q.drawFormat(0) // reserves the format areas; rewritten by applyMask
	q.drawVersion()
	return q
}

// setFn sets a function module at column x, row y.
func (q *qrCode) setFn(x, y int, dark bool) {
	q.modules[y][x] = dark
	q.fn[y][x] = true
}

// finder draws a finder pattern and its separator centred at (x, y).
func (q *qrCode) finder(x, y int) {
	for dy := -4; dy <= 4; dy++ {
		for dx := -4; dx <= 4; dx++ {
			xx, yy := x+dx, y+dy
			if xx < 0 || xx >= q.size || yy < 0 || yy >= q.size {
				continue
			}
			d := max(abs(dx), abs(dy))
			q.setFn(xx, yy, d != 2 && d != 4)
		}
	}
}

func (q *qrCode) alignment(x, y int) {
	for dy := -2; dy <= 2; dy++ {
		for dx := -2; dx <= 2; dx++ {
			q.setFn(x+dx, y+dy, max(abs(dx), abs(dy)) != 1)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// qrAlignment is the alignment pattern centre coordinates (Annex E): 6,
// then evenly spaced (an even step) up to size−7.
func qrAlignment(v int) []int {
	if v == 1 {
		return nil
	}
	n := v/7 + 2
	step := 26
	if v != 32 {
		step = (v*4 + n*2 + 1) / (n*2 - 2) * 2
	}
	pos := make([]int, n)
	pos[0] = 6
	for i, p := n-1, 17+4*v-7; i >= 1; i, p = i-1, p-step {
		pos[i] = p
	}
	return pos
}

// drawFormat writes the EC level and mask with their BCH(15,5) code
// (§7.9.1) in both copies, and the dark module.
func (q *qrCode) drawFormat(mask int) {
	data := qrFormatM<<3 | mask
	rem := data
	for range 10 {
		rem = rem<<1 ^ (rem>>9)*qrFormatPoly
	}
	bits := (data<<10 | rem) ^ qrFormatMask
	bit := func(i int) bool { return bits>>i&1 != 0 }
	for i := 0; i <= 5; i++ {
		q.setFn(8, i, bit(i))
	}
	q.setFn(8, 7, bit(6))
	q.setFn(8, 8, bit(7))
	q.setFn(7, 8, bit(8))
	for i := 9; i < 15; i++ {
		q.setFn(14-i, 8, bit(i))
	}
	for i := range 8 {
		q.setFn(q.size-1-i, 8, bit(i))
	}
	for i := 8; i < 15; i++ {
		q.setFn(8, q.size-15+i, bit(i))
	}
	q.setFn(8, q.size-8, true)
}

// drawVersion writes the version with its BCH(18,6) code (§7.10), v ≥ 7.
func (q *qrCode) drawVersion() {
	if q.version < 7 {
		return
	}
	rem := q.version
	for range 12 {
		rem = rem<<1 ^ (rem>>11)*qrVersionPoly
	}
	bits := q.version<<12 | rem
	for i := range 18 {
		dark := bits>>i&1 != 0
		a, b := q.size-11+i%3, i/3
		q.setFn(a, b, dark)
		q.setFn(b, a, dark)
	}
}

// drawCodewords places the bits in the two-column zigzag (§7.7.3).
func (q *qrCode) drawCodewords(data []byte) {
	i := 0
	for right := q.size - 1; right >= 1; right -= 2 {
		if right == 6 {
			right = 5
		}
		for vert := range q.size {
			for j := range 2 {
				x := right - j
				y := vert
				if (right+1)&2 == 0 {
					y = q.size - 1 - vert
				}
				if !q.fn[y][x] && i < len(data)*8 {
					q.modules[y][x] = data[i>>3]>>(7-i&7)&1 != 0
					i++
				}
			}
		}
	}
}

// applyMask XORs mask pattern m over the data modules (Table 10) and
// writes the matching format information; applying it twice undoes it,
// except for the format, which each call rewrites.
func (q *qrCode) applyMask(m int) {
	for y := range q.size {
		for x := range q.size {
			if !q.fn[y][x] && qrMaskBit(m, x, y) {
				q.modules[y][x] = !q.modules[y][x]
			}
		}
	}
	q.drawFormat(m)
	q.mask = m
}

func qrMaskBit(m, x, y int) bool {
	switch m {
	case 0:
		return (x+y)%2 == 0
	case 1:
		return y%2 == 0
	case 2:
		return x%3 == 0
	case 3:
		return (x+y)%3 == 0
	case 4:
		return (x/3+y/2)%2 == 0
	case 5:
		return x*y%2+x*y%3 == 0
	case 6:
		return (x*y%2+x*y%3)%2 == 0
	default:
		return ((x+y)%2+x*y%3)%2 == 0
	}
}

// penalty is the mask evaluation score (§7.8.3): runs of five or more,
// 2×2 blocks, finder-like patterns and dark/light imbalance.
func (q *qrCode) penalty() int {
	score := 0
	line := make([]bool, q.size)
	for _, horizontal := range []bool{true, false} {
		for a := range q.size {
			for b := range q.size {
				if horizontal {
					line[b] = q.modules[a][b]
				} else {
					line[b] = q.modules[b][a]
				}
			}
			score += qrLinePenalty(line)
		}
	}
	dark := 0
	for y := range q.size {
		for x := range q.size {
			if q.modules[y][x] {
				dark++
			}
			if x+1 < q.size && y+1 < q.size {
				c := q.modules[y][x]
				if q.modules[y][x+1] == c && q.modules[y+1][x] == c && q.modules[y+1][x+1] == c {
					score += 3
				}
			}
		}
	}
	total := q.size * q.size
	k := (abs(dark*20-total*10)+total-1)/total - 1
	return score + max(k, 0)*10
}

// qrLinePenalty scores runs (N1) and 1:1:3:1:1 finder-like patterns with
// four light modules on either side (N3) in one row or column.
func qrLinePenalty(line []bool) int {
	score, run := 0, 1
	for i := 1; i <= len(line); i++ {
		if i < len(line) && line[i] == line[i-1] {
			run++
			continue
		}
		if run >= 5 {
			score += run - 2
		}
		run = 1
	}
	pattern := []bool{true, false, true, true, true, false, true}
	for i := 0; i+7 <= len(line); i++ {
		match := true
		for j, want := range pattern {
			if line[i+j] != want {
				match = false
				break
			}
		}
		if match && (qrLight(line, i-4, i) || qrLight(line, i+7, i+11)) {
			score += 40
		}
	}
	return score
}

// qrLight reports whether line[from:to] is light, counting modules
// outside the symbol (the quiet zone) as light.
func qrLight(line []bool, from, to int) bool {
	for i := from; i < to; i++ {
		if i >= 0 && i < len(line) && line[i] {
			return false
		}
	}
	return true
}

// svg renders the symbol with its quiet zone as one path of unit squares,
// scaled by the viewBox; presentation attributes only (no style), so it
// renders under a CSP without 'unsafe-inline'.
func (q *qrCode) svg() string {
	var d strings.Builder
	for y := range q.size {
		for x := range q.size {
			if q.modules[y][x] {
				fmt.Fprintf(&d, "M%d %dh1v1h-1z", x+qrQuietZone, y+qrQuietZone)
			}
		}
	}
	n := q.size + 2*qrQuietZone
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" id="qr" role="img" aria-label="QR code of the sign-in request" viewBox="0 0 %d %d" width="%d" height="%d" shape-rendering="crispEdges"><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		n, n, n*6, n*6, n, n, d.String())
}

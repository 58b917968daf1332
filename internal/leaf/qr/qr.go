package qr

import (
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
)

// Error correction level M (ISO/IEC 18004 Table 9): EC codewords per block
// and number of blocks, by version 1–40.
var (
	ecPerBlock = [41]int{0,
		10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
		26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28}
	blockCount = [41]int{0,
		1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
		17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49}
)

const (
	formatM     = 0 // EC level M in the format information (Table 12)
	modeByte    = 4 // 0100
	maxVersion  = 40
	quietZone   = 4 // modules of light border (§6.3.8)
	formatPoly  = 0x537
	formatMask  = 0x5412
	versionPoly = 0x1f25
)

// Code is a square matrix of modules; true is dark.
type Code struct {
	size    int
	version int
	mask    int
	modules [][]bool
	fn      [][]bool // function patterns: not data
}

// ErrTooLong: the data exceeds the byte-mode capacity of a version 40-M
// symbol, 2331 bytes.
var ErrTooLong = errors.New("qr: data too long for a version 40-M symbol")

// Version is the symbol's version, 1 to 40: its size is 17 + 4·version
// modules without the quiet zone.
func (q *Code) Version() int { return q.version }

// Encode encodes data in the smallest version that holds it.
func Encode(data []byte) (*Code, error) {
	for v := 1; v <= maxVersion; v++ {
		if 4+countBits(v)+8*len(data) <= 8*dataCodewords(v) {
			return encodeVersion(data, v, -1)
		}
	}
	return nil, ErrTooLong
}

// encodeVersion encodes data in version v with the given mask, or the
// best mask when mask < 0.
func encodeVersion(data []byte, v, mask int) (*Code, error) {
	capacity := dataCodewords(v)
	if 4+countBits(v)+8*len(data) > 8*capacity {
		return nil, fmt.Errorf("qr: %d bytes do not fit version %d-M", len(data), v)
	}
	var bits bitBuffer
	bits.put(modeByte, 4)
	bits.put(len(data), countBits(v))
	for _, b := range data {
		bits.put(int(b), 8)
	}
	bits.put(0, min(4, 8*capacity-bits.n)) // terminator
	bits.put(0, (8-bits.n%8)%8)
	codewords := bits.bytes()
	for pad := byte(0xec); len(codewords) < capacity; pad ^= 0xec ^ 0x11 {
		codewords = append(codewords, pad)
	}
	q := newCode(v)
	q.drawCodewords(interleave(codewords, v))
	if mask >= 0 {
		q.applyMask(mask)
		return q, nil
	}
	q.applyMask(q.bestMask())
	return q, nil
}

// countBits is the character count indicator length of byte mode
// (Table 3).
func countBits(v int) int {
	if v <= 9 {
		return 8
	}
	return 16
}

// rawModules is the number of modules of version v left for data and
// EC codewords after the function patterns (and remainder bits).
func rawModules(v int) int {
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

func dataCodewords(v int) int {
	return rawModules(v)/8 - ecPerBlock[v]*blockCount[v]
}

// interleave splits the data codewords into blocks, appends each
// block's Reed-Solomon EC codewords and interleaves them (§7.6).
func interleave(data []byte, v int) []byte {
	nBlocks, ecLen := blockCount[v], ecPerBlock[v]
	total := rawModules(v) / 8
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
	if a == 0 || b == 0 {
		return 0
	}
	return gf.exp[int(gf.log[a])+int(gf.log[b])]
}

// gf holds GF(2^8)'s exponentials of α = 2 (twice over, so a sum of two
// logarithms indexes it directly) and logarithms, computed once.
var gf = gfTables()

type gfTable struct {
	exp [510]byte
	log [256]byte
}

func gfTables() gfTable {
	var t gfTable
	x := byte(1)
	for i := range 255 {
		t.exp[i], t.exp[i+255] = x, x
		t.log[x] = byte(i)
		hi := x & 0x80
		x <<= 1
		if hi != 0 {
			x ^= 0x1d
		}
	}
	return t
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

// bitBuffer accumulates a bit stream, most significant bit first.
type bitBuffer struct {
	buf []byte
	n   int
}

func (b *bitBuffer) put(v, n int) {
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

func (b *bitBuffer) bytes() []byte { return b.buf }

// newCode draws the function patterns of version v (§6.3).
func newCode(v int) *Code {
	size := 17 + 4*v
	q := &Code{size: size, version: v, modules: squareMatrix(size), fn: squareMatrix(size)}
	for i := range size { // timing patterns
		q.setFn(6, i, i%2 == 0)
		q.setFn(i, 6, i%2 == 0)
	}
	q.finder(3, 3)
	q.finder(size-4, 3)
	q.finder(3, size-4)
	pos := alignmentPositions(v)
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

// squareMatrix is size rows of size modules over one array.
func squareMatrix(size int) [][]bool {
	cells := make([]bool, size*size)
	m := make([][]bool, size)
	for i := range m {
		m[i] = cells[i*size : (i+1)*size : (i+1)*size]
	}
	return m
}

// setFn sets a function module at column x, row y.
func (q *Code) setFn(x, y int, dark bool) {
	q.modules[y][x] = dark
	q.fn[y][x] = true
}

// finder draws a finder pattern and its separator centred at (x, y).
func (q *Code) finder(x, y int) {
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

func (q *Code) alignment(x, y int) {
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

// alignmentPositions is the alignment pattern centre coordinates (Annex E): 6,
// then evenly spaced (an even step) up to size−7.
func alignmentPositions(v int) []int {
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
func (q *Code) drawFormat(mask int) { formatModules(q.size, mask, q.setFn) }

// formatModules calls set for every module of the format information of
// level M and the mask (§7.9.1, both copies) and for the dark module.
func formatModules(size, mask int, set func(x, y int, dark bool)) {
	data := formatM<<3 | mask
	rem := data
	for range 10 {
		rem = rem<<1 ^ (rem>>9)*formatPoly
	}
	bits := (data<<10 | rem) ^ formatMask
	bit := func(i int) bool { return bits>>i&1 != 0 }
	for i := 0; i <= 5; i++ {
		set(8, i, bit(i))
	}
	set(8, 7, bit(6))
	set(8, 8, bit(7))
	set(7, 8, bit(8))
	for i := 9; i < 15; i++ {
		set(14-i, 8, bit(i))
	}
	for i := range 8 {
		set(size-1-i, 8, bit(i))
	}
	for i := 8; i < 15; i++ {
		set(8, size-15+i, bit(i))
	}
	set(8, size-8, true)
}

// drawVersion writes the version with its BCH(18,6) code (§7.10), v ≥ 7.
func (q *Code) drawVersion() {
	if q.version < 7 {
		return
	}
	rem := q.version
	for range 12 {
		rem = rem<<1 ^ (rem>>11)*versionPoly
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
func (q *Code) drawCodewords(data []byte) {
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
func (q *Code) applyMask(m int) {
	for y := range q.size {
		for x := range q.size {
			if !q.fn[y][x] && maskBit(m, x, y) {
				q.modules[y][x] = !q.modules[y][x]
			}
		}
	}
	q.drawFormat(m)
	q.mask = m
}

func maskBit(m, x, y int) bool {
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

// SVG renders the symbol with its quiet zone as one path of unit squares,
// scaled by the viewBox, with the element id and the accessible label
// given (both HTML-escaped); presentation attributes only (no style), so it
// renders under a CSP without 'unsafe-inline'.
func (q *Code) SVG(id, label string) string {
	id, label = html.EscapeString(id), html.EscapeString(label)
	n := strconv.Itoa(q.size + 2*quietZone)
	px := strconv.Itoa((q.size + 2*quietZone) * 6)
	var b strings.Builder
	b.Grow(svgMarkup + len(id) + len(label) + q.darkModules()*len("M181 181h1v1h-1z"))
	for _, s := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg" id="`, id, `" role="img" aria-label="`, label,
		`" viewBox="0 0 `, n, ` `, n, `" width="`, px, `" height="`, px,
		`" shape-rendering="crispEdges"><rect width="`, n, `" height="`, n,
		`" fill="#fff"/><path fill="#000" d="`,
	} {
		b.WriteString(s)
	}
	var rowTail [16]byte
	for y, row := range q.modules {
		// " <y>h1v1h-1z" ends every square of the row.
		tail := append(append(append(rowTail[:0], ' '), decimals[y+quietZone]...), "h1v1h-1z"...)
		for x, dark := range row {
			if dark {
				b.WriteByte('M')
				b.WriteString(decimals[x+quietZone])
				b.Write(tail)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return b.String()
}

// decimals holds the SVG coordinates 0 to 184 in decimal, computed once.
var decimals = decimalStrings(maxSize + 2*quietZone)

func decimalStrings(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}

// svgMarkup bounds the length of SVG's markup besides the id, the label and
// the path data: 203 bytes and six sizes of at most 4 digits.
const svgMarkup = 227

func (q *Code) darkModules() int {
	dark := 0
	for _, row := range q.modules {
		for _, d := range row {
			if d {
				dark++
			}
		}
	}
	return dark
}

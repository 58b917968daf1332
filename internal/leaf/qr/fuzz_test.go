package qr

import (
	"errors"
	"strings"
	"testing"
)

// FuzzEncode encodes arbitrary bytes: every input up to the capacity
// gives the smallest symbol that holds it, with intact finder patterns,
// format information that names the chosen mask, and an SVG
// that draws exactly its dark modules; longer inputs give ErrTooLong.
func FuzzEncode(f *testing.F) {
	for _, seed := range []string{"", "a", "https://world.org/verify?t=wld&i=x", strings.Repeat("\xff", 200), strings.Repeat("0", 2331), strings.Repeat("0", 2332)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := Encode(data)
		if len(data) > 2331 {
			if !errors.Is(err, ErrTooLong) {
				t.Fatalf("%d bytes: err %v, want ErrTooLong", len(data), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if q.size != 17+4*q.version || !fits(len(data), q.version) || q.version > 1 && fits(len(data), q.version-1) {
			t.Fatalf("%d bytes in version %d (size %d)", len(data), q.version, q.size)
		}
		for _, corner := range [][2]int{{0, 0}, {q.size - 7, 0}, {0, q.size - 7}} {
			if !isFinder(q.modules, corner[0], corner[1]) {
				t.Fatalf("no finder pattern at %v", corner)
			}
		}
		if m := referenceMask(q.modules); m != q.mask || q.mask < 0 || q.mask > 7 {
			t.Fatalf("format information names mask %d, symbol uses %d", m, q.mask)
		}
		path := svgPath.FindStringSubmatch(q.SVG("qr", "QR code"))
		if path == nil {
			t.Fatal("no SVG path")
		}
		if diff := diffModules(decodeSVGModules(t, path[1], q.size), q.modules); diff != "" {
			t.Fatal(diff)
		}
	})
}

// fits reports whether n bytes fit in version v (mode, count, data).
func fits(n, v int) bool { return 4+countBits(v)+8*n <= 8*dataCodewords(v) }

// isFinder checks the 7×7 finder pattern at (x, y) (§6.3.3): dark ring,
// light ring, dark 3×3 centre.
func isFinder(m [][]bool, x, y int) bool {
	for dy := range 7 {
		for dx := range 7 {
			ring := max(abs(dx-3), abs(dy-3))
			if m[y+dy][x+dx] != (ring != 2) {
				return false
			}
		}
	}
	return true
}

package qr

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestQRMatchesReference compares every module of our symbols with
// symbols made by libqrencode 4.1.1 (testdata/qr, testdata/SOURCES.md) for
// the same data, version and mask: function patterns, format and version
// information, the EC tables, Reed-Solomon, interleaving and placement.
func TestQRMatchesReference(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/qr/*.txt")
	if len(files) < 8 {
		t.Fatalf("found %d reference symbols", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want := readReference(t, file)
			data := must(os.ReadFile(strings.TrimSuffix(file, ".txt") + ".in"))
			v := (len(want) - 17) / 4
			q, err := encodeVersion(data, v, referenceMask(want))
			if err != nil {
				t.Fatal(err)
			}
			if diff := diffModules(q.modules, want); diff != "" {
				t.Fatalf("version %d mask %d: %s", v, q.mask, diff)
			}
			if best, _ := Encode(data); best.version != v {
				t.Errorf("Encode chose version %d, the reference %d", best.version, v)
			}
		})
	}
}

func readReference(t *testing.T, file string) [][]bool {
	var m [][]bool
	for _, line := range strings.Fields(string(must(os.ReadFile(file)))) {
		row := make([]bool, len(line))
		for i, c := range line {
			row[i] = c == '1'
		}
		m = append(m, row)
	}
	for _, row := range m {
		if len(row) != len(m) || (len(m)-17)%4 != 0 {
			t.Fatalf("%s: not a QR symbol", file)
		}
	}
	return m
}

// referenceMask reads the mask from the first copy of the format
// information (ISO/IEC 18004 §7.9.1).
func referenceMask(m [][]bool) int {
	bit := func(x, y int) int {
		if m[y][x] {
			return 1
		}
		return 0
	}
	bits := 0
	for i := 0; i <= 5; i++ {
		bits |= bit(8, i) << i
	}
	bits |= bit(8, 7)<<6 | bit(8, 8)<<7 | bit(7, 8)<<8
	for i := 9; i < 15; i++ {
		bits |= bit(14-i, 8) << i
	}
	return (bits ^ formatMask) >> 10 & 7
}

func diffModules(got, want [][]bool) string {
	var diffs []string
	for y := range want {
		for x := range want {
			if got[y][x] != want[y][x] {
				diffs = append(diffs, fmt.Sprintf("(%d,%d)", x, y))
			}
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("%d modules differ, first %v", len(diffs), diffs[:min(10, len(diffs))])
}

func TestQRCapacity(t *testing.T) {
	// Byte-mode capacities at level M (ISO/IEC 18004 Table 7).
	for v, want := range map[int]int{1: 14, 2: 26, 9: 180, 10: 213, 20: 666, 40: 2331} {
		got := (8*dataCodewords(v) - 4 - countBits(v)) / 8
		if got != want {
			t.Errorf("version %d-M holds %d bytes, want %d", v, got, want)
		}
	}
	if _, err := Encode(make([]byte, 2332)); err != ErrTooLong {
		t.Fatalf("2332 bytes: %v", err)
	}
	q, err := Encode(make([]byte, 2331))
	if err != nil || q.version != 40 {
		t.Fatalf("2331 bytes: %v", err)
	}
}

// TestQRDecodes scans rendered symbols with zbarimg (Debian zbar-tools),
// an independent decoder, when it is installed.
func TestQRDecodes(t *testing.T) {
	zbar, err := exec.LookPath("zbarimg")
	if err != nil {
		t.Skip("zbarimg not installed (apt-get install zbar-tools); TestQRMatchesReference still checks every module")
	}
	for _, n := range []int{1, 40, 200, 400, 1000} {
		data := []byte(strings.Repeat("https://world.org/verify?t=wld&i=Zx9-", n)[:n])
		q, err := Encode(data)
		if err != nil {
			t.Fatal(err)
		}
		img := filepath.Join(t.TempDir(), "qr.pgm")
		if err := os.WriteFile(img, q.pgm(4), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(zbar, "--raw", "-q", "-Sbinary", img).Output()
		if err != nil || !bytes.Equal(bytes.TrimSuffix(out, []byte("\n")), data) {
			t.Fatalf("%d bytes, version %d: zbarimg read %q (%v)", n, q.version, out, err)
		}
	}
}

// pgm renders the symbol with its quiet zone, scale pixels per module.
func (q *Code) pgm(scale int) []byte {
	n := (q.size + 2*quietZone) * scale
	var b bytes.Buffer
	fmt.Fprintf(&b, "P5 %d %d 255\n", n, n)
	for py := range n {
		for px := range n {
			x, y := px/scale-quietZone, py/scale-quietZone
			if x >= 0 && y >= 0 && x < q.size && y < q.size && q.modules[y][x] {
				b.WriteByte(0)
			} else {
				b.WriteByte(255)
			}
		}
	}
	return b.Bytes()
}

var svgPath = regexp.MustCompile(`<path fill="#000" d="([^"]*)"/>`)

// TestQRSVG checks that the SVG draws exactly the dark modules.
func TestQRSVG(t *testing.T) {
	q := must(Encode([]byte("https://world.org/verify?t=wld&i=x")))
	m := svgPath.FindStringSubmatch(q.SVG("qr", "QR code"))
	if m == nil || strings.Contains(q.SVG("qr", "QR code"), "style") {
		t.Fatalf("svg: %s", q.SVG("qr", "QR code"))
	}
	got := decodeSVGModules(t, m[1], q.size)
	if diff := diffModules(got, q.modules); diff != "" {
		t.Fatal(diff)
	}
}

// decodeSVGModules reads back the unit squares "M<x> <y>h1v1h-1z".
func decodeSVGModules(t testing.TB, d string, size int) [][]bool {
	t.Helper()
	m := make([][]bool, size)
	for i := range m {
		m[i] = make([]bool, size)
	}
	for _, sq := range strings.Split(strings.TrimSuffix(d, "z"), "z") {
		var x, y int
		if _, err := fmt.Sscanf(sq, "M%d %dh1v1h-1", &x, &y); err != nil {
			t.Fatalf("svg path element %q: %v", sq, err)
		}
		m[y-quietZone][x-quietZone] = true
	}
	return m
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package vectors

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Dir returns the vectors directory: $WORLDID_VECTORS, else the pinned copy.
func Dir(t testing.TB) string { return dir() }

func dir() string {
	if d := os.Getenv("WORLDID_VECTORS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "testdata", "vectors")
}

// read reads the named file from dir(), or from the pinned copy when a
// substituted directory lacks it: files this repository added (such as
// world_id_4.json) are not in every vector set.
func read(name string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir(), name))
	if errors.Is(err, fs.ErrNotExist) {
		b, err = os.ReadFile(filepath.Join(repoRoot(), "testdata", "vectors", name))
	}
	return b, err
}

// repoRoot is the module root, found from this source file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Load decodes the named vector file into v, failing the test on any error.
func Load(t testing.TB, name string, v any) {
	t.Helper()
	b, err := read(name)
	if err != nil {
		t.Fatalf("vectors: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("vectors: %s: %v", name, err)
	}
}

// tally counts processed vectors per file for the whole test binary.
var tally = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// Counter counts the vectors one test processed from one file.
type Counter struct {
	file string
	n    int
}

// NewCounter registers file as used by this test binary. With the pinned
// copy, whose every list holds vectors, a test that processes none fails
// (its loader is broken). With substituted files ($WORLDID_VECTORS) its
// list may be empty; Main then fails only a file that holds no vector.
func NewCounter(t testing.TB, file string) *Counter {
	tally.Lock()
	tally.n[file] += 0
	tally.Unlock()
	c := &Counter{file: file}
	if os.Getenv("WORLDID_VECTORS") == "" {
		t.Cleanup(func() {
			if c.n == 0 {
				t.Errorf("vectors: processed zero vectors from %s", file)
			}
		})
	}
	return c
}

// Inc records one processed vector.
func (c *Counter) Inc() {
	c.n++
	tally.Lock()
	tally.n[c.file]++
	tally.Unlock()
}

// Main runs the tests and then fails the binary if a file some test
// counted yielded no vector here and holds none in any of its lists
// ("zero vectors is a failure"). Use it as
//
//	func TestMain(m *testing.M) { os.Exit(vectors.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	tally.Lock()
	defer tally.Unlock()
	var empty []string
	for file, n := range tally.n {
		if n == 0 && fileVectors(file) == 0 {
			empty = append(empty, file)
		}
	}
	sort.Strings(empty)
	for _, file := range empty {
		fmt.Fprintf(os.Stderr, "vectors: %s holds no vector\n", file)
	}
	if len(empty) > 0 {
		return 1
	}
	return 0
}

// Hex decodes a hex string from a vector file, failing the test if it is
// malformed.
func Hex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vectors: bad hex %q: %v", s, err)
	}
	return b
}

// fileVectors counts the vectors (objects in lists) in the named file of
// $WORLDID_VECTORS, or the pinned copy; an unreadable file counts none.
func fileVectors(name string) int {
	b, err := read(name)
	if err != nil {
		return 0
	}
	var doc any
	if json.Unmarshal(b, &doc) != nil {
		return 0
	}
	return countObjectsInLists(doc)
}

func countObjectsInLists(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, m := range v {
			n += countObjectsInLists(m)
		}
	case []any:
		for _, e := range v {
			if _, ok := e.(map[string]any); ok {
				n++
			}
			n += countObjectsInLists(e)
		}
	}
	return n
}

// Element reads a field element of a vector file: decimal digits, or 0x
// and hex digits of either case, below the BN254 scalar field modulus;
// anything else fails the test.
func Element(t testing.TB, s string) fr.Element {
	t.Helper()
	digits, base := s, 10
	if rest, ok := strings.CutPrefix(s, "0x"); ok {
		digits, base = rest, 16
	}
	n, ok := new(big.Int).SetString(digits, base)
	if !ok || digits == "" || digits[0] == '+' || digits[0] == '-' || n.Cmp(fr.Modulus()) >= 0 {
		t.Fatalf("vectors: %q is not a field element", s)
	}
	var e fr.Element
	e.SetBigInt(n)
	return e
}

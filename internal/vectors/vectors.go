package vectors

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the vectors directory.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("WORLDID_VECTORS"); d != "" {
		return d
	}
	shared := filepath.Join(repoRoot(t), "..", "shared", "vectors")
	if st, err := os.Stat(shared); err == nil && st.IsDir() {
		return shared
	}
	return localDir(t)
}

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("vectors: cannot locate source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// localDir is the repository's own copy, testdata/vectors.
func localDir(t testing.TB) string { return filepath.Join(repoRoot(t), "testdata", "vectors") }

// Load decodes the named vector file into v, failing the test on any error.
// A file that Dir lacks is read from testdata/vectors: vectors this
// repository added (e.g. world_id_4.json) are not in the shared set.
func Load(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(t), name))
	if os.IsNotExist(err) {
		b, err = os.ReadFile(filepath.Join(localDir(t), name))
	}
	if err != nil {
		t.Fatalf("vectors: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("vectors: %s: %v", name, err)
	}
}

// Counter fails the test at cleanup if no vector was processed, as required
// by the vectors README ("zero vectors is a failure").
type Counter struct{ n int }

// NewCounter returns a counter that fails t if Inc was never called.
func NewCounter(t testing.TB, file string) *Counter {
	c := &Counter{}
	t.Cleanup(func() {
		if c.n == 0 {
			t.Errorf("vectors: processed zero vectors from %s", file)
		}
	})
	return c
}

// Inc records one processed vector.
func (c *Counter) Inc() { c.n++ }

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

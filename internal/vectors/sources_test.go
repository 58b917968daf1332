package vectors

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// sourceRow is a row of testdata/SOURCES.md's vectors table: file, digest.
var sourceRow = regexp.MustCompile("(?m)^\\| ([^ |]+) \\| `([0-9a-f]{64})` \\|")

// TestSourcesListEveryPinnedVector: every file of testdata/vectors is listed
// in testdata/SOURCES.md with its SHA-256, and every listed file exists.
func TestSourcesListEveryPinnedVector(t *testing.T) {
	root := repoRoot()
	md, err := os.ReadFile(filepath.Join(root, "testdata", "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, m := range sourceRow.FindAllSubmatch(md, -1) {
		listed[string(m[1])] = string(m[2])
	}
	dir := filepath.Join(root, "testdata", "vectors")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		switch want, ok := listed[e.Name()]; {
		case !ok:
			t.Errorf("testdata/vectors/%s is not listed in testdata/SOURCES.md", e.Name())
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("testdata/vectors/%s: SHA-256 %x, SOURCES.md says %s", e.Name(), sum, want)
		}
		delete(listed, e.Name())
	}
	for name := range listed {
		t.Errorf("SOURCES.md lists %s, which testdata/vectors does not hold", name)
	}
	if len(entries) < 10 {
		t.Fatalf("only %d pinned vector files", len(entries))
	}
}

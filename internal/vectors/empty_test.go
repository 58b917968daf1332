package vectors

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadersAcceptEmptyLists runs every package that reads vectors against
// two substituted directories: in each file with two or more lists of
// vectors, variant 0 empties the even-numbered lists and variant 1 the odd
// ones, so every list is once empty while its file still holds vectors.
// A loader that indexes into a list or counts per list fails here.
func TestLoadersAcceptEmptyLists(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on every package that reads vectors")
	}
	pkgs, tests := vectorTests(t)
	run := "^(" + strings.Join(tests, "|") + ")$"
	for variant := range 2 {
		dir := t.TempDir()
		writeVariant(t, dir, variant)
		cmd := exec.Command("go", append([]string{"test", "-short", "-count=1", "-run", run}, pkgs...)...)
		cmd.Dir = repoRoot()
		cmd.Env = append(os.Environ(), "WORLDID_VECTORS="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("variant %d: %v\n%s", variant, err, out)
		}
	}
}

// vectorTests lists the packages whose tests read vectors, except the
// process tests (they start the binary; their packages' own loaders are
// covered), and the names of the tests that reach package vectors through
// their own bodies or the test helpers they call.
func vectorTests(t *testing.T) (pkgs, tests []string) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}} {{join .TestGoFiles ","}},{{join .XTestGoFiles ","}}`, "./...")
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] == "worldid/internal/e2e" || f[0] == "worldid/internal/vectors" {
			continue
		}
		found := testsReachingVectors(t, f[1], strings.Split(f[2], ","))
		if len(found) > 0 {
			pkgs = append(pkgs, f[0])
		}
		for _, n := range found {
			names[n] = true
		}
	}
	for n := range names {
		tests = append(tests, n)
	}
	if len(pkgs) < 5 || len(tests) < 20 {
		t.Fatalf("only %d packages and %d tests read vectors", len(pkgs), len(tests))
	}
	return pkgs, tests
}

// testsReachingVectors parses a package's test files and returns its Test
// functions that call into package vectors, directly or through the
// package's other test-file functions.
func testsReachingVectors(t *testing.T, dir string, files []string) []string {
	calls := map[string][]string{} // function → the identifiers it uses
	fset := token.NewFileSet()
	for _, name := range files {
		if name == "" {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "vectors" {
						calls[fn.Name.Name] = append(calls[fn.Name.Name], "vectors.")
					} else {
						calls[fn.Name.Name] = append(calls[fn.Name.Name], n.Sel.Name)
					}
				case *ast.Ident:
					calls[fn.Name.Name] = append(calls[fn.Name.Name], n.Name)
				}
				return true
			})
		}
	}
	reaches := map[string]bool{"vectors.": true}
	for changed := true; changed; {
		changed = false
		for fn, used := range calls {
			if reaches[fn] {
				continue
			}
			if slices.ContainsFunc(used, func(u string) bool { return reaches[u] }) {
				reaches[fn], changed = true, true
			}
		}
	}
	var tests []string
	for fn := range calls {
		if reaches[fn] && strings.HasPrefix(fn, "Test") && fn != "TestMain" {
			tests = append(tests, fn)
		}
	}
	return tests
}

// writeVariant copies the vectors directory into dir, emptying every
// other list of vectors in files that have at least two.
func writeVariant(t *testing.T, dir string, variant int) {
	src := Dir(t)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".json") {
			b = emptyAlternateLists(t, b, variant)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func emptyAlternateLists(t *testing.T, b []byte, variant int) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // keep big integers exactly as written
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var lists []func()
	collectLists(doc, &lists)
	if len(lists) < 2 {
		return b
	}
	for i, empty := range lists {
		if i%2 == variant {
			empty()
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// collectLists appends, for every object member holding a non-empty list
// of objects (a list of vectors), a function that empties it.
func collectLists(v any, lists *[]func()) {
	switch v := v.(type) {
	case map[string]any:
		for k, member := range v {
			if l, ok := member.([]any); ok && len(l) > 0 {
				if _, isObj := l[0].(map[string]any); isObj {
					*lists = append(*lists, func() { v[k] = []any{} })
					continue
				}
			}
			collectLists(member, lists)
		}
	case []any:
		for _, e := range v {
			collectLists(e, lists)
		}
	}
}

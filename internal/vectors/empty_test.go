package vectors

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
	pkgs, tests, _ := vectorTests(t)
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

// TestVectorPackagesRunMain: every package whose tests read vectors runs
// them through vectors.Main, so a file that yields no vector fails there.
func TestVectorPackagesRunMain(t *testing.T) {
	_, _, noMain := vectorTests(t)
	for _, pkg := range noMain {
		t.Errorf("%s reads vectors but its TestMain does not call vectors.Main", pkg)
	}
}

// TestVariantsEmptyEveryList: in every pinned file with two or more lists,
// each list is empty in exactly one variant, and no variant empties all.
func TestVariantsEmptyEveryList(t *testing.T) {
	entries, err := os.ReadDir(Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(Dir(t), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all := listPaths(t, b)
		if len(all) < 2 {
			continue
		}
		checked++
		var kept [2][]string
		for variant := range 2 {
			kept[variant] = listPaths(t, emptyAlternateLists(t, b, variant))
			if len(kept[variant]) == 0 {
				t.Errorf("%s: variant %d empties every list", e.Name(), variant)
			}
		}
		for _, p := range all {
			if slices.Contains(kept[0], p) == slices.Contains(kept[1], p) {
				t.Errorf("%s: list %s is not empty in exactly one variant", e.Name(), p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no pinned file has two lists of vectors")
	}
}

// listPaths returns the paths of the non-empty lists of vectors in b.
func listPaths(t *testing.T, b []byte) []string {
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var lists []vectorList
	collectLists(doc, "", &lists)
	var paths []string
	for _, l := range lists {
		paths = append(paths, l.path)
	}
	return paths
}

// vectorTests lists the packages whose tests read vectors, except the
// process tests (they start the binary; their packages' own loaders are
// covered), the names of the tests that reach package vectors through
// their own bodies or the test helpers they call, and the packages among
// them whose TestMain does not call vectors.Main.
func vectorTests(t *testing.T) (pkgs, tests, noMain []string) {
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
		found, callsMain := testsReachingVectors(t, f[1], strings.Split(f[2], ","))
		if len(found) > 0 {
			pkgs = append(pkgs, f[0])
			if !callsMain {
				noMain = append(noMain, f[0])
			}
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
	return pkgs, tests, noMain
}

// testsReachingVectors parses a package's test files and returns its Test
// functions that call into package vectors, directly or through the
// package's other test-file functions, and whether its TestMain calls
// vectors.Main.
func testsReachingVectors(t *testing.T, dir string, files []string) (tests []string, callsMain bool) {
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
						callsMain = callsMain || fn.Name.Name == "TestMain" && n.Sel.Name == "Main"
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
	for fn := range calls {
		if reaches[fn] && strings.HasPrefix(fn, "Test") && fn != "TestMain" {
			tests = append(tests, fn)
		}
	}
	return tests, callsMain
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
	var lists []vectorList
	collectLists(doc, "", &lists)
	if len(lists) < 2 {
		return b
	}
	for i, l := range lists {
		if i%2 == variant {
			l.empty()
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// vectorList is a list of vectors: its path in the document (member
// names and indexes) and a function that empties it.
type vectorList struct {
	path  string
	empty func()
}

// collectLists appends every object member holding a non-empty list of
// objects (a list of vectors), in document order with members sorted by
// name, so both variants number the lists of a file alike.
func collectLists(v any, path string, lists *[]vectorList) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			member, p := v[k], path+"/"+k
			if l, ok := member.([]any); ok && len(l) > 0 {
				if _, isObj := l[0].(map[string]any); isObj {
					*lists = append(*lists, vectorList{p, func() { v[k] = []any{} }})
					continue
				}
			}
			collectLists(member, p, lists)
		}
	case []any:
		for i, e := range v {
			collectLists(e, path+"/"+strconv.Itoa(i), lists)
		}
	}
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzTargetsInFuzzFiles: every fuzz target lives in its package's
// fuzz_test.go, so a reader finds all of a package's targets in one file.
func TestFuzzTargetsInFuzzFiles(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fuzzFiles := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, name := range f[1:] {
			if name == "fuzz_test.go" {
				fuzzFiles++
				continue
			}
			for _, fn := range fuzzTargets(t, filepath.Join(f[0], name)) {
				t.Errorf("%s: %s belongs in fuzz_test.go", filepath.Join(f[0], name), fn)
			}
		}
	}
	if fuzzFiles < 10 {
		t.Fatalf("only %d fuzz_test.go files found", fuzzFiles)
	}
}

func fuzzTargets(t *testing.T, path string) []string {
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
			names = append(names, fn.Name.Name)
		}
	}
	return names
}

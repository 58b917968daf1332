package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// derivedTables are rebuilt by Restore from exported rows: the rp_id index
// from apps, the commitment index and tree sizes from leaves, the user
// code index from device grants.
var derivedTables = []string{tableRPs, tableLeafIndex, tableTreeSizes, tableDeviceUserCodes}

// TestEveryTableIsBackedUp reads the package's source: every table it
// writes (a constant named table…, the only first argument of the Tx
// methods) is exported or derived, so that a new table cannot silently be
// missing from backups and migrations.
func TestEveryTableIsBackedUp(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	exported := map[string]bool{}
	for _, e := range exportTables {
		exported[e.kv] = true
	}
	txMethods := []string{"Get", "Put", "Insert", "Increment", "Delete", "Scan", "Count"}
	tablesSeen := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if !strings.HasPrefix(name.Name, "table") || i >= len(n.Values) {
						continue
					}
					lit, ok := n.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					table, _ := strconv.Unquote(lit.Value)
					tablesSeen++
					if !exported[table] && !slices.Contains(derivedTables, table) {
						t.Errorf("%s: table %q (%s) is neither in exportTables nor derived: backups would miss it", fset.Position(name.Pos()), table, name.Name)
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !slices.Contains(txMethods, sel.Sel.Name) || len(n.Args) == 0 {
					return true
				}
				if recv, ok := sel.X.(*ast.Ident); !ok || recv.Name != "tx" {
					return true
				}
				if arg, ok := n.Args[0].(*ast.Ident); !ok || !strings.HasPrefix(arg.Name, "table") {
					t.Errorf("%s: tx.%s names its table other than by a table… constant", fset.Position(n.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
	if tablesSeen < len(exportTables)+len(derivedTables) {
		t.Fatalf("found %d table constants, fewer than the %d exported and derived tables", tablesSeen, len(exportTables)+len(derivedTables))
	}
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Import direction (design.md §2): crypto packages depend only on the
// standard library, gnark-crypto (semaphore: also gnark and x/crypto's
// legacy Keccak) and lower crypto packages; handlers declare the storage
// interface they need and never import a backend or each other; only the
// wiring (package main and internal/server) puts handlers and backends
// together, and the commands (internal/cli) reach the admin API through its
// client.
var (
	cryptoPkgs  = []string{"worldid/field", "worldid/poseidon", "worldid/babyjub", "worldid/semaphore", "worldid/credential", "worldid/oprfproof"}
	handlerPkgs = []string{"worldid/admin", "worldid/oidc", "worldid/refresh", "worldid/verify"}
	backendPkgs = []string{"worldid/store", "worldid/store/postgres"}
	wiringPkgs  = []string{"worldid", "worldid/internal/server"}
)

// allowedExternal lists, per crypto package, the non-stdlib import prefixes.
var allowedExternal = map[string][]string{
	"worldid/semaphore": {"github.com/consensys/gnark-crypto/", "github.com/consensys/gnark/", "golang.org/x/crypto/sha3"},
}

func isStdlib(path string) bool {
	return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !strings.HasPrefix(path, "worldid")
}

// checkImports returns every violation in a package → direct-imports map.
func checkImports(imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		for _, dep := range deps {
			if why := forbidden(pkg, dep); why != "" {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s", pkg, dep, why))
			}
		}
	}
	return bad
}

func forbidden(pkg, dep string) string {
	switch {
	case hasPkg(cryptoPkgs, pkg):
		if dep == "net/http" || dep == "log/slog" || strings.HasPrefix(dep, "net/http/") {
			return "crypto packages do no I/O or logging"
		}
		if strings.HasPrefix(dep, "worldid/") {
			if !hasPkg(cryptoPkgs, dep) {
				return "crypto packages import only other crypto packages of this module"
			}
			return ""
		}
		if isStdlib(dep) || strings.HasPrefix(dep, "github.com/consensys/gnark-crypto/") {
			return ""
		}
		for _, prefix := range allowedExternal[pkg] {
			if strings.HasPrefix(dep, prefix) || dep == strings.TrimSuffix(prefix, "/") {
				return ""
			}
		}
		return "not an allowed dependency of a crypto package"
	case hasPkg(handlerPkgs, pkg):
		if hasPkg(backendPkgs, dep) {
			return "handlers declare the storage interface they need; only main wires a backend"
		}
		if hasPkg(handlerPkgs, dep) {
			return "handlers do not import each other"
		}
	case hasPkg(backendPkgs, pkg):
		if hasPkg(handlerPkgs, dep) {
			return "backends implement handler interfaces without importing handlers"
		}
	case pkg == "worldid/record":
		if !isStdlib(dep) {
			return "record holds plain data and imports only the standard library"
		}
	case pkg == "worldid/internal/cli" && dep == "worldid/admin":
		return "" // the admin API's client
	case !hasPkg(wiringPkgs, pkg) && (hasPkg(backendPkgs, dep) || hasPkg(handlerPkgs, dep)) && !strings.HasPrefix(pkg, dep+"/"):
		return "only the wiring (main, internal/server) puts handlers and backends together"
	}
	return ""
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		imports[f[0]] = f[1:]
	}
	if len(imports) < 5 {
		t.Fatalf("go list found only %d packages", len(imports))
	}
	for _, v := range checkImports(imports) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations proves the checker can fail.
func TestImportRulesCatchViolations(t *testing.T) {
	for pkg, dep := range map[string]string{
		"worldid/poseidon":        "net/http",
		"worldid/babyjub":         "worldid/store",
		"worldid/field":           "github.com/consensys/gnark/frontend",
		"worldid/verify":          "worldid/store",
		"worldid/oidc":            "worldid/verify",
		"worldid/store":           "worldid/oidc",
		"worldid/record":          "github.com/consensys/gnark-crypto/ecc/bn254/fr",
		"worldid/internal/wallet": "worldid/store",
		"worldid/semaphore":       "github.com/iden3/go-iden3-crypto/poseidon",
	} {
		if len(checkImports(map[string][]string{pkg: {dep}})) != 1 {
			t.Errorf("%s → %s not reported", pkg, dep)
		}
	}
	for _, edge := range [][2]string{
		{"worldid/semaphore", "github.com/consensys/gnark/backend/groth16"},
		{"worldid/semaphore", "golang.org/x/crypto/sha3"},
		{"worldid/babyjub", "worldid/poseidon"},
		{"worldid", "worldid/store"},
		{"worldid/internal/server", "worldid/store/postgres"},
		{"worldid/internal/cli", "worldid/admin"},
		{"worldid/store/storetest", "worldid/store"},
		{"worldid/verify", "worldid/semaphore"},
	} {
		if v := checkImports(map[string][]string{edge[0]: {edge[1]}}); len(v) != 0 {
			t.Errorf("%s → %s wrongly reported: %v", edge[0], edge[1], v)
		}
	}
}

func hasPkg(list []string, s string) bool { return slices.Contains(list, s) }

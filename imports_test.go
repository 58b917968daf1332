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

// Import direction (doc/design.md §2): crypto packages depend only on the
// standard library, gnark-crypto (semaphore: also x/crypto's legacy Keccak;
// semaphore/prover: gnark) and lower crypto packages; handlers declare the
// storage interface they need and never import a backend or each other;
// only the wiring (package main and internal/server) puts handlers and
// backends together, and the commands (internal/cli) reach the admin API
// through its client. gnark itself (not gnark-crypto) is linked only by the
// prover, the wallet, the wiring and the commands.
var (
	cryptoPkgs  = []string{"worldid/field", "worldid/poseidon", "worldid/babyjub", "worldid/semaphore", "worldid/semaphore/prover", "worldid/credential", "worldid/oprfproof"}
	handlerPkgs = []string{"worldid/admin", "worldid/oidc", "worldid/refresh", "worldid/verify"}
	backendPkgs = []string{"worldid/store", "worldid/store/postgres"}
	wiringPkgs  = []string{"worldid", "worldid/internal/server"}
)

// allowedExternal lists, per crypto package, the non-stdlib import prefixes.
var allowedExternal = map[string][]string{
	"worldid/semaphore":        {"golang.org/x/crypto/sha3"},
	"worldid/semaphore/prover": {"github.com/consensys/gnark/"},
}

const proverPkg = "worldid/semaphore/prover"

// linksGnark: gnark (not gnark-crypto), directly or through the prover.
func linksGnark(dep string) bool {
	return dep == "github.com/consensys/gnark" || strings.HasPrefix(dep, "github.com/consensys/gnark/") || dep == proverPkg
}

// mayLinkGnark: the prover, the wallet, the developer simulator (it proves
// for its test identities), the commands and the wiring (for the first
// start's setup).
func mayLinkGnark(pkg string) bool {
	return slices.Contains([]string{proverPkg, "worldid/internal/wallet", "worldid/internal/simulator", "worldid/internal/cli", "worldid/internal/server"}, pkg)
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
	if linksGnark(dep) && !mayLinkGnark(pkg) {
		return "only the prover, the wallet, the simulator, the commands and the wiring link gnark; verifiers use gnark-crypto"
	}
	switch {
	case hasPkg(cryptoPkgs, pkg):
		if dep == "net/http" || dep == "log/slog" || strings.HasPrefix(dep, "net/http/") {
			return "crypto packages do no I/O or logging"
		}
		if dep == "worldid/internal/strictjson" {
			return "" // stdlib-only JSON checking, for credential.Parse
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
	case pkg == "worldid/internal/strictjson":
		if !isStdlib(dep) {
			return "crypto packages import strictjson, so it imports only the standard library"
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
	if len(checkImports(map[string][]string{"worldid/internal/strictjson": {"worldid/field"}})) != 1 {
		t.Error("worldid/internal/strictjson → worldid/field not reported")
	}
	// gnark, directly or through the prover, outside the prover, the
	// wallet, the commands and the wiring.
	for _, edge := range [][2]string{
		{"worldid/semaphore", "github.com/consensys/gnark/backend/groth16"},
		{"worldid/registry", "github.com/consensys/gnark/frontend"},
		{"worldid/oidc", proverPkg},
		{"worldid/internal/strictjson", "github.com/consensys/gnark"},
		{"worldid/internal/server/sub", proverPkg},
		{"worldid", proverPkg},
		{"worldid/semaphore/prover", "github.com/iden3/go-iden3-crypto/poseidon"},
	} {
		if v := checkImports(map[string][]string{edge[0]: {edge[1]}}); len(v) != 1 {
			t.Errorf("%s → %s: %d violations, want 1", edge[0], edge[1], len(v))
		}
	}
	for _, edge := range [][2]string{
		{"worldid/semaphore/prover", "github.com/consensys/gnark/backend/groth16/bn254"},
		{"worldid/semaphore/prover", "worldid/semaphore"},
		{"worldid/internal/wallet", proverPkg},
		{"worldid/internal/cli", "github.com/consensys/gnark/frontend"},
		{"worldid/internal/server", proverPkg},
		{"worldid/semaphore", "github.com/consensys/gnark-crypto/ecc/bn254"},
		{"worldid/semaphore", "golang.org/x/crypto/sha3"},
		{"worldid/babyjub", "worldid/poseidon"},
		{"worldid/credential", "worldid/internal/strictjson"},
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

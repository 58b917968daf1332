package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Import direction (doc/design.md §2): the ground floor, internal/leaf/…,
// imports only the standard library, and every package may import it;
// crypto packages depend only on the standard library, gnark-crypto
// (semaphore: also x/crypto's legacy Keccak; semaphore/prover: gnark),
// lower crypto packages and the ground floor; handlers declare the
// storage interface they need and never import a backend or each other;
// only the wiring (package main and internal/server) puts handlers and
// backends together, and the commands (internal/cli, the load tools in
// internal/bench, and cmd/…) reach the admin API through its client. gnark
// itself (not gnark-crypto) is linked, directly or through any chain of
// imports, only by the prover, the wallet, the simulator, the commands and
// the wiring. The binary operators deploy (package main) never links the
// load tools.
// The QR encoder and the page templates live on the ground floor (they
// know nothing of the protocol); oidc and signin meet through interfaces
// the wiring fills; the HTTP ground floor of the handlers
// (internal/httpapi) imports only the standard library and record.
var (
	cryptoPkgs  = []string{"worldid/field", "worldid/poseidon", "worldid/babyjub", "worldid/semaphore", "worldid/semaphore/prover", "worldid/credential", "worldid/oprfproof", "worldid/bridge/rpsig"}
	handlerPkgs = []string{"worldid/admin", "worldid/oidc", "worldid/refresh", "worldid/signin", "worldid/verify", "worldid/bridge/relay"}
	backendPkgs = []string{"worldid/store", "worldid/store/engine", "worldid/store/postgres"}
	wiringPkgs  = []string{"worldid", "worldid/internal/server"}
	commandPkgs = []string{"worldid/internal/cli", benchPkg}
)

const benchPkg = "worldid/internal/bench"

// isCommand: the commands' packages and the main packages of the commands
// besides worldid (cmd/…).
func isCommand(pkg string) bool {
	return hasPkg(commandPkgs, pkg) || strings.HasPrefix(pkg, "worldid/cmd/")
}

// allowedExternal lists, per crypto package, the non-stdlib import prefixes.
var allowedExternal = map[string][]string{
	"worldid/semaphore":        {"golang.org/x/crypto/sha3"},
	"worldid/semaphore/prover": {"github.com/consensys/gnark/"},
	"worldid/bridge/rpsig":     {"golang.org/x/crypto/sha3"},
}

const proverPkg = "worldid/semaphore/prover"

// leafFloor is internal/'s ground floor: plumbing (the strict JSON parser)
// that imports only the standard library, so that every package, crypto
// included, may import it.
const leafFloor = "worldid/internal/leaf/"

func isLeaf(pkg string) bool { return strings.HasPrefix(pkg, leafFloor) }

// isGnark: gnark's packages; gnark-crypto is a different module path.
func isGnark(pkg string) bool {
	return pkg == "github.com/consensys/gnark" || strings.HasPrefix(pkg, "github.com/consensys/gnark/")
}

// mayLinkGnark: the prover, the wallet, the developer simulator (it proves
// for its test identities), the commands and the wiring (main and
// internal/server, for the first start's setup). Test code is not checked:
// its fixtures prove.
func mayLinkGnark(pkg string) bool {
	return isCommand(pkg) || slices.Contains([]string{proverPkg, "worldid/internal/wallet", "worldid/internal/simulator", "worldid/internal/server", "worldid"}, pkg)
}

// checkGnark returns, for each package of this module outside mayLinkGnark,
// the shortest chain of imports that links gnark, in a package → direct
// imports map covering every dependency (go list -deps).
func checkGnark(imports map[string][]string) []string {
	var bad []string
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		if !isModule(pkg) || mayLinkGnark(pkg) {
			continue
		}
		if chain := importChain(imports, pkg, isGnark); chain != nil {
			bad = append(bad, fmt.Sprintf("%s links gnark through %s: only the prover, the wallet, the simulator, the commands and the wiring link gnark; verifiers use gnark-crypto", pkg, strings.Join(chain, " → ")))
		}
	}
	return bad
}

// checkDeployed returns the chain of imports through which the binary
// operators deploy (package main) links the load tools, if it does.
func checkDeployed(imports map[string][]string) []string {
	if chain := importChain(imports, "worldid", func(p string) bool { return p == benchPkg }); chain != nil {
		return []string{fmt.Sprintf("worldid links the load tools through %s: they are cmd/worldid-bench's, not the deployed binary's", strings.Join(chain, " → "))}
	}
	return nil
}

// importChain walks the imports breadth first from pkg and returns the
// first path to a package that match accepts, pkg excluded, or nil.
func importChain(imports map[string][]string, pkg string, match func(string) bool) []string {
	parent := map[string]string{pkg: ""}
	for queue := []string{pkg}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		if p != pkg && match(p) {
			var chain []string
			for ; p != pkg; p = parent[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, dep := range imports[p] {
			if _, seen := parent[dep]; !seen {
				parent[dep] = p
				queue = append(queue, dep)
			}
		}
	}
	return nil
}

func isModule(pkg string) bool { return pkg == "worldid" || strings.HasPrefix(pkg, "worldid/") }

func isStdlib(path string) bool {
	return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !strings.HasPrefix(path, "worldid")
}

// checkImports returns every violation of the direct-import rules in a
// package → direct-imports map.
func checkImports(imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		if !isModule(pkg) {
			continue
		}
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
	case dep == "worldid/internal/fakechain":
		return "internal/fakechain is test support: only tests import it"
	case isLeaf(pkg):
		if !isStdlib(dep) {
			return "the ground floor (internal/leaf/…) imports only the standard library, so that every package may import it"
		}
	case isLeaf(dep):
		return ""
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
			return "handlers declare the storage interface they need; only the wiring (main, internal/server) puts a backend in place"
		}
		if hasPkg(handlerPkgs, dep) {
			return "handlers do not import each other"
		}
	case hasPkg(backendPkgs, pkg):
		if hasPkg(handlerPkgs, dep) {
			return "backends implement handler interfaces without importing handlers"
		}
	case pkg == "worldid/internal/httpapi":
		if !isStdlib(dep) && dep != "worldid/record" {
			return "the HTTP ground floor is a leaf under every handler: it imports only the standard library and record's storage sentinels"
		}
	case pkg == "worldid/record":
		if !isStdlib(dep) {
			return "record holds plain data and imports only the standard library"
		}
	case pkg == "worldid/bridge":
		if !isStdlib(dep) {
			return "bridge holds the Wallet Bridge protocol's data and imports only the standard library"
		}
	case isCommand(pkg) && dep == "worldid/admin":
		return "" // the admin API's client
	case pkg == benchPkg && dep == "worldid/store":
		return "" // the token benchmark mints codes into an offline data directory (bench.MintCodes)
	case !hasPkg(wiringPkgs, pkg) && (hasPkg(backendPkgs, dep) || hasPkg(handlerPkgs, dep)) && !strings.HasPrefix(pkg, dep+"/"):
		return "only the wiring (main, internal/server) puts handlers and backends together"
	}
	return ""
}

func TestImportRules(t *testing.T) {
	// -deps lists every package the module's packages link, each with its
	// direct imports, so the gnark rule sees chains through other modules.
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		imports[f[0]] = f[1:]
	}
	if n := len(slices.DeleteFunc(slices.Collect(maps.Keys(imports)), func(p string) bool { return !isModule(p) })); n < 5 {
		t.Fatalf("go list found only %d packages of this module", n)
	}
	if importChain(imports, "worldid", isGnark) == nil {
		t.Fatal("the import graph does not show the binary linking gnark; the gnark rule would pass vacuously")
	}
	if importChain(imports, "worldid/cmd/worldid-bench", func(p string) bool { return p == benchPkg }) == nil {
		t.Fatal("the import graph does not show worldid-bench linking the load tools; the deployed-binary rule would pass vacuously")
	}
	for _, v := range slices.Concat(checkImports(imports), checkGnark(imports), checkDeployed(imports)) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations proves the checkers can fail.
func TestImportRulesCatchViolations(t *testing.T) {
	for _, edge := range [][2]string{
		{"worldid/poseidon", "net/http"},
		{"worldid/babyjub", "worldid/store"},
		{"worldid/field", "github.com/consensys/gnark/frontend"},
		{"worldid/semaphore", "github.com/consensys/gnark/backend/groth16"},
		{"worldid/semaphore/prover", "github.com/iden3/go-iden3-crypto/poseidon"},
		{"worldid/verify", "worldid/store"},
		{"worldid/internal/server", "worldid/internal/fakechain"},
		{"worldid/oidc", "worldid/verify"},
		{"worldid/oidc", "worldid/signin"},
		{"worldid/signin", "worldid/oidc"},
		{"worldid/signin", "worldid/store/postgres"},
		{"worldid/internal/leaf/qr", "worldid/record"},
		{"worldid/internal/leaf/page", "worldid/internal/oauth"},
		{"worldid/internal/leaf/page", "worldid/oidc"},
		{"worldid/internal/oauth", "worldid/signin"},
		{"worldid/store", "worldid/oidc"},
		{"worldid/oidc", "worldid/store/engine"},
		{"worldid/store/engine", "worldid/verify"},
		{"worldid/record", "github.com/consensys/gnark-crypto/ecc/bn254/fr"},
		{"worldid/internal/wallet", "worldid/store"},
		{"worldid/semaphore", "github.com/iden3/go-iden3-crypto/poseidon"},
		{"worldid/internal/httpapi", "worldid/verify"},
		{"worldid/internal/httpapi", "worldid/field"},
		{"worldid/internal/httpapi", "github.com/consensys/gnark-crypto/ecc/bn254/fr"},
		{"worldid/bridge/relay", "worldid/store/postgres"},
		{"worldid/bridge", "worldid/field"},
		{"worldid/bridge/rpsig", "net/http"},
		{"worldid/internal/leaf/strictjson", "worldid/field"},
		{"worldid/internal/leaf/strictjson", "worldid/internal/leaf/other"},
		{"worldid/internal/leaf/new", "github.com/example/helper"},
		{"worldid/credential", "worldid/internal/strictjson"}, // internal/, not its ground floor
		{"worldid/poseidon", "worldid/internal/httpapi"},
		{"worldid/internal/bench", "worldid/store/postgres"}, // only the JSON store's offline code minting
		{"worldid/internal/bench", "worldid/oidc"},
	} {
		if len(checkImports(map[string][]string{edge[0]: {edge[1]}})) != 1 {
			t.Errorf("%s → %s not reported", edge[0], edge[1])
		}
	}
	for _, edge := range [][2]string{
		{"worldid/semaphore/prover", "github.com/consensys/gnark/backend/groth16/bn254"},
		{"worldid/semaphore/prover", "worldid/semaphore"},
		{"worldid/semaphore", "github.com/consensys/gnark-crypto/ecc/bn254"},
		{"worldid/semaphore", "golang.org/x/crypto/sha3"},
		{"worldid/babyjub", "worldid/poseidon"},
		{"worldid/credential", "worldid/internal/leaf/strictjson"},
		{"worldid/poseidon", "worldid/internal/leaf/new"},
		{"worldid/verify", "worldid/internal/leaf/strictjson"},
		{"worldid/internal/leaf/strictjson", "unicode/utf16"},
		{"worldid", "worldid/store"},
		{"worldid/internal/server", "worldid/store/postgres"},
		{"worldid/internal/cli", "worldid/admin"},
		{"worldid/internal/bench", "worldid/admin"},
		{"worldid/internal/bench", "worldid/internal/cli"},
		{"worldid/internal/bench", "worldid/store"},
		{"worldid/store/storetest", "worldid/store"},
		{"worldid/store", "worldid/store/engine"},
		{"worldid/verify", "worldid/semaphore"},
		{"worldid/internal/leaf/page", "html/template"},
		{"worldid/signin", "worldid/internal/oauth"},
		{"worldid/oidc", "worldid/internal/oauth"},
		{"worldid/internal/oauth", "worldid/internal/leaf/page"},
		{"worldid/internal/server", "worldid/signin"},
		{"worldid/internal/httpapi", "worldid/record"},
		{"worldid/internal/httpapi", "log/slog"},
		{"worldid/verify", "worldid/internal/httpapi"},
		{"worldid/registry", "worldid/internal/httpapi"},
		{"worldid/bridge/rpsig", "golang.org/x/crypto/sha3"},
		{"worldid/bridge/relay/relaytest", "worldid/bridge/relay"},
	} {
		if v := checkImports(map[string][]string{edge[0]: {edge[1]}}); len(v) != 0 {
			t.Errorf("%s → %s wrongly reported: %v", edge[0], edge[1], v)
		}
	}

	// gnark, directly or through any chain, outside the prover, the wallet,
	// the simulator, the commands and the wiring: each edge is added to a
	// graph where the prover imports gnark and the others import the prover.
	graph := func(edge [2]string) map[string][]string {
		g := map[string][]string{
			proverPkg:                   {"github.com/consensys/gnark/frontend"},
			"worldid/internal/wallet":   {proverPkg},
			"worldid/internal/server":   {proverPkg},
			"worldid/semaphore":         {"github.com/consensys/gnark-crypto/ecc/bn254"},
			"github.com/example/helper": {"github.com/consensys/gnark/std"},
		}
		g[edge[0]] = append(slices.Clone(g[edge[0]]), edge[1])
		return g
	}
	for _, edge := range [][2]string{
		{"worldid/semaphore", "github.com/consensys/gnark/backend/groth16"},
		{"worldid/registry", "github.com/consensys/gnark/frontend"},
		{"worldid/oidc", proverPkg},
		{"worldid/oidc", "worldid/internal/wallet"},
		{"worldid/refresh", "worldid/internal/server"},
		{"worldid/verify", "github.com/example/helper"},
		{"worldid/internal/leaf/strictjson", "github.com/consensys/gnark"},
		{"worldid/internal/server/sub", proverPkg},
	} {
		if v := checkGnark(graph(edge)); len(v) != 1 {
			t.Errorf("%s → %s: %d gnark violations, want 1: %v", edge[0], edge[1], len(v), v)
		}
	}
	for _, edge := range [][2]string{
		{proverPkg, "github.com/consensys/gnark/backend/groth16/bn254"},
		{"worldid/internal/wallet", "github.com/consensys/gnark/std"},
		{"worldid/internal/cli", "github.com/consensys/gnark/frontend"},
		{"worldid/internal/bench", "worldid/internal/server"},
		{"worldid/cmd/worldid-bench", "worldid/internal/bench"},
		{"worldid/internal/simulator", proverPkg},
		{"worldid", "worldid/internal/server"},
		{"worldid/oidc", "worldid/semaphore"},
		{"worldid/record", "github.com/consensys/gnark-crypto/ecc/bn254/fr"},
	} {
		if v := checkGnark(graph(edge)); len(v) != 0 {
			t.Errorf("%s → %s wrongly reported: %v", edge[0], edge[1], v)
		}
	}

	// The deployed binary links the load tools neither directly nor
	// through any chain; worldid-bench does.
	for _, g := range []map[string][]string{
		{"worldid": {benchPkg}},
		{"worldid": {"worldid/internal/cli"}, "worldid/internal/cli": {"worldid/internal/helper"}, "worldid/internal/helper": {benchPkg}},
	} {
		if len(checkDeployed(g)) != 1 {
			t.Errorf("worldid linking the load tools in %v not reported", g)
		}
	}
	if v := checkDeployed(map[string][]string{"worldid": {"worldid/internal/cli"}, "worldid/cmd/worldid-bench": {benchPkg, "worldid/internal/cli"}}); len(v) != 0 {
		t.Errorf("worldid-bench linking the load tools wrongly reported: %v", v)
	}
}

func hasPkg(list []string, s string) bool { return slices.Contains(list, s) }

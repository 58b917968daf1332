package e2e

import (
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"worldid/admin"
	"worldid/internal/wallet"
)

// identityBatches adds commitments from arguments and a file through
// `identity add`: one batch request per admin.MaxIdentitiesPerRequest, each
// atomic, and a malformed or repeated commitment refused before any is sent.
func identityBatches(t *testing.T, run func(wantStatus int, args ...string) string) {
	list := filepath.Join(t.TempDir(), "commitments")
	var lines strings.Builder
	for i := range admin.MaxIdentitiesPerRequest + 1 {
		fmt.Fprintf(&lines, "%d\n\n", 1000+i) // blank lines are skipped
	}
	if err := os.WriteFile(list, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(0, "identity", "add", "-json", "-identifier", "device", "-file", list, "0x2b")
	var added []admin.AddedIdentity
	if err := json.Unmarshal([]byte(out), &added); err != nil || len(added) != 2 ||
		added[0].Count != admin.MaxIdentitiesPerRequest || added[1].Count != 2 || added[1].Index != added[0].Index+admin.MaxIdentitiesPerRequest {
		t.Fatalf("identity add of %d commitments: %v\n%s", admin.MaxIdentitiesPerRequest+2, err, out)
	}
	next := added[1].Index + 2
	run(1, "identity", "add", "-identifier", "device", "0x2c", "44")   // one commitment twice
	run(1, "identity", "add", "-identifier", "device", "0x2c", "0x2b") // 0x2b is in the tree
	run(1, "identity", "add", "-identifier", "device", "0x2c", "0x2g")
	out = run(0, "identity", "add", "-identifier", "device", "0x2c", "0x2d")
	if want := fmt.Sprintf("added 2 to device/production at indexes %d to %d;", next, next+1); !strings.Contains(out, want) {
		t.Fatalf("after refused batches: %s, want %q", out, want)
	}
}

// operatorCLI runs the admin subcommands of the built binary against the
// server, checking output and exit statuses (1 for refused, 2 for usage).
func operatorCLI(t *testing.T, p *serverProc, dataDir string) {
	run := func(wantStatus int, args ...string) string {
		t.Helper()
		return adminCLI(t, p, dataDir, wantStatus, args...)
	}
	created := run(0, "app", "create", "-json", "-name", "cli", "-redirect-uri", "https://cli.example/cb")
	var app admin.CreatedApp
	if err := json.Unmarshal([]byte(created), &app); err != nil || !strings.HasPrefix(app.ClientSecret, "sk_") {
		t.Fatalf("app create -json: %q %v", created, err)
	}
	if out := run(0, "app", "list"); !strings.Contains(out, app.AppID) || strings.Contains(out, app.ClientSecret) {
		t.Fatalf("app list:\n%s", out)
	}
	if out := run(0, "identity", "add", "-identifier", "device", "0x2a"); !strings.Contains(out, "device/production at index") {
		t.Fatalf("identity add: %s", out)
	}
	run(1, "identity", "add", "-identifier", "device", "42") // the same commitment, in decimal
	run(1, "identity", "add", "-identifier", "passport", "0x2b")
	run(2, "identity", "add")
	identityBatches(t, run)
	run(2, "identity", "remove", "0x2b")
	run(0, "action", "limit", "-rp", app.RPID, "-action", "cli", "-max", "3")
	run(0, "keys", "rotate")
	if kids := jwksKids(t, p); len(kids) != 2 {
		t.Errorf("after rotation JWKS has %d keys, want the current and the next", len(kids))
	}
	run(0, "refresh", "disable")
	run(0, "refresh", "enable")
	err := exec.Command(worldidBinary(t), "serve", "-data", t.TempDir(), "-addr", "nonsense", "-log-level", "loud").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("invalid serve flags: %v, want exit status 2", err)
	}
}

// ---- Admin and registry ----

func (e *hostileEnv) adminCases(t *testing.T) []hostileCase {
	token := e.p.adminClient.Token
	bearer := "Bearer " + token
	const ct = "application/json"
	adminCall := func(method, path, body string, header ...string) func(*testing.T) reply {
		contentType := ""
		if body != "" {
			contentType = ct
		}
		return call(method, e.p.adm+path, contentType, body, append([]string{"Authorization", bearer}, header...)...)
	}
	bad := func(name, path, body string) hostileCase {
		return hostileCase{name: name, send: adminCall(http.MethodPost, path, body), status: 400, code: "bad_request"}
	}
	importCall := func(lines ...string) func(*testing.T) reply {
		return call(http.MethodPost, e.p.adm+"/admin/apps/import", "application/x-ndjson", strings.Join(lines, "\n")+"\n", "Authorization", bearer)
	}
	badImport := func(name string, lines ...string) hostileCase {
		return hostileCase{name: name, send: importCall(lines...), status: 400, code: "bad_request"}
	}
	fresh := `{"app_id":"app_00000000000000000000000000000002","rp_id":"rp_0000000000000002","name":"y","redirect_uris":[]}`
	unauthenticated := func(name, authorization string) hostileCase {
		return hostileCase{name: name, send: call(http.MethodGet, e.p.adm+"/admin/apps", "", "", "Authorization", authorization), status: 401, code: "unauthenticated"}
	}
	signups := make([]string, 201)
	for i := range signups {
		signups[i] = fmt.Sprintf(`{"id_commitment":"0x%064x","signup_id":"s%d","verified_at":"2024-01-01T00:00:00Z"}`, i+1, i)
	}
	return []hostileCase{
		unauthenticated("no token", ""),
		unauthenticated("wrong token", "Bearer "+strings.Repeat("0", len(token))),
		unauthenticated("token with a suffix", bearer+"x"),
		unauthenticated("token prefix", bearer[:len(bearer)-1]),
		unauthenticated("lower-case scheme", "bearer "+token),
		{name: "token in the query", send: call(http.MethodGet, e.p.adm+"/admin/apps?token="+token, "", ""), status: 401, code: "unauthenticated"},
		{name: "text/plain", send: call(http.MethodPost, e.p.adm+"/admin/apps", "text/plain", `{"name":"x","redirect_uris":["https://a.example/cb"]}`, "Authorization", bearer), status: 415, code: "unsupported_media_type"},
		{name: "over 64 KiB", send: adminCall(http.MethodPost, "/admin/apps", `{"name":"`+strings.Repeat("x", 64<<10)+`"}`), status: 413, code: "too_large"},
		{name: "DELETE", send: adminCall(http.MethodDelete, "/admin/apps", ""), status: 405, code: "method_not_allowed"},
		{name: "unknown route", send: adminCall(http.MethodGet, "/admin/%2e%2e/admin/apps", ""), status: 404, code: "not_found"},
		bad("unknown member", "/admin/apps", `{"name":"x","redirect_uris":["https://a.example/cb"],"secret":"s"}`),
		bad("trailing data", "/admin/apps", `{"name":"x","redirect_uris":["https://a.example/cb"]}{}`),
		bad("empty name", "/admin/apps", `{"name":"","redirect_uris":["https://a.example/cb"]}`),
		bad("javascript redirect", "/admin/apps", `{"name":"x","redirect_uris":["javascript:alert(1)"]}`),
		bad("http redirect off loopback", "/admin/apps", `{"name":"x","redirect_uris":["http://evil.example/cb"]}`),
		bad("redirect with a fragment", "/admin/apps", `{"name":"x","redirect_uris":["https://a.example/cb#f"]}`),
		bad("commitment equal to p", "/admin/identities", `{"identity_commitment":"`+bn254R+`"}`),
		bad("commitment with a leading zero", "/admin/identities", `{"identity_commitment":"042"}`),
		bad("identifier traversal", "/admin/identities", `{"identifier":"../orb","identity_commitment":"0x2a"}`),
		bad("root equal to p", "/admin/roots", `{"root":"`+bn254R+`"}`),
		bad("root depth 99", "/admin/roots", `{"root":"0x`+strings.Repeat("0", 63)+`1","depth":99}`),
		bad("root at ten years ahead", "/admin/roots", `{"root":"0x`+strings.Repeat("0", 63)+`1","at":"`+time.Now().AddDate(10, 0, 0).UTC().Format(time.RFC3339)+`"}`),
		bad("4.0 root at ten years ahead", "/admin/roots", `{"protocol_version":"4.0","root":"0x`+strings.Repeat("0", 63)+`1","at":"`+time.Now().AddDate(10, 0, 0).UTC().Format(time.RFC3339)+`"}`),
		bad("Orb key off the curve", "/admin/orbkeys", `{"orb_id":"o","public_key_pem":`+quoteJSON(offCurveOrbKeyPEM(t))+`}`),
		bad("Orb key not PEM", "/admin/orbkeys", `{"orb_id":"o","public_key_pem":"AAAA"}`),
		bad("signup commitment in upper case", "/admin/signups", `{"signups":[{"id_commitment":"0x`+strings.Repeat("A", 64)+`","signup_id":"s","verified_at":"2024-01-01T00:00:00Z"}]}`),
		bad("201 signups", "/admin/signups", `{"signups":[`+strings.Join(signups, ",")+`]}`),
		bad("rp id traversal", "/admin/actions", `{"rp_id":"../rp","action":"a","max_verifications":1}`),
		bad("negative limit", "/admin/actions", `{"rp_id":"`+e.rp.app.RPID+`","action":"a","max_verifications":-1}`),
		{name: "limit for an unknown rp", send: adminCall(http.MethodPost, "/admin/actions", `{"rp_id":"rp_0000000000000000","action":"a","max_verifications":1}`), status: 404, code: "not_found"},
		badImport("import: malformed app_id", fresh, `{"app_id":"app_staging_123","rp_id":"rp_0000000000000001","name":"x","redirect_uris":[]}`),
		badImport("import: upper-case rp_id", `{"app_id":"app_00000000000000000000000000000001","rp_id":"rp_000000000000000A","name":"x","redirect_uris":[]}`),
		badImport("import: staging id in production", `{"app_id":"app_staging_00000000000000000000000000000001","rp_id":"rp_0000000000000001","name":"x","redirect_uris":[],"environment":"production"}`),
		badImport("import: duplicate member", `{"app_id":"app_00000000000000000000000000000001","app_id":"app_00000000000000000000000000000002","rp_id":"rp_0000000000000001","name":"x","redirect_uris":[]}`),
		badImport("import: an id twice", fresh, strings.Replace(fresh, "rp_0000000000000002", "rp_0000000000000003", 1)),
		badImport("import: no apps", "", ""),
		{name: "import: JSON", send: adminCall(http.MethodPost, "/admin/apps/import", fresh), status: 415, code: "unsupported_media_type"},
		{name: "import: taken app_id", send: importCall(fresh, `{"app_id":"`+e.rp.app.AppID+`","rp_id":"rp_0000000000000001","name":"x","redirect_uris":[]}`), status: 409, code: "conflict"},
		{name: "import: taken rp_id", send: importCall(fresh, `{"app_id":"app_00000000000000000000000000000001","rp_id":"`+e.rp.app.RPID+`","name":"x","redirect_uris":[]}`), status: 409, code: "conflict"},
		bad("update: bad redirect", "/admin/apps/"+e.rp.app.AppID, `{"redirect_uris":["http://evil.example/cb"]}`),
		bad("update: nothing", "/admin/apps/"+e.rp.app.AppID, `{}`),
		{name: "update: unknown app", send: adminCall(http.MethodPost, "/admin/apps/app_00000000000000000000000000000001", `{"name":"x"}`), status: 404, code: "not_found"},
		{name: "disable: unknown app", send: adminCall(http.MethodPost, "/admin/apps/app_00000000000000000000000000000001/disable", ""), status: 404, code: "not_found"},
		{name: "delete: malformed id", send: adminCall(http.MethodDelete, "/admin/apps/app_%2e%2e", ""), status: 404, code: "not_found"},
		{name: "revoke: unknown kid", send: adminCall(http.MethodPost, "/admin/keys/nokid/revoke", ""), status: 404, code: "not_found"},
		{name: "backup: POST", send: adminCall(http.MethodPost, "/admin/backup", ""), status: 405, code: "method_not_allowed"},
	}
}

// offCurveOrbKeyPEM is a secp256k1 SPKI PEM whose point is off the curve.
func offCurveOrbKeyPEM(t *testing.T) string {
	key, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(wallet.OrbKeyPEM(&key.PublicKey))
	block.Bytes[len(block.Bytes)-1] ^= 1 // the last byte of y
	return string(pem.EncodeToMemory(block))
}

func (e *hostileEnv) registryCases() []hostileCase {
	target := e.p.public + "/api/v1/inclusion-proof"
	post := func(ct, body string) func(*testing.T) reply { return call(http.MethodPost, target, ct, body) }
	bad := func(name, ct, body string) hostileCase {
		return hostileCase{name: name, send: post(ct, body), status: 400, code: "invalid_request"}
	}
	return []hostileCase{
		bad("text/plain", "text/plain", `{"identity_commitment":"0x2a"}`),
		{name: "over 4 KiB", send: post("application/json", `{"identity_commitment":"0x2a","identifier":"`+strings.Repeat("o", 4<<10)+`"}`), status: 413, code: "request_too_large"},
		bad("commitment equal to p", "application/json", `{"identity_commitment":"`+bn254R+`"}`),
		bad("unknown member", "application/json", `{"identity_commitment":"0x2a","depth":30}`),
		bad("identifier traversal", "application/json", `{"identity_commitment":"0x2a","identifier":"../orb"}`),
		{name: "commitment not in the tree", send: post("application/json", `{"identity_commitment":"0x2a"}`), status: 404, code: "not_found"},
		// A method the route pattern lacks is refused by net/http's mux.
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: ""},
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"worldid/admin"
	"worldid/field"
	"worldid/internal/vectors"
	"worldid/internal/wallet"
	"worldid/semaphore/prover"
	"worldid/store/postgres/pgtest"

	"golang.org/x/oauth2"
)

// Operators import apps with their ids, manage their lifecycle
// and revoke signing keys, through the real binary, on both stores.

// bothStores runs fn on the JSON store and on PostgreSQL (skipped without
// $WORLDID_TEST_POSTGRES); storeArgs are the serve flags selecting it.
func bothStores(t *testing.T, fn func(t *testing.T, storeArgs []string)) {
	t.Run("json", func(t *testing.T) { fn(t, nil) })
	t.Run("postgres", func(t *testing.T) { fn(t, []string{"-store", pgtest.FreshSchema(t)}) })
}

// runCLI runs the binary and checks its exit status (1 refused, 2 usage).
func runCLI(t *testing.T, wantStatus int, args ...string) string {
	t.Helper()
	out, err := exec.Command(worldidBinary(t), args...).CombinedOutput()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if status != wantStatus {
		t.Fatalf("worldid %v: exit %d, want %d\n%s", args, status, wantStatus, out)
	}
	return string(out)
}

// adminCLI is runCLI for an admin command "<cmd> <sub>" against p.
func adminCLI(t *testing.T, p *serverProc, dataDir string, wantStatus int, args ...string) string {
	t.Helper()
	return runCLI(t, wantStatus, append(args[:2:2], append([]string{"-admin-url", p.adm, "-data", dataDir}, args[2:]...)...)...)
}

// Ids from testdata/vectors/idkit.json, whose external nullifiers IDKit
// computed.
const (
	portalAppID     = "app_dc1aaaf5b4ff200f4207c2024a396577"
	portalStagingID = "app_staging_0123456789abcdef0123456789abcdef"
	portalSecret    = "sk_portal_8c1f4e7a02d95b3e6f10a7c4d2"
	portalAction    = "circom-action"
)

func writeLines(t *testing.T, lines ...string) string {
	path := filepath.Join(t.TempDir(), "apps.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOperatorAppsAndKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and proves")
	}
	t.Parallel()
	bothStores(t, operatorAppsAndKeys)
}

func operatorAppsAndKeys(t *testing.T, storeArgs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := hardenedDataDir(t)
	p := startProc(t, dir, storeArgs...)
	cli := func(wantStatus int, args ...string) string {
		t.Helper()
		return adminCLI(t, p, dir, wantStatus, args...)
	}
	appCount := func() int {
		list, err := p.adminClient.Apps(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Apps)
	}
	before := appCount() // the demo app

	prod := `{"app_id":"` + portalAppID + `","rp_id":"rp_1111111111111111","name":"Portal prod","redirect_uris":["` + e2eRedirect + `"],"client_secret":"` + portalSecret + `"}`
	staging := `{"app_id":"` + portalStagingID + `","rp_id":"rp_2222222222222222","name":"Portal staging","redirect_uris":[]}`
	// Bad files are refused whole, naming the line; nothing is written.
	for name, file := range map[string]string{
		"malformed app_id":       writeLines(t, prod, strings.Replace(staging, portalStagingID, "app_staging_0123", 1)),
		"upper-case rp_id":       writeLines(t, strings.Replace(prod, "rp_1111111111111111", "rp_111111111111111A", 1), staging),
		"duplicate app_id":       writeLines(t, prod, strings.Replace(prod, "rp_1111111111111111", "rp_3333333333333333", 1)),
		"duplicate rp_id":        writeLines(t, prod, strings.Replace(staging, "rp_2222222222222222", "rp_1111111111111111", 1)),
		"unknown member":         writeLines(t, prod, strings.Replace(staging, `"name"`, `"secret":"x","name"`, 1)),
		"staging id, production": writeLines(t, prod, strings.Replace(staging, `"name"`, `"environment":"production","name"`, 1)),
		"short secret":           writeLines(t, strings.Replace(prod, portalSecret, "sk_short", 1)),
	} {
		out := cli(1, "app", "import", file)
		if !strings.Contains(out, "apps.jsonl:") || appCount() != before {
			t.Errorf("%s: %s (apps %d, want %d)", name, out, appCount(), before)
		}
	}
	file := writeLines(t, prod, "", staging)
	var imported []admin.ImportedApp
	if err := json.Unmarshal([]byte(cli(0, "app", "import", "-json", file)), &imported); err != nil || len(imported) != 2 {
		t.Fatalf("app import: %v %+v", err, imported)
	}
	if imported[0].ClientSecret != "" || !strings.HasPrefix(imported[1].ClientSecret, "sk_") ||
		imported[0].Environment != "production" || imported[1].Environment != "staging" {
		t.Fatalf("imported %+v", imported)
	}
	if out := cli(1, "app", "import", file); !strings.Contains(out, "already registered") || appCount() != before+2 {
		t.Fatalf("re-import without -replace: %s", out)
	}
	// One request, one store transaction: a file whose third line is taken
	// imports nothing, not even the new app before it.
	fresh := `{"app_id":"app_44444444444444444444444444444444","rp_id":"rp_4444444444444444","name":"Fresh","redirect_uris":[]}`
	if out := cli(1, "app", "import", writeLines(t, fresh, "", prod)); !strings.Contains(out, "apps.jsonl: ") ||
		!strings.Contains(out, "line 3: app_id "+portalAppID) || !strings.Contains(out, "nothing imported") || appCount() != before+2 {
		t.Fatalf("a file with a taken app after a new one: %s (apps %d, want %d)", out, appCount(), before+2)
	}
	cli(0, "app", "import", "-replace", writeLines(t, strings.Replace(prod, "Portal prod", "Portal prod v2", 1)))
	list := cli(0, "app", "list")
	if !strings.Contains(list, "Portal prod v2") || !regexpLine(list, portalStagingID, "staging", "enabled") {
		t.Fatalf("app list after -replace:\n%s", list)
	}

	// The imported production app signs in with its own secret.
	app := admin.CreatedApp{AppInfo: imported[0].AppInfo, ClientSecret: portalSecret}
	rp := connectRelyingParty(t, ctx, p, app)
	// A first leaf in the staging tree makes its root differ from the
	// production tree's, so a proof from the wrong tree fails.
	if _, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: "orb", Environment: "staging", IdentityCommitment: "0x2a"}); err != nil {
		t.Fatal(err)
	}
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"}, [2]string{"orb", "staging"})
	codeFlow(t, ctx, rp, w)
	tok := signInToken(t, ctx, rp, w) // codeFlow's tokens end revoked by its replay check

	// The staging app verifies a proof whose external nullifier is IDKit's
	// value for its id, in the staging environment, by app_staging_ id.
	verifyStaging := func(path, environment string) reply {
		return postJSON(t, p.public+"/api/v4/verify/"+path, idkitStagingProof(t, ctx, w, environment))
	}
	if r := verifyStaging(portalStagingID, ""); r.status != 200 || !strings.Contains(string(r.body), `"environment":"staging"`) {
		t.Fatalf("staging verify by app id: %d %s", r.status, r.body)
	}
	if r := verifyStaging("rp_2222222222222222", ""); r.status != 200 || !strings.Contains(string(r.body), "reuse") {
		t.Fatalf("staging verify by rp id: %d %s", r.status, r.body)
	}
	if r := verifyStaging(portalStagingID, "production"); r.status != 400 || r.errorCode() != "validation_error" {
		t.Fatalf("staging app in production: %d %s", r.status, r.body)
	}

	// The staging app signs in too once it has a redirect URI: the wallet
	// link tells the wallet to prove from the staging tree.
	cli(0, "app", "update", "-redirect-uri", e2eRedirect, portalStagingID)
	codeFlow(t, ctx, connectRelyingParty(t, ctx, p, admin.CreatedApp{AppInfo: imported[1].AppInfo, ClientSecret: imported[1].ClientSecret}), w)

	// Update and secret rotation: the old secret stops working at once.
	cli(0, "app", "update", "-name", "Renamed", "-redirect-uri", e2eRedirect, "-redirect-uri", "https://rp2.example/cb", portalAppID)
	cli(1, "app", "update", "-redirect-uri", "http://evil.example/cb", portalAppID)
	cli(1, "app", "update", "-name", "x", "app_ffffffffffffffffffffffffffffffff")
	var rotated admin.RotatedSecret
	if err := json.Unmarshal([]byte(cli(0, "app", "rotate-secret", "-json", portalAppID)), &rotated); err != nil || rotated.ClientSecret == portalSecret {
		t.Fatalf("rotate-secret: %v %+v", err, rotated)
	}
	introspect := func(secret string) reply {
		return call(http.MethodPost, p.public+"/introspect", "application/x-www-form-urlencoded", url.Values{"token": {tok.AccessToken}}.Encode(),
			"Authorization", basicAuth(portalAppID, secret))(t)
	}
	if r := introspect(portalSecret); r.status != 401 {
		t.Errorf("old secret after rotation: %d %s", r.status, r.body)
	}
	activeIs(true)(t, introspect(rotated.ClientSecret))
	app.ClientSecret = rotated.ClientSecret
	rp = connectRelyingParty(t, ctx, p, app)

	// A World ID 4.0 RP signing key, read from a file: never shown or
	// logged; the sign-in request then also carries a signed 4.0
	// proof_request, and our wallet's 3.0 answer still signs in
	// (allow_legacy_proofs).
	const rpKey = "abababababababababababababababababababababababababababababababab"
	keyFile := filepath.Join(t.TempDir(), "rp.key")
	if err := os.WriteFile(keyFile, []byte(rpKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "app", "rp-signing-key", "-key-file", keyFile, portalAppID); !strings.Contains(out, "signer 0x") || strings.Contains(out, rpKey) {
		t.Fatalf("rp-signing-key: %s", out)
	}
	if out := cli(0, "app", "list", "-json"); !strings.Contains(out, `"rp_signer":"0x`) || strings.Contains(out, rpKey) {
		t.Fatalf("app list shows the key or no signer: %s", out)
	}
	cli(1, "app", "rp-signing-key", portalAppID)
	codeFlow(t, ctx, rp, w)
	if strings.Contains(p.stderr.String(), rpKey) {
		t.Fatal("the server log holds the RP signing key")
	}

	// Disable: sign-in, token and verify refuse; issued tokens are inactive.
	userinfo := func() int {
		return call(http.MethodGet, p.public+"/userinfo", "", "", "Authorization", "Bearer "+tok.AccessToken)(t).status
	}
	if s := userinfo(); s != 200 {
		t.Fatalf("userinfo before disable: %d", s)
	}
	cli(0, "app", "disable", portalAppID)
	cli(0, "app", "disable", portalStagingID)
	if !regexpLine(cli(0, "app", "list"), portalAppID, "disabled") {
		t.Error("app list does not show the app disabled")
	}
	if s := userinfo(); s != 401 {
		t.Errorf("userinfo of a disabled app's token: %d", s)
	}
	activeIs(false)(t, introspect(rotated.ClientSecret))
	if r := call(http.MethodGet, rp.oauth.AuthCodeURL("s"), "", "")(t); r.status != 400 || r.errorCode() != "client_disabled" {
		t.Errorf("authorize for a disabled app: %d %q", r.status, r.errorCode())
	}
	if r := verifyStaging(portalStagingID, ""); r.status != 403 || r.errorCode() != "app_disabled" {
		t.Errorf("verify for a disabled app: %d %s", r.status, r.body)
	}
	cli(0, "app", "enable", portalAppID)
	if s := userinfo(); s != 200 {
		t.Errorf("userinfo after enable: %d", s)
	}

	// Emergency key rotation.
	var keys admin.KeyList
	if err := json.Unmarshal([]byte(cli(0, "keys", "list", "-json")), &keys); err != nil || len(keys.Keys) != 1 || keys.Keys[0].State != "active" {
		t.Fatalf("keys list: %v %+v", err, keys)
	}
	kid := keys.Keys[0].KID
	if out := cli(0, "keys", "list"); !regexpLine(out, kid, "active") {
		t.Errorf("keys list text:\n%s", out)
	}
	// "--": a kid is base64url and may begin with "-".
	cli(0, "keys", "revoke", "--", kid)
	if out := cli(1, "keys", "revoke", "--", kid); !strings.Contains(out, "already revoked") {
		t.Errorf("second revocation of %s:\n%s", kid, out)
	}
	// The revoked key stays listed, after the new signing key.
	var after admin.KeyList
	if err := json.Unmarshal([]byte(cli(0, "keys", "list", "-json")), &after); err != nil || len(after.Keys) != 2 ||
		after.Keys[0].State != "active" || after.Keys[1].KID != kid || after.Keys[1].State != "revoked" || after.Keys[1].RevokedAt.IsZero() {
		t.Errorf("keys list after revoking %s: %v %+v", kid, err, after)
	}
	if out := cli(0, "keys", "list"); !regexpLine(out, kid, "revoked") {
		t.Errorf("keys list text after revoking %s:\n%s", kid, out)
	}
	if kids := jwksKids(t, p); slices.Contains(kids, kid) || len(kids) != 1 {
		t.Errorf("JWKS after revoking %s: %v", kid, kids)
	}
	if s := userinfo(); s != 401 {
		t.Errorf("userinfo with a token of the revoked key: %d", s)
	}
	activeIs(false)(t, introspect(rotated.ClientSecret))
	codeFlow(t, ctx, rp, w) // the new key signs at once

	// Delete: the app's ids are unknown afterwards.
	cli(0, "app", "delete", portalStagingID)
	cli(1, "app", "delete", portalStagingID)
	if r := verifyStaging(portalStagingID, ""); r.status != 404 {
		t.Errorf("verify for a deleted app: %d %s", r.status, r.body)
	}

	// Every change is one audit line naming the token, the change and the id.
	p.stop(t)
	log := p.stderr.String()
	for _, want := range []string{`what="app imported"`, `what="app disabled" id=` + portalAppID, `what="client secret rotated"`,
		`what="signing key revoked" id=` + kid, `what="app deleted" id=` + portalStagingID} {
		if !regexpLine(log, `msg="admin change" who=token:`, want) {
			t.Errorf("no audit line with %s in the log", want)
		}
	}
}

// signInToken signs in through the code flow and returns the tokens.
func signInToken(t *testing.T, ctx context.Context, rp *relyingParty, w *wallet.Wallet) *oauth2.Token {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	res, err := w.SignIn(ctx, rp.oauth.AuthCodeURL("state", oauth2.S256ChallengeOption(verifier)), "orb")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rp.oauth.Exchange(ctx, res.Params.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return tok
}

// regexpLine reports whether some line of text contains every part.
func regexpLine(text string, parts ...string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// idkitStagingProof is a verify body for the staging app whose proof binds
// the external nullifier IDKit computed for its id and action, not this
// repository's ExternalNullifier.
func idkitStagingProof(t *testing.T, ctx context.Context, w *wallet.Wallet, environment string) []byte {
	t.Helper()
	var v struct {
		ExternalNullifier map[string]string `json:"external_nullifier"`
	}
	vectors.Load(t, "idkit.json", &v)
	ext, err := field.ParseStrict(v.ExternalNullifier[portalStagingID+"|"+portalAction])
	if err != nil {
		t.Fatal(err)
	}
	path, err := w.InclusionProof(ctx, "orb", "staging")
	if err != nil {
		t.Fatal(err)
	}
	signalHash := wallet.SignalHash("")
	proof, _, err := prover.Prove(sharedProvingKey(t), w.Identity, path, signalHash, ext)
	if err != nil {
		t.Fatal(err)
	}
	root, nh := path.Root(), w.Identity.NullifierHash(ext)
	body := map[string]any{"protocol_version": "3.0", "nonce": "n", "action": portalAction, "responses": []wallet.ResponseItem{{
		Identifier: "orb", MerkleRoot: field.Format(&root), Nullifier: field.Format(&nh), Proof: proof.ABIHex(), SignalHash: field.Format(&signalHash),
	}}}
	if environment != "" {
		body["environment"] = environment
	}
	b, _ := json.Marshal(body)
	return b
}

func postJSON(t *testing.T, target string, body []byte) reply {
	t.Helper()
	return call(http.MethodPost, target, "application/json", string(body))(t)
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/admin"
	"worldid/field"
	"worldid/internal/fakechain"
	"worldid/internal/vectors"
	"worldid/internal/wallet"
	"worldid/registry"
)

// fakeWorldChain is a JSON-RPC endpoint whose WorldIDRegistry answers
// isValidRoot(uint256) true for one root, or fails when down is set.
type fakeWorldChain struct {
	validRoot string // 64 hex digits
	down      atomic.Bool
	calls     atomic.Int64
}

func (f *fakeWorldChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Params []json.RawMessage `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	var call struct{ Data string }
	if len(req.Params) > 0 {
		json.Unmarshal(req.Params[0], &call)
	}
	valid := strings.HasSuffix(call.Data, f.validRoot)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":"0x%064x"}`, map[bool]int{true: 1}[valid])
}

// TestV4ThroughBinary drives protocol 4.0 through the real binary: the
// roots of World's 4.0 registry come from a JSON-RPC root source (here a
// fake World Chain), trust anchors from the operator CLI; each missing
// anchor is its per-item code, an unreachable chain a 500 with
// verification_error (the one 5xx this test causes), never a verification.
func TestV4ThroughBinary(t *testing.T) {
	ctx := context.Background()
	const onChain = "00000000000000000000000000000000000000000000000000000000000abcde"
	chain := &fakeWorldChain{validRoot: onChain}
	rpc := httptest.NewServer(chain)
	defer rpc.Close()
	dataDir := t.TempDir()
	p := startProc(t, dataDir, "-roots-rpc", "local="+rpc.URL,
		"-roots-contract", "world_id_4/production=local:registry:0x00000000000000000000000000000000000000aa")
	defer p.stop(t)
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "v4", RedirectURIs: []string{"https://v4.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	item := func(root, schema string) map[string]any {
		return map[string]any{"identifier": "credential", "issuer_schema_id": schema, "nullifier": "0x0a0a", "expires_at_min": 4102444800,
			"proof": []string{"0x4906f4e17b969ef2cfc44bd96520f01a3f5c32972bca2e10b70e05e03e3d9f13", "1", "2", "3", root}}
	}
	post := func(items ...map[string]any) (int, string) {
		body, _ := json.Marshal(map[string]any{"protocol_version": "4.0", "nonce": "0x01", "action": "vote", "responses": items})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.public+"/api/v4/verify/"+app.RPID, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Results []struct{ Code, Identifier string } `json:"results"`
		}
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &out); err != nil || len(out.Results) != len(items) || out.Results[0].Identifier != "credential" {
			t.Fatalf("answer %d %s", resp.StatusCode, raw)
		}
		return resp.StatusCode, out.Results[0].Code
	}
	want := func(status int, code string, items ...map[string]any) {
		t.Helper()
		if s, c := post(items...); s != status || c != code {
			t.Fatalf("status %d code %q, want %d %q", s, c, status, code)
		}
	}
	want(400, "invalid_root", item("0x05", "1"))
	// A root the chain holds passes the root check: the next failure is the
	// unknown issuer schema, then the missing OPRF key of this rp_id (schema
	// 1 is this server's own PoH issuer by default).
	want(400, "invalid_credential_issuer", item("0x"+onChain, "9"))
	want(400, "verification_failed", item("0x"+onChain, "1"))
	cli := func(args ...string) string {
		t.Helper()
		args = append(args[:2:2], append([]string{"-admin-url", p.adm, "-data", dataDir}, args[2:]...)...)
		out, err := exec.Command(worldidBinary(t), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("worldid %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	x := "0x24a3480be33ae5a83f68fbefe658e65053cbe99ee442c178859070a23372a4d4"
	y := "0x2fc70cc380d5bb9d8537a8fd82e98fb29eb837ff3943f5704ec3957f444ec6cd"
	cli("anchor", "set", "-kind", "oprf_key", "-id", app.RPID, "-x", x, "-y", y)
	if out := cli("anchor", "list"); !strings.Contains(out, app.RPID) || !strings.Contains(out, x) {
		t.Fatalf("anchor list:\n%s", out)
	}
	// All anchors present: the made-up proof words fail as points.
	want(400, "invalid_proof", item("0x"+onChain, "1"))
	// A root the operator adds is valid without the chain.
	cli("roots", "add", "-protocol", "4.0", "0x"+strings.Repeat("0", 63)+"7")
	want(400, "invalid_proof", item("0x"+strings.Repeat("0", 63)+"7", "1"))
	// The chain unreachable: the outcome is unknown, never valid.
	chain.down.Store(true)
	want(500, "verification_error", item("0x"+strings.Repeat("0", 63)+"8", "1"))
	// A root ≥ r is invalid_root, as the contract's isValidRoot answers,
	// without asking the chain: never a 500.
	want(400, "invalid_root", item("0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", "1"))
	if chain.calls.Load() == 0 {
		t.Fatal("the root source was never asked")
	}

}

// TestSelfieAndSignalParity: through the binary, an identity added as
// "selfie" lands in the face tree; `worldid wallet prove -identifier selfie
// -signal 0x` binds IDKit 4's hash of "0x" (vectors/idkit.json); the proof
// verifies sent as "face" and as "selfie", and each answer names the
// identifier that was sent.
func TestSelfieAndSignalParity(t *testing.T) {
	ctx := context.Background()
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir)
	defer p.stop(t)
	path := filepath.Join(t.TempDir(), "wallet.json")
	id, err := wallet.NewIdentityFile(path, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := id.Commitment()
	if _, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: "selfie", IdentityCommitment: field.Format(&c)}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sharedKeyFile(t), path+".pk"); err != nil { // the CLI's key cache
		t.Fatal(err)
	}
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "selfie", RedirectURIs: []string{"https://selfie.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(worldidBinary(t), "wallet", "prove", "-wallet", path, "-server", p.public,
		"-app", app.AppID, "-action", "parity", "-signal", "0x", "-identifier", "selfie").Output()
	if err != nil {
		t.Fatalf("wallet prove: %v", err)
	}
	var item map[string]any
	if err := json.Unmarshal(out, &item); err != nil {
		t.Fatalf("wallet prove output %q: %v", out, err)
	}
	if item["signal_hash"] != "0x0039bef1777deb3dfb14f64b9f81ced092c501fee72f90e93d03bb95ee89df98" {
		t.Fatalf("signal_hash %v, want IDKit 4's hashSignal(\"0x\")", item["signal_hash"])
	}
	for _, sent := range []string{"face", "selfie"} {
		item["identifier"] = sent
		body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": "parity", "responses": []any{item}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.public+"/api/v4/verify/"+app.RPID, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct {
			Results []struct {
				Identifier string `json:"identifier"`
				Success    bool   `json:"success"`
			} `json:"results"`
		}
		if json.Unmarshal(raw, &got) != nil || resp.StatusCode != 200 || len(got.Results) != 1 || !got.Results[0].Success || got.Results[0].Identifier != sent {
			t.Fatalf("sent as %s: %d %s", sent, resp.StatusCode, raw)
		}
	}
}

// TestV4SessionVectorFromChain: World's 4.0 session vector verifies
// through the real binary with its root, credential issuer key and OPRF
// key all read from a JSON-RPC chain (internal/fakechain), nothing set by
// hand; the same proof for another action (session_nullifier[1]) or
// another session id is refused, and a uniqueness request cannot carry it.
// -min-expiration covers the months since the vector's block time.
func TestV4SessionVectorFromChain(t *testing.T) {
	ctx := context.Background()
	var f vectors.WorldID4
	vectors.Load(t, "world_id_4.json", &f)
	a, s := f.WorldIDVerifier.Anchors, f.WorldIDVerifier.Session
	fe := func(h string) fr.Element {
		e, err := field.ParsePrefixedHex(h)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	chain := fakechain.New()
	rp, err := registry.ParseRPID(a.RPID)
	if err != nil {
		t.Fatal(err)
	}
	chain.AddRoot(fe(a.Root))
	chain.SetIssuerKey(a.IssuerSchemaID, fe(a.IssuerPubkey[0]), fe(a.IssuerPubkey[1]))
	chain.SetOPRFKey(rp, fe(a.OPRFPubkey[0]), fe(a.OPRFPubkey[1]))
	rpc := httptest.NewServer(chain)
	defer rpc.Close()
	p := startProc(t, t.TempDir(), "-roots-rpc", "worldchain="+rpc.URL, "-min-expiration", "87600h",
		"-roots-contract", "world_id_4/production=worldchain:registry:0x00000000000000000000000000000000000000a1,"+
			"issuer_key/production=worldchain:issuer-registry:0x00000000000000000000000000000000000000a2,"+
			"oprf_key/production=worldchain:oprf-key-registry:0x00000000000000000000000000000000000000a3")
	defer p.stop(t)
	line, _ := json.Marshal(admin.ImportAppRequest{AppID: "app_" + strings.Repeat("4a", 16), RPID: a.RPID, Name: "vector"})
	if _, err := p.adminClient.ImportApps(ctx, append(line, '\n'), false); err != nil {
		t.Fatal(err)
	}
	sessionID := "session_" + strings.TrimPrefix(s.SessionID, "0x") + "01" + strings.Repeat("5a", 31)
	post := func(body map[string]any) (int, string) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.public+"/api/v4/verify/"+a.RPID, strings.NewReader(string(raw)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	item := func(action string) map[string]any {
		return map[string]any{"identifier": "proof_of_human", "signal_hash": s.SignalHash, "issuer_schema_id": 1, "expires_at_min": s.ExpiresAtMin,
			"session_nullifier": []string{s.SessionNullifier[0], action}, "proof": s.Proof}
	}
	session := func(id, action string) map[string]any {
		return map[string]any{"protocol_version": "4.0", "nonce": s.Nonce, "session_id": id, "responses": []any{item(action)}}
	}
	if status, body := post(session(sessionID, s.SessionNullifier[1])); status != 200 || !strings.Contains(body, `"Session proof verified successfully"`) {
		t.Fatalf("session vector: %d %s", status, body)
	}
	if c := chain.Calls(); c["isValidRoot"] == 0 || c["issuerSchemaIdToPubkey"] == 0 || c["getOprfPublicKey"] == 0 {
		t.Fatalf("chain calls %v: the root and both keys must come from the chain", c)
	}
	otherAction := "0x02" + strings.Repeat("11", 31)
	if status, body := post(session(sessionID, otherAction)); status != 400 || !strings.Contains(body, `"invalid_proof"`) {
		t.Fatalf("another session action: %d %s", status, body)
	}
	otherID := "session_" + strings.Repeat("0", 63) + "9" + "01" + strings.Repeat("5a", 31)
	if status, body := post(session(otherID, s.SessionNullifier[1])); status != 400 || !strings.Contains(body, `"invalid_proof"`) {
		t.Fatalf("another session id: %d %s", status, body)
	}
	if status, body := post(session("0", s.SessionNullifier[1])); status != 400 || !strings.Contains(body, `"session_id"`) {
		t.Fatalf("session id 0: %d %s", status, body)
	}
}

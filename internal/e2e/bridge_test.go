package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"

	"worldid/admin"
	"worldid/internal/idkittest"
	"worldid/internal/wallet"
)

// TestIDKitThroughBuiltInBridge: World's own requester client (IDKit 2 and
// IDKit 4 from npm) creates a request at the server's built-in bridge (the
// default for a loopback base URL), `worldid wallet`'s code answers it from
// the connect URL with a real proof, IDKit polls, decrypts and returns the
// proof, and /api/v4/verify accepts it.
func TestIDKitThroughBuiltInBridge(t *testing.T) {
	for _, version := range idkittest.Versions {
		t.Run("IDKit "+version, func(t *testing.T) {
			idkittest.Require(t, version)
			ctx := context.Background()
			p := startProc(t, hardenedDataDir(t))
			defer p.stop(t)
			const appID, rpID = "app_staging_0123456789abcdef0123456789abcdef", "rp_0123456789abcdef"
			line, _ := json.Marshal(admin.ImportAppRequest{AppID: appID, RPID: rpID, Name: "IDKit RP"})
			if _, err := p.adminClient.ImportApps(ctx, append(line, '\n'), false); err != nil {
				t.Fatal(err)
			}
			w := keyedWallet(t, ctx, p, [2]string{"orb", "staging"})

			k := idkittest.Start(t, version, p.public, appID, "e2e-bridge", "e2e-bridge-signal")
			r, err := w.ReadBridgeRequest(ctx, k.ConnectURL)
			if err != nil {
				t.Fatal(err)
			}
			if r.Request.AppID != appID || r.Request.Action != "e2e-bridge" || r.Environment() != "staging" {
				t.Fatalf("request %+v in %s", r.Request, r.Environment())
			}
			answer, err := w.AnswerBridgeRequest(ctx, r, "orb", rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			result, code := k.Outcome(t)
			if code != "" {
				t.Fatalf("IDKit %s failed: %s", version, code)
			}
			body := verifyBody(t, version, result, r)
			if a := postVerify(t, ctx, p, rpID, body); a.status != 200 || !a.Success || a.Nullifier != answer.NullifierHash {
				t.Fatalf("verify of IDKit %s's result: %+v", version, a)
			}
			checkNoServerErrors(t, p)
		})
	}
}

// verifyBody is what a relying party posts to /api/v4/verify for IDKit's
// result: IDKit 4's result is that body already; IDKit 2's is the bare
// World ID 3.0 answer, which the relying party wraps with the signal hash
// it asked for.
func verifyBody(t *testing.T, version string, result json.RawMessage, r wallet.BridgeRequest) []byte {
	t.Helper()
	if version == "4" {
		return result
	}
	var v3 struct {
		Proof             string `json:"proof"`
		MerkleRoot        string `json:"merkle_root"`
		NullifierHash     string `json:"nullifier_hash"`
		VerificationLevel string `json:"verification_level"`
	}
	if err := json.Unmarshal(result, &v3); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "idkit2", "action": r.Request.Action, "environment": "staging",
		"responses": []wallet.ResponseItem{{Identifier: v3.VerificationLevel, MerkleRoot: v3.MerkleRoot, Nullifier: v3.NullifierHash,
			Proof: v3.Proof, SignalHash: r.Request.Signal}}})
	return body
}

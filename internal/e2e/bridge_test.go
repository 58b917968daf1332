package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"worldid/admin"
	"worldid/field"
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
			w := newWallet(t, ctx, p, [2]string{"orb", "staging"})
			if err := os.Symlink(sharedKeyFile(t), w.KeyCache); err != nil {
				t.Fatal(err)
			}

			k := idkittest.Start(t, version, p.public, appID, "e2e-bridge", "e2e-bridge-signal")
			out, err := exec.Command(worldidBinary(t), "wallet", "approve", "-wallet", strings.TrimSuffix(w.KeyCache, ".pk"),
				"-server", p.public, "-level", "orb", k.ConnectURL).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "request from app "+appID+` (action "e2e-bridge", staging)`) ||
				!strings.Contains(string(out), "approved through the bridge (orb proof)") {
				t.Fatalf("worldid wallet approve: %v\n%s", err, out)
			}
			result, code := k.Outcome(t)
			if code != "" {
				t.Fatalf("IDKit %s failed: %s", version, code)
			}
			body, nullifier := verifyBody(t, version, result)
			if a := postVerify(t, ctx, p, rpID, body); a.status != 200 || !a.Success || a.Nullifier != nullifier {
				t.Fatalf("verify of IDKit %s's result: %+v", version, a)
			}
			checkNoServerErrors(t, p)
		})
	}
}

// verifyBody is what a relying party posts to /api/v4/verify for IDKit's
// result, and the nullifier in it: IDKit 4's result is that body already;
// IDKit 2's is the bare World ID 3.0 answer, which the relying party wraps
// with the hash of the signal it asked for.
func verifyBody(t *testing.T, version string, result json.RawMessage) ([]byte, string) {
	t.Helper()
	if version == "4" {
		var v4 struct {
			Responses []wallet.ResponseItem `json:"responses"`
		}
		if err := json.Unmarshal(result, &v4); err != nil || len(v4.Responses) != 1 {
			t.Fatalf("IDKit 4 result %s: %v", result, err)
		}
		return result, v4.Responses[0].Nullifier
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
	signalHash := wallet.SignalHash("e2e-bridge-signal")
	body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "idkit2", "action": "e2e-bridge", "environment": "staging",
		"responses": []wallet.ResponseItem{{Identifier: v3.VerificationLevel, MerkleRoot: v3.MerkleRoot, Nullifier: v3.NullifierHash,
			Proof: v3.Proof, SignalHash: field.Format(&signalHash)}}})
	return body, v3.NullifierHash
}

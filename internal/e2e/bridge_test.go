package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"worldid/admin"
	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/field"
	"worldid/internal/idkittest"
	"worldid/internal/wallet"
	"worldid/store/postgres/pgtest"
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

// TestBridgeChoice: a loopback server serves the built-in relay and says
// so at start-up; with World's relay chosen it serves none.
func TestBridgeChoice(t *testing.T) {
	dir := hardenedDataDir(t)
	own := startProc(t, dir)
	if code := postRequest(t, own.public); code != http.StatusOK {
		t.Errorf("built-in relay: POST /request %d", code)
	}
	own.stop(t)
	world := startProc(t, dir, "-bridge-url", bridge.DefaultURL)
	defer world.stop(t)
	if code := postRequest(t, world.public); code != http.StatusNotFound {
		t.Errorf("with World's relay: POST /request %d, want 404", code)
	}
}

func postRequest(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Post(base+"/request", "application/json", strings.NewReader(`{"iv":"aXYtaXYtaXYtaXYt","payload":"cGF5bG9hZA=="}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBridgeAcrossReplicas: on PostgreSQL a bridge request created at one
// replica's built-in relay is read and answered at the other's, and the
// answer is fetched at the first.
func TestBridgeAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two servers")
	}
	dsn := pgtest.FreshSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := startProc(t, hardenedDataDir(t), "-store", dsn)
	defer a.stop(t)
	b := startProc(t, hardenedDataDir(t), "-store", dsn)
	defer b.stop(t)
	var c client.Client
	created, err := c.Create(ctx, a.public, rand.Reader, bridge.Request{AppID: "app_staging_0123456789abcdef0123456789abcdef", Signal: "0x01", VerificationLevel: "orb"})
	if err != nil {
		t.Fatal(err)
	}
	atB := bridge.Connect{Base: bridge.StagingVerify, RequestID: created.RequestID, Key: created.Key, Bridge: b.public}
	if _, err := c.Fetch(ctx, atB); err != nil {
		t.Fatalf("reading A's request at B: %v", err)
	}
	if err := c.Answer(ctx, atB, rand.Reader, bridge.Response{ErrorCode: bridge.ErrCodeVerificationRejected}); err != nil {
		t.Fatal(err)
	}
	p, err := c.Poll(ctx, a.public, created.RequestID, created.Key)
	if err != nil || p.Response.ErrorCode != bridge.ErrCodeVerificationRejected {
		t.Fatalf("B's answer at A: %+v %v", p, err)
	}
	if _, err := c.Poll(ctx, b.public, created.RequestID, created.Key); !errors.Is(err, client.ErrGone) {
		t.Fatalf("the answer was handed out twice: %v", err)
	}
}

package client

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"worldid/bridge"
	"worldid/bridge/relay/relaytest"
	"worldid/internal/idkittest"
)

// TestIDKitRequester: IDKit's own client creates a request at our relay,
// our wallet side reads and answers it, and IDKit decrypts the answer.
func TestIDKitRequester(t *testing.T) {
	for _, version := range idkittest.Versions {
		t.Run("IDKit "+version, func(t *testing.T) {
			relayURL, ctx := relaytest.NewServer(t).URL, context.Background()
			k := idkittest.Start(t, version, relayURL, "app_staging_0123456789abcdef0123456789abcdef", "", "user-1")
			conn, err := bridge.ParseConnect(k.ConnectURL)
			if err != nil {
				t.Fatalf("IDKit %s's connect URL %s: %v", version, k.ConnectURL, err)
			}
			var c Client
			req, err := c.Fetch(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			if req.AppID != "app_staging_0123456789abcdef0123456789abcdef" || req.Action != "" || !strings.HasPrefix(req.Signal, "0x") {
				t.Fatalf("IDKit %s's request: %+v", version, req)
			}
			answer := bridge.Response{Proof: "0x" + strings.Repeat("ab", 256), MerkleRoot: "0x" + strings.Repeat("01", 32), NullifierHash: "0x" + strings.Repeat("02", 32), VerificationLevel: "orb"}
			if err := c.Answer(ctx, conn, rand.Reader, answer); err != nil {
				t.Fatal(err)
			}
			result, code := k.Outcome(t)
			if code != "" || !strings.Contains(string(result), answer.NullifierHash) || !strings.Contains(string(result), answer.Proof) {
				t.Fatalf("IDKit %s returned %s %s", version, result, code)
			}
		})
	}
}

package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"worldid/internal/wallet"

	"golang.org/x/oauth2"
)

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end suite builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	p := startProc(t, dataDir)
	rp := newRelyingParty(t, ctx, p)
	w := newWallet(t, ctx, p, [2]string{"orb", "production"}, [2]string{"orb", "staging"}, [2]string{"device", "production"})

	var code codeFlowResult
	t.Run("code flow with PKCE", func(t *testing.T) { code = codeFlow(t, ctx, rp, w) })
	t.Run("implicit and hybrid flows", func(t *testing.T) { implicitAndHybrid(t, ctx, rp, w) })
	var first verifyAnswer
	t.Run("verify production and staging", func(t *testing.T) { first = verifyBothEnvironments(t, ctx, p, rp, w) })

	t.Run("operator CLI", func(t *testing.T) { operatorCLI(t, p, dataDir) })
	var pinned string
	t.Run("refresh credential-only and with a PCP", func(t *testing.T) { pinned = refreshBothModes(t, ctx, p, w) })

	keysBefore := jwksKids(t, p)
	p.stop(t)
	p = startProc(t, dataDir)
	w.Server = p.public
	t.Run("state survives a restart", func(t *testing.T) {
		rp := connectRelyingParty(t, ctx, p, rp.app)
		if got := jwksKids(t, p); strings.Join(got, ",") != strings.Join(keysBefore, ",") {
			t.Errorf("signing keys changed across restart: %v → %v", keysBefore, got)
		}
		if _, err := rp.oauth.Exchange(ctx, code.code, oauth2.VerifierOption(code.verifier)); err == nil {
			t.Error("a redeemed code was accepted after restart")
		}
		again := postVerify(t, ctx, p, rp.app.RPID, []byte(first.request))
		if again.status != 200 || again.CreatedAt != first.CreatedAt || !strings.Contains(again.Message, "reuse") {
			t.Errorf("nullifier lost across restart: %+v (first %+v)", again, first)
		}
		if _, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(code.token)); err == nil {
			t.Error("a token revoked by code replay works after restart")
		}
		req := refreshRequest(t, ctx, w, "0x"+strings.Repeat("99", 8))
		issuer, err := wallet.FetchIssuerKey(ctx, w.HTTP, p.public)
		if err != nil {
			t.Fatal(err)
		}
		var refused *wallet.RefreshError
		if _, err := wallet.Refresh(ctx, w.HTTP, req, issuer); !errors.As(err, &refused) || refused.Code != "SUB_MISMATCH" {
			t.Errorf("pinned sub %s lost across restart: %v", pinned, err)
		}
		codeFlow(t, ctx, rp, w) // and the server still signs people in
	})
}

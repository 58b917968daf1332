package e2e

import (
	"context"
	"errors"
	"net/url"
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
	t.Parallel()
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
	t.Run("metrics after sign-in, verify and refresh", func(t *testing.T) { checkOnCallMetrics(t, p) })

	keysBefore := jwksKids(t, p)
	pendingVerifier := oauth2.GenerateVerifier()
	pending := pendingSignin(t, rp.oauth.AuthCodeURL("across-restart", oauth2.S256ChallengeOption(pendingVerifier)))
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
		// A sign-in pending before the restart (stored nowhere) completes
		// after it; the restart moved the server to another port.
		if code := finishAfterRestart(t, ctx, p, rp, w, pending); code != "" {
			if _, err := rp.oauth.Exchange(ctx, code, oauth2.VerifierOption(pendingVerifier)); err != nil {
				t.Errorf("code of a sign-in pending across the restart: %v", err)
			}
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

// finishAfterRestart completes a pending sign-in on the restarted server
// p as wallet and browser, and returns its code ("" after reporting): the
// restarted built-in relay forgot the page's bridge request, so the page
// shows a fresh one, for the same authorization request.
func finishAfterRestart(t *testing.T, ctx context.Context, p *serverProc, rp *relyingParty, w *wallet.Wallet, pending pendingBrowser) string {
	t.Helper()
	parsed, err := url.Parse(pending.waitURL)
	if err != nil {
		t.Fatal(err)
	}
	pending.waitURL = p.public + parsed.RequestURI()
	if err := pending.show(); err != nil {
		t.Errorf("wait page after restart: %v", err)
		return ""
	}
	if err := w.Approve(ctx, pending.connect, "orb"); err != nil {
		t.Errorf("wallet after restart: %v", err)
		return ""
	}
	r, err := pending.finishWhenDone()
	if err != nil || codeOf(r) == "" {
		t.Errorf("finish after restart: %v %d %s %s", err, r.status, r.header.Get("Location"), r.body)
	}
	return codeOf(r)
}

package e2e

import (
	"context"
	"testing"
	"worldid/admin"
	"worldid/internal/wallet"
)

// ---- The suite ----

// hostileEnv is a running server with an app, a second app whose tokens
// are foreign to the first, and a wallet in the orb production tree.
type hostileEnv struct {
	ctx     context.Context
	p       *serverProc
	dataDir string
	rp      *relyingParty
	other   admin.CreatedApp
	w       *wallet.Wallet
}

// TestHostileInput drives every interface of the real binary with hostile
// requests. Each must get its documented 4xx (never a 500), never a
// redirect to an unvalidated URI, and leave the store unchanged, as
// measured by acknowledgedWrites.
func TestHostileInput(t *testing.T) {
	ctx := parallelEndToEnd(t, "builds and runs the binary")
	dataDir := hardenedDataDir(t)
	// The suite sends more refreshes from one address than the per-IP
	// burst allows; the limits have their own tests in package refresh.
	p := startProc(t, dataDir, "-refresh-rate-limits=false")
	e := &hostileEnv{ctx: ctx, p: p, dataDir: dataDir, rp: newRelyingParty(t, ctx, p)}
	var err error
	if e.other, err = p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "other RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	e.w = keyedWallet(t, ctx, p, [2]string{"orb", "production"})

	t.Run("verify", func(t *testing.T) { e.hostileVerify(t) })
	t.Run("verify vectors", func(t *testing.T) { e.hostileVerifyVectors(t) })
	t.Run("authorize", func(t *testing.T) { runHostile(t, dataDir, e.authorizeCases()) })
	t.Run("sign-in", func(t *testing.T) { e.hostileSignin(t) })
	t.Run("tokens", func(t *testing.T) { e.hostileTokens(t) })
	t.Run("refresh", func(t *testing.T) { e.hostileRefresh(t) })
	t.Run("refresh vectors", func(t *testing.T) { e.hostileRefreshVectors(t) })
	t.Run("admin", func(t *testing.T) { runHostile(t, dataDir, e.adminCases(t)) })
	t.Run("registry", func(t *testing.T) { runHostile(t, dataDir, e.registryCases()) })
	t.Run("no 5xx and no panic", func(t *testing.T) { checkNoServerErrors(t, p) }) // stops the server
}

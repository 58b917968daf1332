package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"worldid/internal/simulator"
	"worldid/internal/wallet"
)

// TestSimulatorIdentitiesEndWithTheMode: starting with -simulator writes
// nothing to the store; a test identity signs in while the mode is on;
// after a restart of the same data dir without it, the same identity's
// proofs, made against the simulator's tree, are refused at /api/v4/verify
// and at sign-in (internal/simulator doc.go).
func TestSimulatorIdentitiesEndWithTheMode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := hardenedDataDir(t)
	p := startProc(t, dir)
	rp := newRelyingParty(t, ctx, p)
	p.stop(t)
	before := acknowledgedWrites(t, dir)
	p = startProc(t, dir, "-simulator")
	if after := acknowledgedWrites(t, dir); after != before {
		t.Fatalf("starting with -simulator made %d store writes", after-before)
	}

	// The simulator page approves a pending sign-in as test identity 1.
	authorizeURL := func() string {
		return p.public + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {rp.app.AppID},
			"redirect_uri": {e2eRedirect}, "scope": {"openid"}}.Encode()
	}
	pending := pendingSignin(t, authorizeURL())
	form := url.Values{"link": {pending.connect}, "identity": {"1"}, "level": {"orb"}}
	if r := call(http.MethodPost, p.public+"/simulator", "application/x-www-form-urlencoded", form.Encode())(t); r.status != http.StatusOK ||
		!strings.Contains(string(r.body), "Answered as test identity 1 (orb)") {
		t.Fatalf("simulator: %d %.500s", r.status, r.body)
	}
	if r, err := pending.finishWhenDone(); err != nil || r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "code=") {
		t.Fatalf("finish: %v %d %s", err, r.status, r.header.Get("Location"))
	}
	trees, err := simulator.NewTrees()
	if err != nil {
		t.Fatal(err)
	}
	w := trees.Wallet(1, p.public, wallet.NewHTTPClient())
	w.KeyCache = sharedKeyFile(t)
	verifyTestIdentity := func(action string) reply {
		t.Helper()
		item, err := w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: action, Signal: "x"})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": action, "responses": []wallet.ResponseItem{item}})
		return call(http.MethodPost, p.public+"/api/v4/verify/"+rp.app.RPID, "application/json", string(body))(t)
	}
	if r := verifyTestIdentity("while-on"); r.status != http.StatusOK {
		t.Fatalf("a test identity's proof while the simulator is on: %d %s", r.status, r.body)
	}

	p.stop(t)
	p = startProc(t, dir)
	w.Server = p.public
	if _, err := w.InclusionProof(ctx, "orb", "production"); err == nil {
		t.Fatal("the test identity is in the stored orb tree")
	}
	r := verifyTestIdentity("after")
	if r.status != http.StatusBadRequest {
		t.Fatalf("a test identity's proof after the simulator: %d %s", r.status, r.body)
	}
	resultCodeIs("invalid_merkle_root")(t, r)
	pending = pendingSignin(t, authorizeURL())
	if err := w.Approve(ctx, pending.connect, "orb"); err != nil {
		t.Fatal(err)
	}
	if s, err := pending.awaitState(); err != nil || s != "refused" {
		t.Fatalf("a test identity's sign-in after the simulator: %q %v", s, err)
	}
	if r, _ := pending.finish(); r.status != http.StatusOK {
		t.Fatalf("the refused sign-in's browser: %d %s", r.status, r.header.Get("Location"))
	}
}

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"worldid/admin"
	"worldid/bridge"
	"worldid/internal/server"
	"worldid/internal/wallet"
	"worldid/refresh"
	"worldid/store/postgres/pgtest"

	"golang.org/x/oauth2"
)

// TestReplicasShareOnePostgreSQL runs two `worldid serve` processes on one
// PostgreSQL database, as replicas behind a load balancer, and checks the
// multi-replica guarantees of the README's deployment section.
func TestReplicasShareOnePostgreSQL(t *testing.T) {
	ctx := parallelEndToEnd(t, "runs two servers")
	dsn := pgtest.FreshSchema(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	// Replicas behind a load balancer share one public URL, the OIDC
	// issuer; here A's own address plays the load balancer.
	addrA := freeLoopbackAddr(t)
	shared := []string{"-store", dsn, "-base-url", "http://" + addrA}
	a := startProc(t, dirA, append([]string{"-addr", addrA}, shared...)...)
	b := startProc(t, dirB, shared...)

	if ka, kb := jwksKids(t, a), jwksKids(t, b); strings.Join(ka, ",") != strings.Join(kb, ",") || len(ka) == 0 {
		t.Fatalf("replicas publish different signing keys: %v vs %v", ka, kb)
	}
	// B adopted A's proving key and issuer key from the database; its data
	// dir held neither, and the issuer seed stays out of both data dirs.
	for _, path := range []string{"/api/v1/semaphore/proving-key", refresh.IssuerPath} {
		if fa, fb := httpGet(t, a.public+path), httpGet(t, b.public+path); !bytes.Equal(fa, fb) || len(fa) == 0 {
			t.Fatalf("replicas serve different %s (%d vs %d bytes)", path, len(fa), len(fb))
		}
	}
	for _, dir := range []string{dirA, dirB} {
		if _, err := os.Stat(filepath.Join(dir, server.IssuerKeyFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: issuer seed in the data dir: %v", dir, err)
		}
	}
	rp := newRelyingParty(t, ctx, a) // registered through A

	// An identity added through A's admin API is provable and verifiable on
	// B within the registry's follow interval.
	w := newWallet(t, ctx, a, [2]string{"orb", "production"})
	w.Server = b.public
	var item wallet.ResponseItem
	var err error
	provable := func() bool {
		item, err = w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "replicas", Signal: "x"})
		return err == nil
	}
	if !eventually(3*server.RegistryFollowInterval, 100*time.Millisecond, provable) {
		t.Fatalf("identity added on A not provable on B after %v: %v", 3*server.RegistryFollowInterval, err)
	}

	// max_verifications=1, the same nullifier sent to both at once: exactly one success.
	if _, err := b.adminClient.SetActionLimit(ctx, admin.ActionLimitRequest{RPID: rp.app.RPID, Action: "replicas", MaxVerifications: 1}); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": "replicas", "responses": []wallet.ResponseItem{item}})
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := []*serverProc{a, b}[i%2]
			s := postVerify(t, ctx, target, rp.app.RPID, body).status
			mu.Lock()
			statuses[s]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 1 || statuses[400] != 19 {
		t.Fatalf("statuses across replicas %v, want exactly one 200", statuses)
	}

	// A code issued by A is redeemable once — on B — and then refused on A;
	// B's tokens verify against A's JWKS.
	verifier := oauth2.GenerateVerifier()
	res, err := w.SignIn(ctx, rp.oauth.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "orb") // A's authorize endpoint
	if err != nil {
		t.Fatal(err)
	}
	onB := rp.oauth
	onB.Endpoint.TokenURL = b.public + "/token"
	tok, err := onB.Exchange(ctx, res.Params.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("code from A redeemed on B: %v", err)
	}
	if _, err := rp.verifier.Verify(ctx, tok.Extra("id_token").(string)); err != nil {
		t.Fatalf("B's id_token does not verify with A's keys: %v", err)
	}
	if _, err := rp.oauth.Exchange(ctx, res.Params.Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a code redeemed on B was accepted again on A")
	}
	if _, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Fatal("tokens of the replayed code still work on A")
	}
	signInAcrossReplicas(t, ctx, a, b, rp, w)
	sessionAcrossReplicas(t, res.Browser, a, b, rp)
}

// signInAcrossReplicas starts a sign-in on A (which stores nothing; its
// bridge request lives in the shared relay table), lets the wallet read
// and answer it through B's built-in bridge, polls on A (which fetches and
// verifies the answer) and finishes on B: the sealed request opens on
// every replica and its progress is in the shared database.
func signInAcrossReplicas(t *testing.T, ctx context.Context, a, b *serverProc, rp *relyingParty, w *wallet.Wallet) {
	verifier := oauth2.GenerateVerifier()
	pending := pendingSignin(t, rp.oauth.AuthCodeURL("s2", oauth2.S256ChallengeOption(verifier)))
	onB := func(u string) string {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		return b.public + parsed.RequestURI()
	}
	conn, err := bridge.ParseConnect(pending.connect)
	if err != nil || conn.BridgeURL() != a.public {
		t.Fatalf("connect URL %q on A: %v", pending.connect, err)
	}
	conn.Bridge = b.public
	req, err := w.ReadBridgeRequest(ctx, conn.String())
	if err != nil {
		t.Fatalf("wallet read on B's bridge: %v", err)
	}
	// The read is seen through A's relay (the same table) and marked.
	var s string
	if !eventually(10*time.Second, 100*time.Millisecond, func() bool { s, err = pending.state(); return s == "scanned" }) {
		t.Fatalf("status on A after the wallet's read on B: %q %v", s, err)
	}
	if _, err := w.AnswerBridgeRequest(ctx, req, "orb", rand.Reader); err != nil {
		t.Fatalf("answer on B's bridge: %v", err)
	}
	if s, err := pending.awaitState(); err != nil || s != "done" {
		t.Fatalf("status on A: %q %v", s, err)
	}
	r := call(http.MethodGet, onB(pending.waitURL), "", "", "Cookie", pending.cookie)(t)
	code := codeOf(r)
	if code == "" {
		t.Fatalf("finish on B: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	if _, err := rp.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err != nil {
		t.Fatalf("code of a sign-in finished on B, redeemed on A: %v", err)
	}
	if r := call(http.MethodGet, pending.waitURL, "", "", "Cookie", pending.cookie)(t); r.errorCode() != "already_completed" {
		t.Fatalf("second finish on A: %d %s", r.status, r.body)
	}
}

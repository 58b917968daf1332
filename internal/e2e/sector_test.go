package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"worldid/admin"
	"worldid/backup"
	"worldid/internal/wallet"
	"worldid/record"
)

// TestSectorThroughTheBinary: sector identifiers (OIDC Core §8.1) through
// the real binary. The admin API refuses a current-profile app whose
// redirect URIs span hosts without a sector identifier, and fetches a
// sector document only from a public address (a loopback server is never
// connected to). A registered sector is then carried by a backup and a
// restore; after it, the sector's first app keeps the sub it had, on
// either of its redirect hosts, the sector's second app proves (a real
// Semaphore proof) for the first's app_id and gets the same sub, an app
// outside the sector another, and the first app cannot be deleted while
// the second needs it.
func TestSectorThroughTheBinary(t *testing.T) {
	ctx := parallelEndToEnd(t, "end-to-end suite builds and runs the binary")
	p := startProc(t, hardenedDataDir(t))
	const secondHost = "https://m.rp.example/callback"
	uris := []string{e2eRedirect, secondHost}

	_, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "spans hosts", RedirectURIs: uris,
		SigninSettings: admin.SigninSettings{Profile: record.ProfileCurrent}})
	if err == nil || !strings.Contains(err.Error(), "register a sector_identifier_uri") {
		t.Fatalf("current-profile app on two hosts without a sector: %v", err)
	}
	var fetched atomic.Int32
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		w.Write([]byte(`["https://rp.example/callback","https://m.rp.example/callback"]`))
	}))
	defer doc.Close()
	_, err = p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "loopback sector", RedirectURIs: uris,
		SigninSettings: admin.SigninSettings{SectorIdentifierURI: doc.URL + "/sector.json"}})
	if err == nil || !strings.Contains(err.Error(), "not public") || fetched.Load() != 0 {
		t.Fatalf("a sector document on loopback: %v (%d fetches)", err, fetched.Load())
	}

	web := createV1App(t, ctx, p, "web", uris)
	mobile := createV1App(t, ctx, p, "mobile", []string{e2eRedirect})
	other := createV1App(t, ctx, p, "other", []string{e2eRedirect})
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	before := signInSub(t, ctx, p, w, web, e2eRedirect)

	// The registration the admin API makes once the document at a public
	// https address lists every redirect URI (a test has no such address):
	// set in a backup, which the restore carries.
	const sector = "https://rp.example/sector.json"
	q := restoreWith(t, ctx, p, func(a *record.App) {
		switch a.ID {
		case web.AppID:
			a.SectorIdentifierURI = sector
		case mobile.AppID:
			a.SectorIdentifierURI, a.SectorAppID = sector, web.AppID
		}
	})
	moved := *w
	moved.Server = q.public
	if sub := signInSub(t, ctx, q, &moved, web, e2eRedirect); sub != before {
		t.Fatalf("the sector's first app: sub %s, before the sector %s", sub, before)
	}
	if sub := signInSub(t, ctx, q, &moved, web, secondHost); sub != before {
		t.Fatalf("through the second host: sub %s, want %s", sub, before)
	}
	if sub := signInSub(t, ctx, q, &moved, mobile, e2eRedirect); sub != before {
		t.Fatalf("the sector's second app: sub %s, want the first app's %s", sub, before)
	}
	if sub := signInSub(t, ctx, q, &moved, other, e2eRedirect); sub == before {
		t.Fatal("an app outside the sector got the sector's sub")
	}
	list, err := q.adminClient.Apps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list.Apps {
		if a.AppID == mobile.AppID && (a.SectorIdentifierURI != sector || a.SectorAppID != web.AppID) {
			t.Fatalf("restored mobile app %+v", a)
		}
	}
	if err := q.adminClient.DeleteApp(ctx, web.AppID); err == nil || !strings.Contains(err.Error(), "signs in with the subjects of app") {
		t.Fatalf("deleting the app the sector proves for: %v", err)
	}
}

func createV1App(t *testing.T, ctx context.Context, p *serverProc, name string, uris []string) admin.CreatedApp {
	t.Helper()
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: name, RedirectURIs: uris})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// signInSub signs in to app through redirect with the code flow and
// returns the sub of the ID token, which go-oidc verified.
func signInSub(t *testing.T, ctx context.Context, p *serverProc, w *wallet.Wallet, app admin.CreatedApp, redirect string) string {
	t.Helper()
	rp := connectRelyingParty(t, ctx, p, app)
	rp.oauth.RedirectURL = redirect
	verifier, nonce := oauth2.GenerateVerifier(), rand.Text()
	res, err := w.SignIn(ctx, rp.oauth.AuthCodeURL("s", oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), "orb")
	if err != nil {
		t.Fatalf("%s: %v", app.Name, err)
	}
	if !strings.HasPrefix(res.Location, redirect+"?") {
		t.Fatalf("%s: redirected to %s", app.Name, res.Location)
	}
	tok, err := rp.oauth.Exchange(ctx, res.Params.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("%s: exchange: %v", app.Name, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := rp.verifier.Verify(ctx, raw)
	if err != nil || idt.Nonce != nonce {
		t.Fatalf("%s: ID token %v, nonce %q", app.Name, err, idt.Nonce)
	}
	return idt.Subject
}

// restoreWith takes a backup of p, changes its apps with edit, restores
// it into a fresh data dir and starts a server there.
func restoreWith(t *testing.T, ctx context.Context, p *serverProc, edit func(*record.App)) *serverProc {
	t.Helper()
	var taken bytes.Buffer
	if err := p.adminClient.Backup(ctx, &taken); err != nil {
		t.Fatal(err)
	}
	var edited bytes.Buffer
	bw, err := backup.NewWriter(&edited, "json", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.Read(bytes.NewReader(taken.Bytes()), func(table string, row any) error {
		if a, ok := row.(record.App); ok {
			edit(&a)
			row = a
		}
		return bw.Row(table, row)
	}); err != nil {
		t.Fatal(err)
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "edited.backup")
	if err := os.WriteFile(file, edited.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runCLI(t, 0, "restore", "-data", dir, file)
	return startProc(t, dir)
}

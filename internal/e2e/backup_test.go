package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"worldid/admin"
	"worldid/backup"
	"worldid/credential"
	"worldid/internal/wallet"
	"worldid/store/postgres/pgtest"
)

// Online backup and restore, and the move to PostgreSQL, through the real
// binary.

// limitedProofs prepares n verify bodies for app, each for its own action
// with max_verifications 1: once acknowledged, a body is refused forever.
func limitedProofs(t *testing.T, ctx context.Context, p *serverProc, w *wallet.Wallet, app admin.CreatedApp, prefix string, n int) [][]byte {
	t.Helper()
	bodies := make([][]byte, n)
	for i := range n {
		action := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := p.adminClient.SetActionLimit(ctx, admin.ActionLimitRequest{RPID: app.RPID, Action: action, MaxVerifications: 1}); err != nil {
			t.Fatal(err)
		}
		item, err := w.Prove(ctx, wallet.ProofRequest{AppID: app.AppID, Action: action, Signal: "s"})
		if err != nil {
			t.Fatal(err)
		}
		bodies[i], _ = json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": action, "responses": []wallet.ResponseItem{item}})
	}
	return bodies
}

func TestBackupWhileLoadedRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers, proves and runs the bench")
	}
	t.Parallel()
	bothStores(t, backupWhileLoaded)
}

func backupWhileLoaded(t *testing.T, storeArgs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := hardenedDataDir(t)
	p := startProc(t, dir, storeArgs...)
	rp := newRelyingParty(t, ctx, p)
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	bodies := limitedProofs(t, ctx, p, w, rp.app, "backup", 10)

	// `worldid-bench verify` loads the server (reused nullifiers: every
	// request writes a count); a client sends the limited proofs one by
	// one and notes when each was acknowledged.
	bench := exec.CommandContext(ctx, benchBinary(t), "-server", p.public, "-admin-url", p.adm, "-data", dir,
		"-clients", "4", "-duration", "20s", "verify")
	benchErr, _ := bench.StderrPipe()
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	running := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(benchErr)
		once := sync.Once{}
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "verify: ") {
				once.Do(func() { close(running) })
			}
		}
	}()
	select {
	case <-running:
	case <-time.After(4 * time.Minute):
		t.Fatal("bench verify did not start")
	}
	type ack struct {
		body []byte
		at   time.Time
	}
	// Half the limited proofs are acknowledged before the backup begins,
	// the other half are sent while it runs.
	acks := make(chan ack, len(bodies))
	half, backingUp := make(chan struct{}), make(chan struct{})
	var load sync.WaitGroup
	load.Go(func() {
		for i, b := range bodies {
			if i == len(bodies)/2 {
				close(half)
				<-backingUp
			}
			r, err := roundTrip(mustRequest(t, p.public+"/api/v4/verify/"+rp.app.RPID, b))
			if err == nil && r.status == 200 {
				acks <- ack{b, time.Now()}
			}
		}
	})
	<-half
	file := filepath.Join(t.TempDir(), "worldid.backup")
	start := time.Now()
	close(backingUp)
	out := runCLI(t, 0, "backup", "-admin-url", p.adm, "-data", dir, "-o", file)
	load.Wait()
	// The bench has loaded the server through the backup; its numbers are not needed.
	bench.Process.Kill()
	bench.Wait()
	close(acks)
	var before [][]byte
	for a := range acks {
		if a.at.Before(start) {
			before = append(before, a.body)
		}
	}
	if len(before) == 0 || len(before) == len(bodies) {
		t.Fatalf("%d of %d limited proofs acknowledged before the backup began; the test needs some before and some after", len(before), len(bodies))
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 || !strings.Contains(out, "holds secrets") {
		t.Fatalf("backup file %v, %v; output %s", fi, err, out)
	}

	// The restore target: a fresh data dir, and with PostgreSQL a fresh
	// database.
	restoredDir := t.TempDir()
	restoreArgs := []string{"restore", "-data", restoredDir}
	var serveArgs []string
	if len(storeArgs) > 0 {
		dsn := pgtest.FreshSchema(t)
		restoreArgs = append(restoreArgs, "-store", dsn)
		serveArgs = []string{"-store", dsn}
	}

	// Bad input: a truncated or tampered file is refused and writes nothing
	// (the database: the restore below needs it empty).
	raw, _ := os.ReadFile(file)
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"truncated": {raw[:len(raw)*2/3], "truncated"},
		"tampered":  {bytes.Replace(raw, []byte(rp.app.AppID), []byte("app_00000000000000000000000000000000"), 1), "checksum"},
	} {
		bad := filepath.Join(t.TempDir(), name)
		os.WriteFile(bad, c.data, 0o600)
		if out := runCLI(t, 1, append(restoreArgs, bad)...); !strings.Contains(out, c.want) || !strings.Contains(out, "nothing restored") {
			t.Errorf("%s backup: %s", name, out)
		}
		if entries, _ := os.ReadDir(restoredDir); len(entries) != 0 {
			t.Errorf("%s backup: the target holds %d files", name, len(entries))
		}
	}
	// A target that holds data is refused: the original's data dir.
	if out := runCLI(t, 1, append([]string{"restore", "-data", dir}, append(storeArgs, file)...)...); !strings.Contains(out, "nothing restored") {
		t.Errorf("restore into the original: %s", out)
	}

	// Restore, start, change the copy; a restore over it is refused, and
	// with -force replaces what it holds.
	runCLI(t, 0, append(restoreArgs, file)...)
	q := startProc(t, restoredDir, serveArgs...)
	if _, err := q.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "after the restore", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	q.stop(t)
	if out := runCLI(t, 1, append(restoreArgs, file)...); !strings.Contains(out, "-force") || !strings.Contains(out, "nothing restored") {
		t.Errorf("restore over a restored copy: %s", out)
	}
	runCLI(t, 0, append(append(restoreArgs, "-force"), file)...)
	q = startProc(t, restoredDir, serveArgs...)
	for i, b := range before {
		r := send(t, mustRequest(t, q.public+"/api/v4/verify/"+rp.app.RPID, b))
		if r.status != 400 || r.errorCode() != "max_verifications_reached" {
			t.Errorf("nullifier %d acknowledged before the backup: restored server answers %d %s", i, r.status, r.body)
		}
	}
	// The restored server answers as the original did at the backup: its
	// own backup has the same rows as the file (every table's digest), and
	// it serves the same keys.
	again := filepath.Join(t.TempDir(), "again.backup")
	runCLI(t, 0, "backup", "-admin-url", q.adm, "-data", restoredDir, "-o", again)
	if err := summaryOf(t, file).Diff(summaryOf(t, again)); err != nil {
		t.Errorf("the restored server's backup differs from the one it was restored from: %v", err)
	}
	if a, b := httpGet(t, p.public+"/jwks"), httpGet(t, q.public+"/jwks"); !bytes.Equal(a, b) {
		t.Errorf("JWKS differ:\n%s\n%s", a, b)
	}
	for _, path := range []string{"/api/v1/semaphore/proving-key"} {
		if a, b := httpGet(t, p.public+path), httpGet(t, q.public+path); !bytes.Equal(a, b) {
			t.Errorf("%s differs after restore", path)
		}
	}
	codeFlow(t, ctx, connectRelyingParty(t, ctx, q, rp.app), onServer(w, q.public))
}

func mustRequest(t *testing.T, target string, body []byte) *http.Request {
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func summaryOf(t *testing.T, path string) backup.Summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, sum, err := backup.Read(f, nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sum
}

// TestMigrateToTwoReplicas moves a single-VM deployment (JSON store) to
// PostgreSQL as the README shows, then runs two replicas on it.
func TestMigrateToTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three servers")
	}
	t.Parallel()
	dsn := pgtest.FreshSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := hardenedDataDir(t)
	p := startProc(t, dir)
	imported := importPortalApp(t, p, dir)
	rp := connectRelyingParty(t, ctx, p, imported)
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	codeFlow(t, ctx, rp, w)
	bodies := limitedProofs(t, ctx, p, w, imported, "migrate", 2)
	if r := send(t, mustRequest(t, p.public+"/api/v4/verify/"+imported.RPID, bodies[0])); r.status != 200 {
		t.Fatalf("verify before the move: %d %s", r.status, r.body)
	}
	if out := runCLI(t, 1, "migrate", "-from", dir, "-to", dsn); !strings.Contains(out, "locked") {
		t.Errorf("migrate of a running server's store: %s", out)
	}
	p.stop(t)
	before := dirContents(t, dir)
	out := runCLI(t, 0, "migrate", "-from", dir, "-to", dsn)
	if !strings.Contains(out, "copied and verified") || !strings.Contains(out, "apps 2") {
		t.Errorf("migrate: %s", out)
	}
	if after := dirContents(t, dir); !equalContents(before, after) {
		t.Error("migrate changed the JSON store's data dir")
	}
	if out := runCLI(t, 1, "migrate", "-from", dir, "-to", dsn); !strings.Contains(out, "not empty") || !strings.Contains(out, "nothing copied") {
		t.Errorf("migrate into a non-empty database: %s", out)
	}

	// Two replicas on the database, each with an empty data dir.
	a := startProc(t, t.TempDir(), "-store", dsn)
	b := startProc(t, t.TempDir(), "-store", dsn)
	for _, r := range []*serverProc{a, b} {
		wr := onServer(w, r.public)
		codeFlow(t, ctx, connectRelyingParty(t, ctx, r, imported), wr)
		if resp := send(t, mustRequest(t, r.public+"/api/v4/verify/"+imported.RPID, bodies[0])); resp.status != 400 || resp.errorCode() != "max_verifications_reached" {
			t.Errorf("%s: a nullifier spent before the move: %d %s", r.public, resp.status, resp.body)
		}
	}
	if resp := send(t, mustRequest(t, a.public+"/api/v4/verify/"+imported.RPID, bodies[1])); resp.status != 200 {
		t.Fatalf("verify on replica A: %d %s", resp.status, resp.body)
	}
	if resp := send(t, mustRequest(t, b.public+"/api/v4/verify/"+imported.RPID, bodies[1])); resp.status != 400 {
		t.Errorf("the nullifier A acknowledged, on B: %d %s", resp.status, resp.body)
	}
	if ka, kb := httpGet(t, a.public+"/jwks"), httpGet(t, b.public+"/jwks"); !bytes.Equal(ka, kb) {
		t.Error("replicas publish different keys")
	}
}

// importPortalApp imports the IDKit-vector app with a known secret.
func importPortalApp(t *testing.T, p *serverProc, dir string) admin.CreatedApp {
	t.Helper()
	line := `{"app_id":"` + portalAppID + `","rp_id":"rp_1111111111111111","name":"Portal","redirect_uris":["` + e2eRedirect + `"],"client_secret":"` + portalSecret + `"}`
	var imported []admin.ImportedApp
	if err := json.Unmarshal([]byte(adminCLI(t, p, dir, 0, "app", "import", "-json", writeLines(t, line))), &imported); err != nil || len(imported) != 1 {
		t.Fatalf("import: %v", err)
	}
	return admin.CreatedApp{AppInfo: imported[0].AppInfo, ClientSecret: portalSecret}
}

func dirContents(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[strings.TrimPrefix(path, dir+string(filepath.Separator))] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalContents(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// onServer is w talking to another server (a replica, a restored copy).
func onServer(w *wallet.Wallet, url string) *wallet.Wallet {
	c := *w
	c.Server = url
	return &c
}

// TestRoundTripsKeepCredentialsAndAnchors: a credential a refresh issued
// and a trust anchor the operator set survive a backup and restore (both
// stores) and a migration to PostgreSQL: the anchor is listed, and a
// repeat refresh returns the same credential.
func TestRoundTripsKeepCredentialsAndAnchors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and proves")
	}
	t.Parallel()
	bothStores(t, roundTripsKeepCredentialsAndAnchors)
}

func roundTripsKeepCredentialsAndAnchors(t *testing.T, storeArgs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := hardenedDataDir(t)
	p := startProc(t, dir, storeArgs...)
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	sub := refreshBothModes(t, ctx, p, w)
	// Each x-zkp-proof binds its second and is spent once: every refresh
	// below proves for a later one.
	held := refreshAt(t, ctx, w, sub, 10*time.Second)
	const anchorRP = "rp_0123456789abcdef"
	x := "0x24a3480be33ae5a83f68fbefe658e65053cbe99ee442c178859070a23372a4d4"
	y := "0x2fc70cc380d5bb9d8537a8fd82e98fb29eb837ff3943f5704ec3957f444ec6cd"
	adminCLI(t, p, dir, 0, "anchor", "set", "-kind", "oprf_key", "-id", anchorRP, "-x", x, "-y", y)
	check := func(t *testing.T, q *serverProc, qDir string, after time.Duration) {
		t.Helper()
		if out := adminCLI(t, q, qDir, 0, "anchor", "list"); !regexpLine(out, "oprf_key", anchorRP, x) {
			t.Errorf("anchor list of the copy:\n%s", out)
		}
		again := refreshAt(t, ctx, onServer(w, q.public), sub, after)
		if again.ID != held.ID || !bytes.Equal(again.Signature, held.Signature) {
			t.Errorf("a repeat refresh on the copy issued credential %d, the original holds %d", again.ID, held.ID)
		}
	}

	file := filepath.Join(t.TempDir(), "worldid.backup")
	runCLI(t, 0, "backup", "-admin-url", p.adm, "-data", dir, "-o", file)
	qDir := t.TempDir()
	restoreArgs, serveArgs := []string{"restore", "-data", qDir}, []string(nil)
	if len(storeArgs) > 0 {
		dsn := pgtest.FreshSchema(t)
		restoreArgs, serveArgs = append(restoreArgs, "-store", dsn), []string{"-store", dsn}
	}
	runCLI(t, 0, append(restoreArgs, file)...)
	check(t, startProc(t, qDir, serveArgs...), qDir, 20*time.Second)

	if len(storeArgs) == 0 {
		t.Run("migrate", func(t *testing.T) {
			dsn := pgtest.FreshSchema(t)
			p.stop(t)
			runCLI(t, 0, "migrate", "-from", dir, "-to", dsn)
			mDir := t.TempDir()
			check(t, startProc(t, mDir, "-store", dsn), mDir, 30*time.Second)
		})
	}
}

// refreshAt refreshes w's credential for sub, credential-only, proving for
// the time after from now.
func refreshAt(t *testing.T, ctx context.Context, w *wallet.Wallet, sub string, after time.Duration) *credential.Credential {
	t.Helper()
	req := refreshRequest(t, ctx, w, sub)
	req.Now = req.Now.Add(after)
	issuer, err := wallet.FetchIssuerKey(ctx, w.HTTP, w.Server)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wallet.Refresh(ctx, w.HTTP, req, issuer)
	if err != nil {
		t.Fatalf("refresh on %s: %v", w.Server, err)
	}
	return c
}

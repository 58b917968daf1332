package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"worldid/store"
)

var demoLine = regexp.MustCompile(`client_id +(\S+)\n +client_secret +(\S+)`)

// The demo app step of a first start is idempotent: a start killed after
// storing the app but before printing its secret leaves the next start to
// print that app with a new secret, which is the one that works.
func TestDemoAppAfterInterruptedFirstStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	printed := func() (id, secret string) {
		t.Helper()
		var out bytes.Buffer
		if created, err := createDemoApp(ctx, db, dir, &out); err != nil || !created {
			t.Fatal(created, err)
		}
		m := demoLine.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no demo app printed: %q", out.String())
		}
		return m[1], m[2]
	}
	// The first start stores the app; its output is lost with the process.
	id, lost := printed()
	again, secret := printed()
	if again != id || secret == lost {
		t.Fatalf("the resumed first start printed %s with secret %s; want %s with a new secret", again, secret, id)
	}
	app, err := db.App(ctx, id)
	sum := sha256.Sum256([]byte(secret))
	if err != nil || app.SecretHash != hex.EncodeToString(sum[:]) {
		t.Fatalf("the printed secret is not the app's: %+v, %v", app, err)
	}
	if apps, _ := db.Apps(ctx); len(apps) != 1 {
		t.Fatalf("%d apps, want the one demo app", len(apps))
	}
	if err := markFirstStartDone(dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DemoAppFile)); !os.IsNotExist(err) {
		t.Errorf("%s after the first start is done: %v", DemoAppFile, err)
	}

	// A replica joining a store with apps (no pending demo app) adds none.
	var out bytes.Buffer
	if created, err := createDemoApp(ctx, db, t.TempDir(), &out); err != nil || created || out.Len() != 0 {
		t.Errorf("a replica's first start: %v, printed %q", err, out.String())
	}
}

// A first start killed after naming the demo app but before storing it
// creates one on the next start.
func TestDemoAppNamedButNotStored(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := os.WriteFile(filepath.Join(dir, DemoAppFile), []byte("app_00000000000000000000000000000001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := createDemoApp(context.Background(), db, dir, &out); err != nil || !demoLine.MatchString(out.String()) {
		t.Fatalf("%v, printed %q", err, out.String())
	}
	if apps, _ := db.Apps(context.Background()); len(apps) != 1 {
		t.Fatalf("%d apps, want the demo app", len(apps))
	}
}

// A first start creates the demo app only for a loopback base URL, unless
// -demo-app says otherwise.
func TestDemoAppWanted(t *testing.T) {
	for _, tc := range []struct {
		flag, baseURL string
		want          bool
	}{
		{"auto", "http://127.0.0.1:8080", true},
		{"auto", "http://localhost:8080", true},
		{"auto", "http://[::1]:8080", true},
		{"auto", "https://id.example.com", false},
		{"auto", "http://10.0.0.1:8080", false},
		{"on", "https://id.example.com", true},
		{"off", "http://127.0.0.1:8080", false},
	} {
		c := Config{DemoApp: tc.flag}
		if got := c.demoAppWanted(tc.baseURL); got != tc.want {
			t.Errorf("-demo-app %s, base URL %s: %v, want %v", tc.flag, tc.baseURL, got, tc.want)
		}
	}
}

// /metrics moves to the admin listener by default when the public one
// faces other hosts.
func TestMetricsOnAdmin(t *testing.T) {
	for _, tc := range []struct {
		flag, addr string
		want       bool
	}{
		{"auto", "127.0.0.1:8080", false},
		{"auto", "0.0.0.0:8080", true},
		{"auto", "[::]:8080", true},
		{"public", "0.0.0.0:8080", false},
		{"admin", "127.0.0.1:8080", true},
	} {
		c := Config{Metrics: tc.flag, Addr: tc.addr}
		if got := c.metricsOnAdmin(); got != tc.want {
			t.Errorf("-metrics %s, -addr %s: %v, want %v", tc.flag, tc.addr, got, tc.want)
		}
	}
}

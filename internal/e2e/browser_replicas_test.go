package e2e

import (
	"crypto/rand"
	"testing"

	"worldid/bridge"
	"worldid/store/postgres/pgtest"
)

// TestBrowserSignInAcrossReplicas: two replicas on one PostgreSQL. The
// browser signs in at A; the wallet reads and answers A's bridge request
// at B's built-in relay; A's page, polling its own relay, sees the answer
// (the relay's table is shared), verifies it and lands on the callback by
// itself.
func TestBrowserSignInAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two servers and a browser")
	}
	t.Parallel()
	dsn := pgtest.FreshSchema(t)
	e := newBrowserEnv(t, "-store", dsn)
	b := startProc(t, hardenedDataDir(t), "-store", dsn)
	t.Cleanup(func() { b.stop(t) })

	tab, _ := e.tab(t)
	_, link := e.waitPage(t, tab, "")
	atB, err := bridge.ParseConnect(link)
	if err != nil {
		t.Fatal(err)
	}
	atB.Bridge = b.public
	req, err := e.w.ReadBridgeRequest(e.ctx, atB.String())
	if err != nil {
		t.Fatalf("reading A's request at B's relay: %v", err)
	}
	if _, err := e.w.AnswerBridgeRequest(e.ctx, req, "orb", rand.Reader); err != nil {
		t.Fatalf("answering at B's relay: %v", err)
	}
	signedIn(t, tab)
}

package signin

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"worldid/record"
)

// TestSectorProofApp: an app that joined another app's sector asks the
// wallet to prove for that app: its app_id in the World ID 3.0 request,
// and its rp_id and RP signing key in the 4.0 proof request (the app has
// no key of its own); the 4.0 answer is checked for that rp_id and
// approves the sign-in with that rp_id's nullifier.
func TestSectorProofApp(t *testing.T) {
	e := newBridgeEnvV4(t)
	const anchorID, anchorRP = "app_11111111111111111111111111111111", "rp_1111111111111111"
	sector := "https://rp.example/sector.json"
	if err := e.store.CreateApp(t.Context(), record.App{ID: anchorID, RPID: anchorRP, Name: "Sector's first app", RPSigningKey: testRPKey,
		SectorIdentifierURI: sector}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateApp(t.Context(), testApp, func(a *record.App) error {
		a.RPSigningKey, a.SectorIdentifierURI, a.SectorAppID = "", sector, anchorID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.store.base = e.store.lsn()
	b, conn := e.page(t)
	req, err := e.wallet.Fetch(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	if pr := req.ProofRequest; req.AppID != anchorID || pr == nil || pr.RPID != anchorRP || pr.OPRFKeyID != anchorRP {
		t.Fatalf("bridge request for app %s, proof request %+v", req.AppID, pr)
	}
	if err := e.wallet.Answer(context.Background(), conn, rand.Reader, answerV4For(t, req.ProofRequest, anchorRP)); err != nil {
		t.Fatal(err)
	}
	if s := e.state(t, b); s.State != stateDone {
		t.Fatalf("after the 4.0 answer for the sector's rp_id: %+v", s)
	}
	w := e.do(b, http.MethodGet, b.waitURL, nil, "192.0.2.1:1")
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "2a") {
		t.Fatalf("finish: %d %s", w.Code, loc)
	}
}

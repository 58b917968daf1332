package wallet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/credential"
	"worldid/field"
	"worldid/record"
	"worldid/refresh"
	"worldid/semaphore"
	"worldid/semaphore/prover"
	"worldid/store"
)

// TestRefreshAgainstIssuer drives the refresh handler over HTTP with the
// wallet, on a real store: a credential-only refresh, a PCP refresh, an
// issuer key mismatch and a refused sub.
func TestRefreshAgainstIssuer(t *testing.T) {
	pk, vk, err := prover.Setup(refreshTreeDepth)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{3})
	id, err := semaphore.NewIdentity(rng)
	if err != nil {
		t.Fatal(err)
	}
	orbKey, err := GenerateOrbKey(rng)
	if err != nil {
		t.Fatal(err)
	}
	commitment := id.Commitment()
	idComm := field.Format(&commitment)
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.PutSignup(ctx, record.Signup{IDCommitment: idComm, SignupID: "signup-w", VerifiedAt: time.Unix(1_700_000_000, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddOrbKey(ctx, "orb-w", string(OrbKeyPEM(&orbKey.PublicKey))); err != nil {
		t.Fatal(err)
	}
	issuerKey, err := babyjub.NewPrivateKey(bytes.Repeat([]byte{4}, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_750_000_000, 0)
	h, err := refresh.New(refresh.Options{
		Store: db, VerifyingKey: vk, IssuerKey: issuerKey,
		Reissue: true, // both modes for one identity
		Now:     func() time.Time { return now },
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req := &RefreshRequest{IssuerURL: srv.URL + "/", Identity: id, ProvingKey: pk, Sub: "0x1234", Now: now}
	c, err := Refresh(ctx, srv.Client(), req, issuerKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	var sub fr.Element
	sub.SetUint64(0x1234)
	if c.Claims[0] != credential.RefreshClaim(commitment, sub, uint64(now.Unix())) {
		t.Error("credential-only claims[0]")
	}

	pcp, err := BuildTestPCP(rng, orbKey, "orb-w", "signup-w", now)
	if err != nil {
		t.Fatal(err)
	}
	req.PCP = pcp
	c, err = Refresh(ctx, srv.Client(), req, issuerKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := credential.ClaimFromBytes(pcp.HashesJSON); c.Claims[0] != want {
		t.Error("PCP claims[0]")
	}

	other, err := babyjub.NewPrivateKey(bytes.Repeat([]byte{5}, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	req.PCP, req.Now = nil, now.Add(time.Second)
	if _, err := Refresh(ctx, srv.Client(), req, other.Public()); err == nil {
		t.Error("accepted a credential from another issuer")
	}
	req.Sub, req.Now = "0x99", now.Add(2*time.Second)
	var re *RefreshError
	if _, err := Refresh(ctx, srv.Client(), req, issuerKey.Public()); !errors.As(err, &re) || re.Status != 400 || re.Code != refresh.CodeSubMismatch {
		t.Errorf("other sub: %v", err)
	}
}

func TestParseRefreshResponseRejects(t *testing.T) {
	issuer, err := babyjub.NewPrivateKey(bytes.Repeat([]byte{4}, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	var sub fr.Element
	c := &credential.Credential{Sub: sub}
	if err := c.Sign(issuer); err != nil {
		t.Fatal(err)
	}
	data, _ := c.MarshalJSON()
	ok := func(cred string) []byte { return []byte(`{"success":true,"credential":"` + cred + `","message":"m"}`) }
	good := b64(data)
	if _, err := ParseRefreshResponse(200, ok(good), issuer.Public(), sub); err != nil {
		t.Fatal(err)
	}
	var one fr.Element
	one.SetOne()
	for name, tc := range map[string]struct {
		status int
		body   []byte
		sub    fr.Element
	}{
		"error answer":  {400, []byte(`{"success":false,"error":"INVALID_SUB","message":"m"}`), sub},
		"not JSON":      {200, []byte("<html>"), sub},
		"unpadded":      {200, ok(good[:len(good)-1]), sub},
		"not canonical": {200, ok(b64(append(data[:len(data)-1:len(data)-1], ' ', '}'))), sub},
		"other sub":     {200, ok(good), one},
	} {
		if _, err := ParseRefreshResponse(tc.status, tc.body, issuer.Public(), tc.sub); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

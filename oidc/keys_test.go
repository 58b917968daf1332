package oidc

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"worldid/backup"
	"worldid/record"
)

func newKeyProvider(t *testing.T, store *testStore, clock *fakeClock) *Provider {
	t.Helper()
	p, err := New(Options{Issuer: "https://id.example", Store: store, Rand: rand.Reader, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func jwksKids(t *testing.T, p *Provider) []string {
	t.Helper()
	var doc struct{ Keys []jwk }
	if err := json.Unmarshal(p.keySet().jwks, &doc); err != nil {
		t.Fatal(err)
	}
	// Each RSA key is followed by its access-token key.
	var kids []string
	for i, k := range doc.Keys {
		if i%2 == 1 {
			if k.Kty != "EC" || k.Use != "sig" || k.Alg != "ES256" || k.Crv != "P-256" || len(k.X) != 43 || len(k.Y) != 43 || k.N != "" ||
				k.Kid != p.keySet().published[doc.Keys[i-1].Kid].ecJWK.Kid {
				t.Fatalf("JWKS entry %+v", k)
			}
			continue
		}
		if k.Kty != "RSA" || k.Use != "sig" || k.Alg != "RS256" || k.E != "AQAB" || len(k.N) != 342 || k.Crv != "" {
			t.Fatalf("JWKS entry %+v", k)
		}
		kids = append(kids, k.Kid)
	}
	if len(doc.Keys)%2 != 0 {
		t.Fatalf("JWKS without the access-token key: %s", p.keySet().jwks)
	}
	return kids
}

func issue(t *testing.T, p *Provider) string {
	t.Helper()
	now := p.now()
	return must(p.signAccessToken(p.keySet(), grant{id: "g", clientID: testClientID, scope: "openid", sub: testNullifier, level: "orb", authTime: now}, now))
}

func TestKeySchedule(t *testing.T) {
	store, clock := newTestStore(t), &fakeClock{t: testStart}
	p := newKeyProvider(t, store, clock)
	ctx := context.Background()
	if len(store.keys()) != 1 {
		t.Fatalf("first start stored %d keys", len(store.keys()))
	}
	first := p.keySet().signer.rec
	if !first.ActivateAt.Equal(testStart) || first.ID != thumbprint(&p.keySet().signer.priv.PublicKey) {
		t.Fatalf("first key %+v", first)
	}
	set := p.keySet()
	if p.keySet() != set {
		t.Fatal("key set rebuilt without a change")
	}

	// Not yet due: nothing happens.
	clock.t = testStart.Add(defaultRotation - keyPrepublish - time.Second)
	if err := p.maintainKeys(ctx); err != nil || len(store.keys()) != 1 {
		t.Fatalf("early maintenance: %v, %d keys", err, len(store.keys()))
	}
	// Due: the successor is published, the old key still signs.
	clock.t = testStart.Add(defaultRotation - keyPrepublish)
	if err := p.maintainKeys(ctx); err != nil || len(store.keys()) != 2 {
		t.Fatalf("maintenance: %v, %d keys", err, len(store.keys()))
	}
	if p.keySet().signer.rec.ID != first.ID || len(jwksKids(t, p)) != 2 {
		t.Fatal("successor signs before its time or is not published")
	}
	var next record.SigningKey
	for _, k := range store.keys() {
		if k.ID != first.ID {
			next = k
		}
	}
	if !next.ActivateAt.Equal(testStart.Add(defaultRotation)) {
		t.Fatalf("successor activates at %v", next.ActivateAt)
	}
	// Idempotent while pending.
	if err := p.RotateKeys(ctx); err != nil || len(store.keys()) != 2 {
		t.Fatalf("rotate while pending: %v, %d keys", err, len(store.keys()))
	}
	clock.t = next.ActivateAt.Add(-time.Minute)
	oldToken := issue(t, p)

	// The successor signs; the old key stays published.
	clock.t = next.ActivateAt
	if p.keySet().signer.rec.ID != next.ID {
		t.Fatal("successor does not sign at its activation")
	}
	if kids := jwksKids(t, p); !slices.Equal(kids, []string{next.ID, first.ID}) {
		t.Fatalf("JWKS kids %v", kids)
	}
	if _, err := p.parseAccessToken(oldToken); err != nil {
		t.Fatalf("token of the retired key rejected: %v", err)
	}
	// After the retention, the old key is gone from JWKS and store.
	clock.t = next.ActivateAt.Add(keyRetention)
	if kids := jwksKids(t, p); !slices.Equal(kids, []string{next.ID}) {
		t.Fatalf("JWKS kids after retention %v", kids)
	}
	if err := p.maintainKeys(ctx); err != nil || len(store.keys()) != 1 {
		t.Fatalf("retention maintenance: %v, %d keys", err, len(store.keys()))
	}
	if keyRetention <= tokenLifetime || jwksMaxAge*time.Second >= keyPrepublish {
		t.Fatal("schedule constants violate doc/design.md §4")
	}

	// Manual rotation: published now, signing after the pre-publication.
	if err := p.RotateKeys(ctx); err != nil || len(store.keys()) != 2 {
		t.Fatalf("rotate: %v, %d keys", err, len(store.keys()))
	}
	if p.keySet().signer.rec.ID != next.ID || len(jwksKids(t, p)) != 2 {
		t.Fatal("manual rotation signs at once")
	}

	// A replica sharing the store uses the same keys.
	replica := newKeyProvider(t, store, clock)
	if !slices.Equal(jwksKids(t, replica), jwksKids(t, p)) {
		t.Fatal("replica publishes other keys")
	}
	if _, err := replica.parseAccessToken(issue(t, p)); err != nil {
		t.Fatalf("replica rejects a token: %v", err)
	}
}

func TestKeyErrors(t *testing.T) {
	store, clock := newTestStore(t), &fakeClock{t: testStart}
	store.setFail(errors.New("down"))
	if _, err := New(Options{Issuer: "https://id.example", Store: store, Rand: rand.Reader, Now: clock.Now}); err == nil {
		t.Fatal("New succeeds without keys")
	}
	k := sharedKey()
	bad := k
	bad.ID = "other"
	if _, err := parseSigningKey(bad); err == nil {
		t.Fatal("key with a wrong kid accepted")
	}
	small := must(rsa.GenerateKey(rand.Reader, 1024))
	der := must(x509.MarshalPKCS8PrivateKey(small))
	if _, err := parseSigningKey(record.SigningKey{ID: thumbprint(&small.PublicKey), PrivateKey: der}); err == nil {
		t.Fatal("RSA-1024 key accepted")
	}
}

func TestOptions(t *testing.T) {
	store := newTestStore(t)
	store.addKey(sharedKey())
	base := Options{Issuer: "https://id.example", Store: store, Rand: rand.Reader, Now: time.Now}
	for _, issuer := range []string{"", "id.example", "ftp://id.example", "https://id.example/", "https://id.example?x", "https://u@id.example", "https://id.example#f", "https://id.example/a b"} {
		o := base
		o.Issuer = issuer
		if _, err := New(o); err == nil {
			t.Errorf("issuer %q accepted", issuer)
		}
	}
	o := base
	o.Store = nil
	if _, err := New(o); err == nil {
		t.Error("missing store accepted")
	}
	o = base
	o.KeyRotationPeriod = time.Hour
	if _, err := New(o); err == nil {
		t.Error("rotation shorter than the pre-publication accepted")
	}
}

func TestMaintainPrunes(t *testing.T) {
	f := newFixture(t)
	f.codeFor(authorizeQuery())
	f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil) // stores nothing
	if progress, codes := f.store.rows(backup.TableSigninProgress), f.store.rows(backup.TableAuthCodes); progress != 1 || codes != 1 {
		t.Fatalf("state before pruning: %d sign-ins, %d codes", progress, codes)
	}
	f.clock.Advance(codeLifetime + tokenLifetime)
	if err := f.p.maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if progress, codes := f.store.rows(backup.TableSigninProgress), f.store.rows(backup.TableAuthCodes); progress != 0 || codes != 0 {
		t.Fatalf("state after pruning: %d sign-ins, %d codes", progress, codes)
	}
}

func TestRunStops(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.p.Run(ctx); close(done) }()
	cancel()
	<-done
}

// RevokeKey: a pending key goes without a replacement; the signing key is
// replaced by one that signs at once; either way the key leaves the JWKS
// and its tokens stop verifying; a second revocation is told apart from an
// unknown kid. KeyList reports the states, revoked keys included.
func TestRevokeKey(t *testing.T) {
	store, clock := newTestStore(t), &fakeClock{t: testStart}
	p := newKeyProvider(t, store, clock)
	ctx := context.Background()
	first := p.keySet().signer.rec.ID
	token := issue(t, p)
	if err := p.RotateKeys(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := p.KeyList(ctx)
	if err != nil || len(list) != 2 || list[0].State != "active" || list[1].State != "pending" ||
		!list[0].RetiresAt.Equal(list[1].ActivatesAt.Add(keyRetention)) || !list[1].RetiresAt.IsZero() {
		t.Fatalf("KeyList = %+v, %v", list, err)
	}
	pending := list[1].KID
	if err := p.RevokeKey(ctx, pending); err != nil || len(store.keys()) != 1 {
		t.Fatalf("revoke the pending key: %v, %d keys", err, len(store.keys()))
	}
	clock.t = testStart.Add(time.Minute)
	if err := p.RevokeKey(ctx, first); err != nil {
		t.Fatal(err)
	}
	signer := p.keySet().signer.rec
	if signer.ID == first || !signer.ActivateAt.Equal(clock.t) || len(store.keys()) != 1 {
		t.Fatalf("after revoking the signing key: signer %s activating %v, %d keys", signer.ID, signer.ActivateAt, len(store.keys()))
	}
	if kids := jwksKids(t, p); slices.Contains(kids, first) || len(kids) != 1 {
		t.Errorf("JWKS after revocation: %v", kids)
	}
	if _, err := p.parseAccessToken(token); err == nil {
		t.Error("a token of the revoked key still verifies")
	}
	if _, err := p.parseAccessToken(issue(t, p)); err != nil {
		t.Errorf("a token of the new key: %v", err)
	}
	if err := p.RevokeKey(ctx, first); !errors.Is(err, record.ErrKeyRevoked) {
		t.Errorf("revoke a revoked key: %v", err)
	}
	if err := p.RevokeKey(ctx, "nokid"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("revoke an unknown key: %v", err)
	}
	// The revoked keys follow the stored one, in the order of revocation.
	list, err = p.KeyList(ctx)
	want := []record.KeyInfo{
		{KID: signer.ID, State: "active", CreatedAt: clock.t, ActivatesAt: clock.t},
		{KID: pending, State: "revoked", RevokedAt: testStart},
		{KID: first, State: "revoked", RevokedAt: clock.t},
	}
	if err != nil || !slices.Equal(list, want) {
		t.Errorf("KeyList after revocations = %+v, %v; want %+v", list, err, want)
	}
}

package storetest

import (
	"context"
	"testing"

	"worldid/record"
)

// testSigninSettings: an app's sign-in settings survive create, import
// (with replace) and a reopen unchanged.
func testSigninSettings(t *testing.T, open Opener) {
	ctx := context.Background()
	b, reopen := open(t)
	a := testApp(1, 1)
	a.Profile, a.TokenEndpointAuthMethod, a.JWKS = record.ProfileCurrent, record.AuthPrivateKeyJWT, `{"keys":[{"kty":"EC"}]}`
	a.PostLogoutRedirectURIs, a.PKCERequired, a.ResponseTypes = []string{"https://app1.example/bye"}, true, []string{"code", "code id_token"}
	a.SectorIdentifierURI = "https://sector.example/uris.json"
	mustCreate(t, b, a)
	c := testApp(2, 2)
	c.Profile, c.ResponseTypes = record.ProfileCurrent, []string{"id_token"}
	c.TokenEndpointAuthMethod, c.JWKSURI = record.AuthPrivateKeyJWT, "https://app2.example/jwks.json"
	c.RPSigningKey = "0101010101010101010101010101010101010101010101010101010101010101"
	c.SectorIdentifierURI, c.SectorAppID = "https://sector.example/uris.json", a.ID
	if err := b.ImportApps(ctx, []record.App{c}, true); err != nil {
		t.Fatal(err)
	}
	b = reopen()
	for _, want := range []record.App{a, c} {
		got, err := b.App(ctx, want.ID)
		if err != nil || !equalApps(got, want) {
			t.Fatalf("App(%s) = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}
}

package admin

import (
	"slices"
	"strings"
	"testing"

	"worldid/record"
)

const testJWKS = `{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]}`

// TestSigninSettings: create and import carry the sign-in settings to the
// store and back in AppInfo; invalid settings are refused.
func TestSigninSettings(t *testing.T) {
	srv, st := newTestServer(t)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	settings := SigninSettings{PKCE: "required", ResponseTypes: []string{"code"}, Profile: record.ProfileCurrent, TokenEndpointAuthMethod: record.AuthPrivateKeyJWT, JWKS: testJWKS,
		PostLogoutRedirectURIs: []string{"https://rp.example/bye"}}
	created, err := c.CreateApp(t.Context(), CreateAppRequest{Name: "Current", RedirectURIs: []string{"https://rp.example/cb"}, SigninSettings: settings})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.App(t.Context(), created.AppID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Profile != record.ProfileCurrent || stored.TokenEndpointAuthMethod != record.AuthPrivateKeyJWT || stored.JWKS != testJWKS ||
		!slices.Equal(stored.PostLogoutRedirectURIs, settings.PostLogoutRedirectURIs) || created.Profile != record.ProfileCurrent ||
		!stored.PKCERequired || !slices.Equal(stored.ResponseTypes, []string{"code"}) || created.PKCE != "required" {
		t.Fatalf("stored %+v, answered %+v", stored, created)
	}
	if app, err := c.CreateApp(t.Context(), CreateAppRequest{Name: "By URI", RedirectURIs: []string{"https://rp.example/cb"},
		SigninSettings: SigninSettings{TokenEndpointAuthMethod: record.AuthPrivateKeyJWT, JWKSURI: "https://rp.example/jwks"}}); err != nil ||
		app.JWKSURI != "https://rp.example/jwks" {
		t.Fatalf("jwks_uri app: %+v %v", app, err)
	}
	line := `{"app_id":"app_00000000000000000000000000000001","rp_id":"rp_0000000000000001","name":"Imported","redirect_uris":[],"profile":"current","token_endpoint_auth_method":"client_secret_basic"}`
	imported, err := c.ImportApps(t.Context(), []byte(line+"\n"), false)
	stored, _ = st.App(t.Context(), "app_00000000000000000000000000000001")
	if err != nil || len(imported.Apps) != 1 || imported.Apps[0].TokenEndpointAuthMethod != record.AuthClientSecretBasic ||
		imported.Apps[0].PKCE != "optional" || stored.PKCERequired {
		t.Fatalf("import: %+v %v", imported, err)
	}
	for name, bad := range map[string]SigninSettings{
		"unknown profile":         {Profile: "v2"},
		"unknown method":          {TokenEndpointAuthMethod: "tls_client_auth"},
		"private_key_jwt no jwks": {TokenEndpointAuthMethod: record.AuthPrivateKeyJWT},
		"jwks without the method": {JWKS: testJWKS},
		"private key in jwks":     {TokenEndpointAuthMethod: record.AuthPrivateKeyJWT, JWKS: strings.Replace(testJWKS, `"kid"`, `"d":"x","kid"`, 1)},
		"jwks not a set":          {TokenEndpointAuthMethod: record.AuthPrivateKeyJWT, JWKS: `{"kty":"EC"}`},
		"bad logout URI":          {PostLogoutRedirectURIs: []string{"http://rp.example/bye"}},
		"unknown pkce":            {PKCE: "maybe"},
		"jwks and jwks_uri":       {TokenEndpointAuthMethod: record.AuthPrivateKeyJWT, JWKS: testJWKS, JWKSURI: "https://rp.example/jwks"},
		"http jwks_uri":           {TokenEndpointAuthMethod: record.AuthPrivateKeyJWT, JWKSURI: "http://rp.example/jwks"},
		"token alone":             {ResponseTypes: []string{"token"}},
		"non-canonical type":      {ResponseTypes: []string{"token id_token"}},
	} {
		if _, err := c.CreateApp(t.Context(), CreateAppRequest{Name: "Bad", RedirectURIs: []string{"https://rp.example/cb"}, SigninSettings: bad}); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

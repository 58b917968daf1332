package admin

import (
	"encoding/json"
	"net/url"
	"slices"

	"worldid/record"
)

// maxJWKSBytes bounds a registered JWKS (a few public keys).
const maxJWKSBytes = 16 << 10

// SigninSettings are an app's Sign in with World ID settings beyond its
// redirect URIs (doc/interfaces.md §2.4.1, §4.1, §5). The zero value is
// what every app had before them: the v1 contract, either secret method
// at /token, no logout redirect. They ride inline in CreateAppRequest,
// ImportAppRequest and AppInfo.
type SigninSettings struct {
	// Profile is "" (the v1 contract) or "current".
	Profile string `json:"profile,omitempty"`
	// TokenEndpointAuthMethod is "", client_secret_basic,
	// client_secret_post or private_key_jwt (which needs JWKS).
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// JWKS is the app's public JSON Web Key Set (RFC 7517 §5) as a JSON
	// text: the keys of its private_key_jwt assertions.
	JWKS string `json:"jwks,omitempty"`
	// JWKSURI is the https URL of that set instead of JWKS.
	JWKSURI string `json:"jwks_uri,omitempty"`
	// PostLogoutRedirectURIs are where RP-initiated logout may return to
	// (the rules of redirect URIs).
	PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris,omitempty"`
	// PKCE is "required" or "optional" (empty: optional, as for every app
	// before the setting). `worldid app create` sends "required" unless
	// told otherwise (RFC 9700 §2.1.1 for new apps); imports and API
	// clients that omit it keep today's behaviour.
	PKCE string `json:"pkce,omitempty"`
	// ResponseTypes limit the app to these response types; empty allows
	// every supported one.
	ResponseTypes []string `json:"response_types,omitempty"`
	// SectorIdentifierURI is the app's sector identifier (sector.go): an
	// https URL whose JSON array lists every redirect URI of the app.
	// Set at creation or import only.
	SectorIdentifierURI string `json:"sector_identifier_uri,omitempty"`
}

// PKCE settings.
const (
	pkceRequired = "required"
	pkceOptional = "optional"
)

// validate checks the settings as the provider will use them.
func (s SigninSettings) validate() error {
	if s.Profile != record.ProfileV1 && s.Profile != record.ProfileCurrent {
		return badRequest("profile must be empty (the v1 contract) or %q", record.ProfileCurrent)
	}
	methods := []string{"", record.AuthClientSecretBasic, record.AuthClientSecretPost, record.AuthPrivateKeyJWT}
	if !slices.Contains(methods, s.TokenEndpointAuthMethod) {
		return badRequest("token_endpoint_auth_method must be empty, %s, %s or %s",
			record.AuthClientSecretBasic, record.AuthClientSecretPost, record.AuthPrivateKeyJWT)
	}
	if (s.TokenEndpointAuthMethod == record.AuthPrivateKeyJWT) != (s.JWKS != "" || s.JWKSURI != "") || (s.JWKS != "" && s.JWKSURI != "") {
		return badRequest("private_key_jwt needs one of jwks and jwks_uri, and only it uses them")
	}
	if s.JWKSURI != "" {
		if u, err := url.Parse(s.JWKSURI); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" ||
			len(s.JWKSURI) > maxRedirectURI {
			return badRequest("jwks_uri must be an https URL without userinfo or fragment")
		}
	}
	if s.JWKS != "" {
		if err := validateJWKS(s.JWKS); err != nil {
			return err
		}
	}
	if err := validateRedirectURIs(s.PostLogoutRedirectURIs, 0); err != nil {
		return badRequest("post_logout_%v", err)
	}
	if s.PKCE != "" && s.PKCE != pkceRequired && s.PKCE != pkceOptional {
		return badRequest("pkce must be %s or %s", pkceRequired, pkceOptional)
	}
	if s.SectorIdentifierURI != "" {
		if err := validateSectorURI(s.SectorIdentifierURI); err != nil {
			return err
		}
	}
	for _, rt := range s.ResponseTypes {
		if !record.ValidResponseType(rt) {
			return badRequest("response_types: %q is not a supported response type (canonical order: code id_token token)", rt)
		}
	}
	return nil
}

// validateJWKS: a JSON object whose keys array holds public keys only (no
// "d", the private member of RSA and EC keys, RFC 7518 §6.2.2.1, §6.3.2.1).
func validateJWKS(raw string) error {
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if len(raw) > maxJWKSBytes || json.Unmarshal([]byte(raw), &set) != nil || len(set.Keys) == 0 {
		return badRequest("jwks must be a JSON Web Key Set with at least one key, at most %d bytes", maxJWKSBytes)
	}
	for _, k := range set.Keys {
		if _, private := k["d"]; private {
			return badRequest("jwks must hold public keys only")
		}
		if kty := k["kty"]; kty != "RSA" && kty != "EC" {
			return badRequest("jwks keys must be RSA or EC")
		}
	}
	return nil
}

// apply stores the settings in app.
func (s SigninSettings) apply(app *record.App) {
	app.Profile, app.TokenEndpointAuthMethod, app.JWKS, app.JWKSURI = s.Profile, s.TokenEndpointAuthMethod, s.JWKS, s.JWKSURI
	app.PostLogoutRedirectURIs, app.ResponseTypes = s.PostLogoutRedirectURIs, s.ResponseTypes
	app.PKCERequired = s.PKCE == pkceRequired
	app.SectorIdentifierURI = s.SectorIdentifierURI
}

func signinSettingsOf(app record.App) SigninSettings {
	pkce := pkceOptional
	if app.PKCERequired {
		pkce = pkceRequired
	}
	return SigninSettings{Profile: app.Profile, TokenEndpointAuthMethod: app.TokenEndpointAuthMethod, JWKS: app.JWKS, JWKSURI: app.JWKSURI,
		PostLogoutRedirectURIs: app.PostLogoutRedirectURIs, PKCE: pkce, ResponseTypes: app.ResponseTypes,
		SectorIdentifierURI: app.SectorIdentifierURI}
}

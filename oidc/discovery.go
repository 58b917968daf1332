package oidc

import (
	"encoding/json"
	"fmt"
	"net/http"

	"worldid/record"
)

// discoveryDoc is the OpenID Provider metadata (OIDC Discovery §3):
// doc/interfaces.md §2.1 plus the members doc/design.md §4 adds. Field order is
// the order of the encoded document.
type discoveryDoc struct {
	Issuer                     string   `json:"issuer"`
	AuthorizationEndpoint      string   `json:"authorization_endpoint"`
	TokenEndpoint              string   `json:"token_endpoint"`
	UserinfoEndpoint           string   `json:"userinfo_endpoint"`
	JWKSURI                    string   `json:"jwks_uri"`
	IntrospectionEndpoint      string   `json:"introspection_endpoint"`
	ScopesSupported            []string `json:"scopes_supported"`
	ResponseTypesSupported     []string `json:"response_types_supported"`
	ResponseModesSupported     []string `json:"response_modes_supported"`
	GrantTypesSupported        []string `json:"grant_types_supported"`
	SubjectTypesSupported      []string `json:"subject_types_supported"`
	IDTokenSigningAlgs         []string `json:"id_token_signing_alg_values_supported"`
	TokenEndpointAuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
	IntrospectionAuthMethods   []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethods       []string `json:"code_challenge_methods_supported"`
	ClaimsSupported            []string `json:"claims_supported"`
	RequestParameterSupported  bool     `json:"request_parameter_supported"`
	RequestURIParameterSupport bool     `json:"request_uri_parameter_supported"`
	ClaimsParameterSupported   bool     `json:"claims_parameter_supported"`
	// OIDC Discovery §3: the algorithms of private_key_jwt assertions.
	TokenEndpointAuthSigningAlgs []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	ACRValuesSupported           []string `json:"acr_values_supported"`
	RevocationEndpoint           string   `json:"revocation_endpoint"`
	RevocationAuthMethods        []string `json:"revocation_endpoint_auth_methods_supported"`
	EndSessionEndpoint           string   `json:"end_session_endpoint"`
	// RFC 9207 §3: every authorization response carries iss.
	AuthorizationResponseIss bool `json:"authorization_response_iss_parameter_supported"`

	// RFC 8628 §4 (device.go).
	DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint"`
}

// discoveryDocument encodes the document once; it never changes while the
// process runs.
func (p *Provider) discoveryDocument() ([]byte, error) {
	authMethods := []string{record.AuthClientSecretBasic, record.AuthClientSecretPost, record.AuthPrivateKeyJWT}
	doc := discoveryDoc{
		Issuer:                   p.issuer,
		AuthorizationEndpoint:    p.issuer + pathAuthorize,
		TokenEndpoint:            p.issuer + pathToken,
		UserinfoEndpoint:         p.issuer + pathUserinfo,
		JWKSURI:                  p.issuer + pathJWKS,
		IntrospectionEndpoint:    p.issuer + pathIntrospect,
		ScopesSupported:          knownScopes[:],
		ResponseTypesSupported:   supportedResponseTypes(),
		ResponseModesSupported:   []string{modeQuery, modeFragment, modeFormPost},
		GrantTypesSupported:      []string{grantAuthorizationCode, "implicit", grantDeviceCode},
		SubjectTypesSupported:    []string{"pairwise"},
		IDTokenSigningAlgs:       []string{algRS256},
		TokenEndpointAuthMethods: authMethods,
		IntrospectionAuthMethods: authMethods,
		CodeChallengeMethods:     []string{pkceS256},
		ClaimsSupported: []string{
			"iss", "sub", "aud", "exp", "iat", "auth_time", "jti", "nonce", "at_hash", "c_hash",
			p.betaClaim, p.v1Claim, "email", "name", "given_name", "family_name", "acr", "amr",
		},
		ACRValuesSupported:           acrValuesSupported(),
		TokenEndpointAuthSigningAlgs: []string{algRS256, algES256},
		RevocationEndpoint:           p.issuer + pathRevoke,
		RevocationAuthMethods:        authMethods,
		EndSessionEndpoint:           p.issuer + pathEndSession,
		AuthorizationResponseIss:     true,

		DeviceAuthorizationEndpoint: p.issuer + pathDeviceAuthorization,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("oidc: encode discovery: %w", err)
	}
	return append(b, '\n'), nil
}

// serveDiscovery serves the pre-encoded document.
func (p *Provider) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	servePublic(w, p.discovery, 3600)
}

// servePublic writes a cacheable public JSON document.
func servePublic(w http.ResponseWriter, body []byte, maxAge int) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", maxAge))
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(body)
}

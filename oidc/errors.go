package oidc

import (
	"net/http"

	"worldid/internal/oauth"
)

// The errors only the OpenID Connect endpoints answer with; the shared
// ones, the error body and its writers are in internal/oauth.

// errClientDisabled: the operator disabled the app (worldid app disable).
func errClientDisabled() *oauth.Error {
	return oauth.NewError(http.StatusBadRequest, "client_disabled", "unauthorized_client", "client_id", "this client is disabled by the operator")
}

// Client authentication (RFC 6749 §5.2: 401 with a challenge for the scheme).
func errUnauthenticated(detail string) *oauth.Error {
	e := oauth.NewError(http.StatusUnauthorized, "unauthenticated", "invalid_client", "", detail)
	e.Challenge = `Basic realm="worldid"`
	return e
}

// Bearer token errors (RFC 6750 §3). A request without any token gets the
// bare challenge and no OAuth error code (§3.1: "SHOULD NOT include an
// error code or other error information").
func errNoBearer() *oauth.Error {
	e := oauth.NewError(http.StatusUnauthorized, "unauthenticated", "", "Authorization", "a bearer access token is required")
	e.Description = ""
	e.Challenge = `Bearer realm="worldid"`
	return e
}

func errInvalidToken() *oauth.Error {
	const detail = "the access token is invalid, expired or revoked"
	e := oauth.NewError(http.StatusUnauthorized, "invalid_token", "invalid_token", "", detail)
	e.Challenge = `Bearer realm="worldid", error="invalid_token", error_description="` + detail + `"`
	return e
}

func errInvalidGrant(detail string) *oauth.Error {
	return oauth.NewError(http.StatusBadRequest, "invalid_grant", "invalid_grant", "code", detail)
}

// errAccessDenied: the app can no longer sign users in.
func errAccessDenied(detail string) *oauth.Error {
	return oauth.NewError(http.StatusForbidden, "access_denied", "access_denied", "proof", detail)
}

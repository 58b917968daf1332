package oidc

import (
	"errors"
	"net/http"
	"strings"

	"worldid/internal/oauth"
	"worldid/record"
)

// serveUserinfo returns the user information of doc/interfaces.md §2.4 for a
// bearer access token, limited to its scope (OIDC Core §5.3).
func (p *Provider) serveUserinfo(w http.ResponseWriter, r *http.Request) {
	token, e := bearerToken(w, r)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	c, err := p.parseAccessToken(token)
	if err != nil {
		p.out.WriteError(w, errInvalidToken())
		return
	}
	revoked, err := p.store.IsGrantRevoked(r.Context(), c.GrantID)
	if err != nil {
		p.out.WriteError(w, p.out.Internal(r.Context(), "userinfo: revocation", err))
		return
	}
	// The tokens of a disabled or deleted app are inactive.
	app, err := p.store.App(r.Context(), c.ClientID)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		p.out.WriteError(w, p.out.Internal(r.Context(), "userinfo: load app", err))
		return
	}
	if revoked || err != nil || app.Disabled {
		p.out.WriteError(w, errInvalidToken())
		return
	}
	p.out.WriteJSON(w, http.StatusOK, p.userClaims(c.Sub, c.Level, c.Scope, app.Profile))
}

// bearerToken takes the access token from the Authorization header
// (RFC 6750 §2.1) or, for a form-encoded POST, the access_token body
// parameter (§2.2); never from the query, and never from both (§2).
func bearerToken(w http.ResponseWriter, r *http.Request) (string, *oauth.Error) {
	var body string
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") != "" {
		v, e := oauth.ReadForm(w, r)
		if e != nil {
			return "", e
		}
		params, e := oauth.StrictParams(v)
		if e != nil {
			return "", e
		}
		body = params["access_token"]
	}
	return parseBearer(r.Header.Get("Authorization"), body)
}

// parseBearer checks the credentials: "Bearer" (any case) and a b64token
// (RFC 6750 §2.1), or the body parameter.
func parseBearer(authorization, body string) (string, *oauth.Error) {
	switch {
	case authorization != "" && body != "":
		return "", oauth.ErrInvalid("access_token", "use one method to send the access token")
	case body != "":
		return body, nil
	case authorization == "":
		return "", errNoBearer()
	}
	scheme, token, _ := strings.Cut(authorization, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errNoBearer()
	}
	if !isB64Token(token) {
		return "", errInvalidToken()
	}
	return token, nil
}

// isB64Token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
func isB64Token(s string) bool {
	t := strings.TrimRight(s, "=")
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

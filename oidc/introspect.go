package oidc

import (
	"net/http"

	"worldid/internal/oauth"
	"worldid/record"
)

// introspection is the RFC 7662 §2.2 response (doc/interfaces.md §2.3 plus the
// optional scope, iat, iss and token_type members).
type introspection struct {
	Active    bool   `json:"active"`
	ClientID  string `json:"client_id,omitempty"`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	Sub       string `json:"sub,omitempty"`
	Scope     string `json:"scope,omitempty"`
	Iss       string `json:"iss,omitempty"`
	TokenType string `json:"token_type,omitempty"`
}

// serveIntrospect answers whether an access token is active for the
// authenticated client. Anything invalid, expired, revoked or issued to
// another client is {"active":false} (RFC 7662 §2.2, doc/design.md §4).
// token_type_hint is accepted and ignored (RFC 7662 §2.1).
func (p *Provider) serveIntrospect(w http.ResponseWriter, r *http.Request) {
	app, token, e := p.tokenForm(w, r)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	c, err := p.parseAccessToken(token)
	if err != nil || c.ClientID != app.ID {
		p.out.WriteJSON(w, http.StatusOK, introspection{})
		return
	}
	if app.Disabled {
		p.out.WriteJSON(w, http.StatusOK, introspection{})
		return
	}
	revoked, err := p.store.IsGrantRevoked(r.Context(), c.GrantID)
	if err != nil {
		p.out.WriteError(w, p.out.Internal(r.Context(), "introspect: revocation", err))
		return
	}
	if revoked {
		p.out.WriteJSON(w, http.StatusOK, introspection{})
		return
	}
	p.out.WriteJSON(w, http.StatusOK, introspection{
		Active: true, ClientID: c.ClientID, Exp: c.Exp, Iat: c.Iat, Sub: c.Sub,
		Scope: c.Scope, Iss: c.Iss, TokenType: "Bearer",
	})
}

// tokenForm reads a request about a token (introspection, revocation):
// the authenticated client and the required token parameter.
func (p *Provider) tokenForm(w http.ResponseWriter, r *http.Request) (record.App, string, *oauth.Error) {
	app, params, e := p.authenticatedForm(w, r)
	if e != nil {
		return app, "", e
	}
	if params["token"] == "" {
		return app, "", oauth.ErrRequired("token")
	}
	return app, params["token"], nil
}

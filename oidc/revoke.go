package oidc

import (
	"net/http"
	"time"
)

// serveRevoke is token revocation (RFC 7009 §2) for access tokens: the
// authenticated client's valid access token has its grant revoked, which
// also deactivates the other tokens of the same sign-in (§2.1 allows
// revoking related tokens); /introspect and /userinfo then refuse them.
// Any other token, another client's, or one already expired or revoked
// is answered 200 too (§2.2), so that the answer reveals nothing.
// token_type_hint is accepted and ignored (§2.1). A disabled app may
// revoke too: its tokens are inactive already.
func (p *Provider) serveRevoke(w http.ResponseWriter, r *http.Request) {
	app, token, e := p.tokenForm(w, r)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	if c, err := p.parseAccessToken(token); err == nil && c.ClientID == app.ID {
		if err := p.store.RevokeGrant(r.Context(), c.GrantID, time.Unix(c.Exp, 0)); err != nil {
			p.out.WriteError(w, p.out.Internal(r.Context(), "revoke: store", err))
			return
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

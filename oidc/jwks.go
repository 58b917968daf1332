package oidc

import "net/http"

// serveJWKS serves the published keys (RFC 7517 §5) from the bytes encoded
// when the key set last changed (keys.go). The cache lifetime is far below
// the pre-publication time, so a relying party sees a key before it signs.
func (p *Provider) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	servePublic(w, p.keySet().jwks, jwksMaxAge)
}

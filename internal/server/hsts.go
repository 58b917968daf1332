package server

import "net/http"

// hstsValue is the Strict-Transport-Security of the public listener when
// this server terminates TLS itself (RFC 6797 §6.1): a year, for this host
// only (the operator's other subdomains are not ours to pin). Behind a
// proxy that terminates TLS the proxy sets it.
const hstsValue = "max-age=31536000"

// withHSTS adds Strict-Transport-Security to every answer of h.
func withHSTS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hstsValue)
		h.ServeHTTP(w, r)
	})
}

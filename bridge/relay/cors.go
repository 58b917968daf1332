package relay

import (
	"net/http"
)

// allowedMethods: wallet-bridge's CorsLayer allow_methods.
const allowedMethods = "GET, POST, HEAD, PUT"

// setCORS: any origin (tower-http allow_origin(Any)).
func setCORS(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Add("Vary", "origin, access-control-request-method, access-control-request-headers")
}

// writePreflight answers OPTIONS: the methods, and any header.
func writePreflight(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Methods", allowedMethods)
	w.Header().Set("Access-Control-Allow-Headers", "*")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

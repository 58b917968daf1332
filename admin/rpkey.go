package admin

import (
	"encoding/hex"
	"net/http"
	"strings"

	"worldid/bridge/rpsig"
	"worldid/record"
)

// RPSigningKeyRequest is the body of PUT /admin/apps/{app_id}/rp-signing-key:
// the app's World ID 4.0 RP signing key, a secp256k1 private key as 64 hex
// digits (0x optional). The key is never answered: AppInfo shows only its
// Ethereum address (rp_signer), which the operator registers for the
// app's rp_id at World.
type RPSigningKeyRequest struct {
	Key string `json:"rp_signing_key"`
}

// parseRPSigningKey reads the body and returns the key in the form the
// app stores: 64 lowercase hex digits.
func parseRPSigningKey(w http.ResponseWriter, r *http.Request) (string, error) {
	var req RPSigningKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return "", err
	}
	if _, err := rpsig.ParsePrivateKey(req.Key); err != nil {
		return "", badRequest("rp_signing_key must be a secp256k1 private key as 64 hex digits")
	}
	return strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(req.Key, "0x"), "0X")), nil
}

// setRPSigningKey stores an app's RP signing key: its sign-in requests
// carry a signed World ID 4.0 proof_request from now on.
func (a *api) setRPSigningKey(w http.ResponseWriter, r *http.Request) {
	key, err := parseRPSigningKey(w, r)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.changeApp(w, r, "rp signing key set", func(app *record.App) error { app.RPSigningKey = key; return nil })
}

// clearRPSigningKey removes it: the app's sign-in is World ID 3.0 again.
func (a *api) clearRPSigningKey(w http.ResponseWriter, r *http.Request) {
	a.changeApp(w, r, "rp signing key removed", func(app *record.App) error { app.RPSigningKey = ""; return nil })
}

// rpSignerOf is the 0x-hex Ethereum address of the app's RP signing key,
// or "" without one.
func rpSignerOf(app record.App) string {
	if app.RPSigningKey == "" {
		return ""
	}
	k, err := rpsig.ParsePrivateKey(app.RPSigningKey)
	if err != nil {
		return ""
	}
	addr := k.Address()
	return "0x" + hex.EncodeToString(addr[:])
}

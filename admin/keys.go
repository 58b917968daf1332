package admin

import (
	"errors"
	"fmt"
	"net/http"

	"worldid/internal/httpapi"
	"worldid/record"
)

// KeyList is the answer to GET /admin/keys.
type KeyList struct {
	Keys []record.KeyInfo `json:"keys"`
}

func (a *api) listKeys(w http.ResponseWriter, r *http.Request) {
	keys, err := a.Keys.KeyList(r.Context())
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, KeyList{Keys: keys})
}

// revokeKey removes a (compromised) signing key now: it leaves the JWKS,
// the tokens it signed stop verifying, and if it was signing, a new key
// signs from now on. A key revoked before is a conflict.
func (a *api) revokeKey(w http.ResponseWriter, r *http.Request) {
	kid := r.PathValue("kid")
	err := a.Keys.RevokeKey(r.Context(), kid)
	switch {
	case errors.Is(err, record.ErrKeyRevoked):
		err = &Error{http.StatusConflict, "conflict", fmt.Sprintf("signing key %q is already revoked", kid)}
	case errors.Is(err, record.ErrNotFound):
		err = &Error{http.StatusNotFound, "not_found", fmt.Sprintf("no signing key %q", kid)}
	}
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("signing key revoked", kid)
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"kid": kid, "status": "revoked"})
}

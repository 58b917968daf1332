package admin

import (
	"net/http"

	"worldid/field"
	"worldid/internal/httpapi"
	"worldid/record"
)

// maxSignupsPerRequest keeps one import request under the body limit; the
// CLI sends larger files in batches.
const maxSignupsPerRequest = 200

// SignupImport is the body of POST /admin/signups.
type SignupImport struct {
	Signups []record.Signup `json:"signups"`
}

// OrbKeyRequest is the body of POST /admin/orbkeys: a trusted Orb public
// key (SubjectPublicKeyInfo PEM, secp256k1).
type OrbKeyRequest struct {
	OrbID        string `json:"orb_id"`
	PublicKeyPEM string `json:"public_key_pem"`
}

// RefreshSwitch is the body of POST /admin/refresh.
type RefreshSwitch struct {
	Enabled bool `json:"enabled"`
}

// maxOrbID bounds an orb_id.
const maxOrbID = 256

func (a *api) importSignups(w http.ResponseWriter, r *http.Request) {
	var req SignupImport
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if len(req.Signups) == 0 || len(req.Signups) > maxSignupsPerRequest {
		writeError(w, r, a.Log, badRequest("signups must hold 1 to %d records", maxSignupsPerRequest))
		return
	}
	for i := range req.Signups {
		s := &req.Signups[i]
		c, err := field.ParseIDCommitment(s.IDCommitment)
		if err != nil {
			writeError(w, r, a.Log, badRequest("signups[%d].id_commitment: %v", i, err))
			return
		}
		s.IDCommitment = field.Format(&c)
		if err := s.Validate(); err != nil {
			writeError(w, r, a.Log, badRequest("signups[%d]: %v", i, err))
			return
		}
	}
	if err := a.Store.PutSignups(r.Context(), req.Signups); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("signups imported", "", "count", len(req.Signups))
	httpapi.WriteJSON(w, http.StatusOK, map[string]int{"imported": len(req.Signups)})
}

func (a *api) addOrbKey(w http.ResponseWriter, r *http.Request) {
	var req OrbKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if req.OrbID == "" || len(req.OrbID) > maxOrbID {
		writeError(w, r, a.Log, badRequest("orb_id must be 1 to %d bytes", maxOrbID))
		return
	}
	if err := a.ParseOrbKey([]byte(req.PublicKeyPEM)); err != nil {
		writeError(w, r, a.Log, badRequest("public_key_pem: %v", err))
		return
	}
	if err := a.Store.AddOrbKey(r.Context(), req.OrbID, req.PublicKeyPEM); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("orb key added", req.OrbID)
	httpapi.WriteJSON(w, http.StatusCreated, map[string]string{"orb_id": req.OrbID})
}

func (a *api) switchRefresh(w http.ResponseWriter, r *http.Request) {
	var req RefreshSwitch
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if err := a.Store.SetRefreshEnabled(r.Context(), req.Enabled); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("credential refresh switched", "", "enabled", req.Enabled)
	httpapi.WriteJSON(w, http.StatusOK, req)
}

package admin

import (
	"net/http"
	"regexp"

	"worldid/internal/httpapi"
)

// ActionLimitRequest is the body of POST /admin/actions: the most
// verifications one nullifier may make for an action (0 = unlimited, the
// v4 default of accepting reuse).
type ActionLimitRequest struct {
	RPID             string `json:"rp_id"`
	Action           string `json:"action"`
	Environment      string `json:"environment"` // default production
	MaxVerifications int    `json:"max_verifications"`
}

var rpIDPattern = regexp.MustCompile(`^rp_[0-9a-f]{16}$`)

// maxAction bounds an action name, as the verify interface does.
const maxAction = 1024

func (a *api) setActionLimit(w http.ResponseWriter, r *http.Request) {
	var req ActionLimitRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if req.Environment == "" {
		req.Environment = "production"
	}
	switch {
	case !rpIDPattern.MatchString(req.RPID):
		writeError(w, r, a.Log, badRequest("rp_id must be rp_ and 16 lowercase hex digits"))
		return
	case req.Action == "" || len(req.Action) > maxAction:
		writeError(w, r, a.Log, badRequest("action must be 1 to %d bytes", maxAction))
		return
	case req.Environment != "production" && req.Environment != "staging":
		writeError(w, r, a.Log, badRequest("environment must be production or staging"))
		return
	case req.MaxVerifications < 0:
		writeError(w, r, a.Log, badRequest("max_verifications must be 0 (unlimited) or more"))
		return
	}
	if _, err := a.Store.AppByRP(r.Context(), req.RPID); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if err := a.Store.SetActionLimit(r.Context(), req.RPID, req.Action, req.Environment, req.MaxVerifications, a.Now()); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("action limit set", req.RPID, "action", req.Action, "environment", req.Environment, "max_verifications", req.MaxVerifications)
	httpapi.WriteJSON(w, http.StatusOK, req)
}

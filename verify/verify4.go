package verify

import (
	"context"
	"net/http"
	"sync"

	"worldid/record"
)

// SessionResponse is the 200 body for session proofs (doc.go "Protocol
// 4.0"): no nullifier is recorded and no action is created.
type SessionResponse struct {
	Success     bool     `json:"success"` // always true
	SessionID   string   `json:"session_id"`
	Environment string   `json:"environment"`
	Results     []Result `json:"results"`
	Message     string   `json:"message"`
}

const messageSession = "Session proof verified successfully"

// verifyV4 checks 4.0 items against the app's rp_id. Uniqueness proofs are
// recorded exactly as 3.0 proofs are; session proofs only verify.
func (h *Handler) verifyV4(ctx context.Context, app record.App, req *request) (any, *Error) {
	rpID, err := record.RPIDNumber(app.RPID)
	if err != nil {
		h.log.Error("verify: app has a malformed rp_id", "app", app.ID, "rp_id", app.RPID)
		return nil, &Error{Status: http.StatusInternalServerError, Code: codeInternal, Detail: "Internal server error."}
	}
	results := make([]Result, len(req.v4.items))
	var wg sync.WaitGroup
	for i, it := range req.v4.items {
		it.claim.RPID, it.claim.Environment = rpID, req.verifierEnv
		wg.Go(func() { results[i] = h.checkV4(ctx, it) })
	}
	wg.Wait()
	if req.v4.sessionID == "" {
		return h.record(ctx, app, req, results)
	}
	for _, r := range results {
		if r.Success {
			return &SessionResponse{Success: true, SessionID: req.v4.sessionID, Environment: req.environment, Results: results, Message: messageSession}, nil
		}
	}
	return nil, failure(results)
}

func (h *Handler) checkV4(ctx context.Context, it itemV4) (res Result) {
	res = Result{Identifier: it.claim.Identifier, Nullifier: canonicalHex(it.claim.Nullifier), SybilScore: it.sybilScore}
	switch {
	case it.refused != nil:
		res.fail(it.refused.Code, it.refused.Detail)
		return res
	case h.checkerV4 == nil:
		res.fail(record.CodeFeatureUnavailable, "World ID 4.0 verification is not configured on this server.")
		return res
	}
	h.classify(&res, "4.0", it.claim.Identifier, it.claim.Environment, func() error { return h.checkerV4.CheckClaimV4(ctx, it.claim) })
	return res
}

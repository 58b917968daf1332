package relay

import (
	"context"
	"net/http"
)

// putResponse serves PUT /response/{id}: the wallet's answer, once.
func (rl *Relay) putResponse(ctx context.Context, r *http.Request) (int, any, error) {
	id, err := parseID(r)
	if err != nil {
		return 0, nil, err
	}
	env, _, err := parseBody(r, rl.maxBody)
	if err != nil {
		return 0, nil, err
	}
	if err := rl.store.PutBridgeResponse(ctx, id, env, rl.now(), rl.ttl); err != nil {
		return 0, nil, storeError(err, http.StatusBadRequest) // wallet-bridge: 400 without a status
	}
	return http.StatusCreated, nil, nil
}

// getResponse serves GET /response/{id}: the status, and the answer once.
func (rl *Relay) getResponse(ctx context.Context, r *http.Request) (int, any, error) {
	id, err := parseID(r)
	if err != nil {
		return 0, nil, err
	}
	poll, err := rl.store.TakeBridgeResponse(ctx, id, rl.now())
	if err != nil {
		return 0, nil, storeError(err, http.StatusNotFound)
	}
	return http.StatusOK, poll, nil
}

package relay

import (
	"context"
	"net/http"
)

// getRequest serves GET /request/{id}: the envelope, once.
func (rl *Relay) getRequest(ctx context.Context, r *http.Request) (int, any, error) {
	id, err := parseID(r)
	if err != nil {
		return 0, nil, err
	}
	env, err := rl.store.TakeBridgeRequest(ctx, id, rl.now(), rl.ttl)
	if err != nil {
		return 0, nil, storeError(err, http.StatusNotFound)
	}
	return http.StatusOK, env, nil
}

// headRequest serves HEAD /request/{id}: 200 while unread, else 404.
func (rl *Relay) headRequest(ctx context.Context, r *http.Request) (int, any, error) {
	id, err := parseID(r)
	if err != nil {
		return 0, nil, err
	}
	ok, err := rl.store.HasBridgeRequest(ctx, id, rl.now())
	if err != nil {
		return 0, nil, storeError(err, http.StatusNotFound)
	}
	if !ok {
		return 0, nil, statusError(http.StatusNotFound, "no unread request")
	}
	return http.StatusOK, nil, nil
}

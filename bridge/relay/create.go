package relay

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"worldid/bridge"
)

// create serves POST /request.
func (rl *Relay) create(ctx context.Context, r *http.Request) (int, any, error) {
	env, requested, err := parseBody(r, rl.maxBody)
	if err != nil {
		return 0, nil, err
	}
	id, err := rl.newID(requested)
	if err != nil {
		return 0, nil, err
	}
	if err := rl.store.CreateBridgeRequest(ctx, id, env, rl.now(), rl.ttl); err != nil {
		return 0, nil, storeError(err, http.StatusNotFound)
	}
	return http.StatusOK, bridge.Created{RequestID: id}, nil
}

// newID is the requester's id under the id rule, or a fresh UUID v4.
func (rl *Relay) newID(requested *string) (string, error) {
	if requested != nil {
		id, err := bridge.NormalizeRequestID(*requested)
		if err != nil {
			return "", statusError(http.StatusBadRequest, "request id")
		}
		return id, nil
	}
	return uuid4(rl.rand)
}

// uuid4 is an RFC 9562 version 4 UUID in lowercase hex.
func uuid4(rand io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("relay: drawing a request id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

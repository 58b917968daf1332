package relay

import (
	"context"
	"time"

	"worldid/bridge"
)

// Store keeps bridge requests by id. Every method is atomic; ids are
// already normalized; an id whose lifetime ended is unknown. Errors:
// record.ErrNotFound, record.ErrExists, record.ErrUnavailable (full or
// down), as documented per method.
type Store interface {
	// CreateBridgeRequest stores req under id, status initialized, live
	// until now+ttl; record.ErrExists if any part of id is live.
	CreateBridgeRequest(ctx context.Context, id string, req bridge.Envelope, now time.Time, ttl time.Duration) error
	// TakeBridgeRequest removes and returns id's unread request, sets its
	// status to retrieved and its lifetime to now+ttl; record.ErrNotFound
	// if there is no unread request.
	TakeBridgeRequest(ctx context.Context, id string, now time.Time, ttl time.Duration) (bridge.Envelope, error)
	// HasBridgeRequest reports whether id has an unread request.
	HasBridgeRequest(ctx context.Context, id string, now time.Time) (bool, error)
	// PutBridgeResponse stores resp as id's answer, status completed, live
	// until now+ttl; record.ErrExists if an answer waits already,
	// record.ErrNotFound if id is not live (or its answer was fetched).
	PutBridgeResponse(ctx context.Context, id string, resp bridge.Envelope, now time.Time, ttl time.Duration) error
	// TakeBridgeResponse returns id's status; when completed it returns
	// the answer and forgets id. record.ErrNotFound if id is not live.
	TakeBridgeResponse(ctx context.Context, id string, now time.Time) (bridge.Poll, error)
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"worldid/bridge"
	"worldid/record"
)

// The built-in bridge relay's Store (bridge/relay.Store) on the UNLOGGED
// bridge_requests table (migration 8). Each method is one statement, or
// one batch, so each is atomic across replicas.

// bridgePurge is how many dead rows a creation deletes: more than one, so
// the table shrinks under any creation rate, and bounded, so no creation
// waits on a large delete.
const bridgePurge = 16

// CreateBridgeRequest stores req under id unless any part of id is live
// (record.ErrExists); a dead row under id is replaced. It also deletes up
// to bridgePurge dead rows.
func (db *DB) CreateBridgeRequest(ctx context.Context, id string, req bridge.Envelope, now time.Time, ttl time.Duration) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var b pgx.Batch
	b.Queue(`DELETE FROM bridge_requests WHERE id IN (SELECT id FROM bridge_requests WHERE expires_ns <= $1 LIMIT $2)`, bound(now), bridgePurge)
	insert := b.Queue(`INSERT INTO bridge_requests AS b (id, status, request_iv, request_payload, expires_ns)
		VALUES ($1, 'initialized', $2, $3, $5)
		ON CONFLICT (id) DO UPDATE SET status = 'initialized', request_iv = $2, request_payload = $3,
			response_iv = NULL, response_payload = NULL, expires_ns = $5
		WHERE b.expires_ns <= $4`, id, req.IV, req.Payload, bound(now), unixNano(now.Add(ttl)))
	var created int64
	insert.Exec(func(tag pgconn.CommandTag) error { created = tag.RowsAffected(); return nil })
	if err := db.fail(ctx, db.pool.SendBatch(ctx, &b).Close()); err != nil {
		return err
	}
	if created == 0 {
		return fmt.Errorf("store: bridge request %s: %w", id, record.ErrExists)
	}
	return nil
}

// TakeBridgeRequest returns id's unread request and marks it retrieved,
// or record.ErrNotFound. Concurrent takers serialize on the row lock; the
// second finds request_iv NULL.
func (db *DB) TakeBridgeRequest(ctx context.Context, id string, now time.Time, ttl time.Duration) (bridge.Envelope, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var env bridge.Envelope
	err := db.pool.QueryRow(ctx, `UPDATE bridge_requests b
		SET status = 'retrieved', request_iv = NULL, request_payload = NULL, expires_ns = $3
		FROM (SELECT id, request_iv, request_payload FROM bridge_requests
			WHERE id = $1 AND request_iv IS NOT NULL AND expires_ns > $2 FOR UPDATE) old
		WHERE b.id = old.id
		RETURNING old.request_iv, old.request_payload`, id, bound(now), unixNano(now.Add(ttl))).Scan(&env.IV, &env.Payload)
	return env, db.failRead(ctx, "bridge request "+id, err)
}

// HasBridgeRequest reports whether id has a live unread request.
func (db *DB) HasBridgeRequest(ctx context.Context, id string, now time.Time) (bool, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bridge_requests
		WHERE id = $1 AND request_iv IS NOT NULL AND expires_ns > $2)`, id, bound(now)).Scan(&ok)
	return ok, db.fail(ctx, err)
}

// PutBridgeResponse stores id's answer: record.ErrExists if one waits,
// record.ErrNotFound if id is not live.
func (db *DB) PutBridgeResponse(ctx context.Context, id string, resp bridge.Envelope, now time.Time, ttl time.Duration) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	tag, err := db.pool.Exec(ctx, `UPDATE bridge_requests
		SET status = 'completed', response_iv = $2, response_payload = $3, expires_ns = $5
		WHERE id = $1 AND expires_ns > $4 AND response_iv IS NULL`,
		id, resp.IV, resp.Payload, bound(now), unixNano(now.Add(ttl)))
	if err != nil {
		return db.fail(ctx, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var live bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bridge_requests WHERE id = $1 AND expires_ns > $2)`, id, bound(now)).Scan(&live); err != nil {
		return db.fail(ctx, err)
	}
	if live {
		return fmt.Errorf("store: bridge response %s: %w", id, record.ErrExists)
	}
	return fmt.Errorf("store: bridge request %s: %w", id, record.ErrNotFound)
}

// TakeBridgeResponse returns id's answer and deletes id, or its status
// while there is no answer; record.ErrNotFound if id is not live.
func (db *DB) TakeBridgeResponse(ctx context.Context, id string, now time.Time) (bridge.Poll, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var env bridge.Envelope
	err := db.pool.QueryRow(ctx, `DELETE FROM bridge_requests
		WHERE id = $1 AND expires_ns > $2 AND response_iv IS NOT NULL
		RETURNING response_iv, response_payload`, id, bound(now)).Scan(&env.IV, &env.Payload)
	if err == nil {
		return bridge.Poll{Status: bridge.StatusCompleted, Response: &env}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return bridge.Poll{}, db.fail(ctx, err)
	}
	var status bridge.Status
	err = db.pool.QueryRow(ctx, `SELECT status FROM bridge_requests WHERE id = $1 AND expires_ns > $2`, id, bound(now)).Scan(&status)
	if err != nil {
		return bridge.Poll{}, db.failRead(ctx, "bridge request "+id, err)
	}
	if status == bridge.StatusCompleted {
		// Answered between the two statements: the next poll fetches it.
		status = bridge.StatusRetrieved
	}
	return bridge.Poll{Status: status}, nil
}

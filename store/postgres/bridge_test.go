package postgres

import (
	"context"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/relay"
	"worldid/bridge/relay/relaytest"
)

var _ relay.Store = (*DB)(nil)

func TestBridgeConformance(t *testing.T) {
	relaytest.Run(t, func(t *testing.T) relay.Store {
		db, _ := openFresh(t)
		return db
	})
}

// TestBridgeAcrossReplicas: a request created through one pool is read,
// answered and fetched through another on the same database.
func TestBridgeAcrossReplicas(t *testing.T) {
	a, reopen := openFresh(t)
	ctx, now := context.Background(), time.Now()
	env := bridge.Envelope{IV: "aXYtaXYtaXYtaXYt", Payload: "cGF5bG9hZA=="}
	if err := a.CreateBridgeRequest(ctx, "replica-test-request", env, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	b := reopen()
	if got, err := b.TakeBridgeRequest(ctx, "replica-test-request", now, time.Minute); err != nil || got != env {
		t.Fatalf("replica B: %+v %v", got, err)
	}
	if err := b.PutBridgeResponse(ctx, "replica-test-request", env, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if p, err := b.TakeBridgeResponse(ctx, "replica-test-request", now); err != nil || p.Status != bridge.StatusCompleted {
		t.Fatalf("%+v %v", p, err)
	}
	var persistence string
	if err := b.pool.QueryRow(ctx, "SELECT relpersistence::text FROM pg_class WHERE oid = 'bridge_requests'::regclass").Scan(&persistence); err != nil || persistence != "u" {
		t.Fatalf("bridge_requests relpersistence %q %v, want u (UNLOGGED)", persistence, err)
	}
}

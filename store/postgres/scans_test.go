package postgres

import (
	"context"
	"testing"
	"time"

	"worldid/record"
	"worldid/store/postgres/pgtest"
)

// TestScanMarksAcrossReplicas: a scan mark made through one replica is
// seen by another, and its table writes no WAL (UNLOGGED).
func TestScanMarksAcrossReplicas(t *testing.T) {
	dsn := pgtest.FreshSchema(t)
	a, b := mustOpen(t, dsn), mustOpen(t, dsn)
	t.Cleanup(func() { a.Close(); b.Close() })
	ctx := context.Background()
	id, exp := "00000000000000000000000000000000000000000000000000000000000000aa", time.Date(2025, 6, 1, 12, 11, 0, 0, time.UTC)
	if err := a.MarkScanned(ctx, id, exp); err != nil {
		t.Fatal(err)
	}
	if p, err := b.SigninProgress(ctx, id); err != nil || p.State != record.SigninScanned || !p.ExpiresAt.Equal(exp) {
		t.Fatalf("the other replica reads %+v, %v", p, err)
	}
	var persistence string
	if err := a.pool.QueryRow(ctx, "SELECT relpersistence::text FROM pg_class WHERE oid = 'signin_scans'::regclass").Scan(&persistence); err != nil {
		t.Fatal(err)
	}
	if persistence != "u" {
		t.Fatalf("signin_scans has relpersistence %q, want u (UNLOGGED)", persistence)
	}
}

package storetest

import (
	"context"
	"testing"
	"time"
)

// testRevokeGrant: a revoked id is revoked on every later read and after
// a reopen, a second revocation never shortens the retention, and
// PruneExpired forgets it once its retention ended.
func testRevokeGrant(t *testing.T, open OIDCOpener) {
	ctx := context.Background()
	b, reopen := open(t)
	if revoked, err := b.IsGrantRevoked(ctx, "session-1"); err != nil || revoked {
		t.Fatalf("unrevoked id: %v %v", revoked, err)
	}
	if err := b.RevokeGrant(ctx, "session-1", oidcT0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := b.RevokeGrant(ctx, "session-1", oidcT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	b = reopen()
	if revoked, err := b.IsGrantRevoked(ctx, "session-1"); err != nil || !revoked {
		t.Fatalf("revoked id after reopen: %v %v", revoked, err)
	}
	if err := b.PruneExpired(ctx, oidcT0.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if revoked, err := b.IsGrantRevoked(ctx, "session-1"); err != nil || !revoked {
		t.Fatalf("the earlier retention won: %v %v", revoked, err)
	}
	if err := b.PruneExpired(ctx, oidcT0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if revoked, err := b.IsGrantRevoked(ctx, "session-1"); err != nil || revoked {
		t.Fatalf("revocation kept after its retention: %v %v", revoked, err)
	}
}

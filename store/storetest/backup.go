package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"worldid/backup"
	"worldid/record"
)

// BackupBackend is a backend with every domain method and Export.
type BackupBackend interface {
	Backend
	VerifyBackend
	OIDCBackend
	RefreshBackend
	RegistryBackend
	Export(ctx context.Context, emit backup.Emit) error
}

// BackupOpener opens a fresh, empty backend for t. restore replaces the
// backend's state with the rows load emits (refusing a non-empty backend
// unless force) and returns the handle to use afterwards.
type BackupOpener func(t *testing.T) (b BackupBackend, restore func(force bool, load func(backup.Emit) error) (BackupBackend, error))

// RunBackup checks Export and restore: a restored copy exports the same
// rows (equal per-table digests) and answers the domain reads as the
// original; a non-empty target is refused; a failed restore writes nothing.
func RunBackup(t *testing.T, open BackupOpener) {
	ctx := context.Background()
	src, _ := open(t)
	populate(t, src)
	rows := exportRows(t, src)
	want := summarize(t, src)
	for _, table := range backup.StoreTables {
		if want.Counts[table] == 0 {
			t.Errorf("populate left table %s empty", table)
		}
	}
	replay := func(emit backup.Emit) error {
		for _, r := range rows {
			if err := emit(r.table, r.row); err != nil {
				return err
			}
		}
		return nil
	}

	t.Run("RoundTrip", func(t *testing.T) {
		_, restore := open(t)
		dst, err := restore(false, replay)
		if err != nil {
			t.Fatal(err)
		}
		if err := want.Diff(summarize(t, dst)); err != nil {
			t.Fatalf("restored copy differs: %v", err)
		}
		checkRestored(t, ctx, src, dst)
		if _, err := restore(false, replay); err == nil {
			t.Error("restore into a non-empty backend succeeded")
		}
		dst, err = restore(true, replay)
		if err != nil {
			t.Fatalf("forced restore: %v", err)
		}
		if err := want.Diff(summarize(t, dst)); err != nil {
			t.Fatalf("after a forced restore: %v", err)
		}
	})
	t.Run("FailedRestoreWritesNothing", func(t *testing.T) {
		_, restore := open(t)
		broken := errors.New("truncated input")
		half := func(emit backup.Emit) error {
			for _, r := range rows[:len(rows)/2] {
				if err := emit(r.table, r.row); err != nil {
					return err
				}
			}
			return broken
		}
		dst, err := restore(false, half)
		if !errors.Is(err, broken) {
			t.Fatalf("restore of a broken input: %v", err)
		}
		if s := summarize(t, dst); len(s.Counts) != 0 {
			t.Fatalf("a failed restore left rows: %v", s.Counts)
		}
		// A leaf out of order is refused too.
		bad := []exported{{backup.TableLeaves, backup.Leaf{Tree: "orb/production", Leaf: record.Leaf{Index: 3, Commitment: "0x" + fmt.Sprintf("%064x", 1)}}}}
		if dst, err = restore(false, func(emit backup.Emit) error { return emit(bad[0].table, bad[0].row) }); err == nil {
			t.Fatal("a tree with a gap was restored")
		}
		if s := summarize(t, dst); len(s.Counts) != 0 {
			t.Fatalf("a refused restore left rows: %v", s.Counts)
		}
	})
}

type exported struct {
	table string
	row   any
}

func exportRows(t *testing.T, b BackupBackend) []exported {
	t.Helper()
	var rows []exported
	if err := b.Export(context.Background(), func(table string, row any) error {
		rows = append(rows, exported{table, row})
		return nil
	}); err != nil {
		t.Fatalf("Export: %v", err)
	}
	return rows
}

func summarize(t *testing.T, b BackupBackend) backup.Summary {
	t.Helper()
	var d backup.Digester
	if err := b.Export(context.Background(), d.Collect()); err != nil {
		t.Fatalf("Export: %v", err)
	}
	return d.Summary()
}

var backupT0 = time.Date(2025, 7, 1, 12, 0, 0, 123456789, time.UTC)

func commitment(n int) string { return fmt.Sprintf("0x%064x", n) }

// populate writes at least one row of every table.
func populate(t *testing.T, b BackupBackend) {
	t.Helper()
	ctx := context.Background()
	staging := testApp(2, 2)
	staging.Staging, staging.Disabled, staging.UpdatedAt = true, true, backupT0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.CreateApp(ctx, testApp(1, 1)))
	must(b.CreateApp(ctx, staging))
	must(b.SetActionLimit(ctx, testApp(1, 1).RPID, "vote\u00e9", "production", 2, backupT0))
	for i := range 3 {
		_, err := b.RecordVerification(ctx, testApp(1, 1).RPID, "vote\u00e9", "production", commitment(i), backupT0.Add(time.Duration(i)*time.Second))
		must(err)
	}
	_, err := b.RecordVerification(ctx, staging.RPID, "", "staging", commitment(9), backupT0)
	must(err)
	must(b.AddSigningKey(ctx, oidcKey(1, backupT0), time.Time{}))
	must(b.AddSigningKey(ctx, oidcKey(2, backupT0.Add(time.Hour)), backupT0))
	must(b.RevokeSigningKey(ctx, backupRevokedKey, nil))
	_, err = b.AdvanceSignin(ctx, oidcProgress(1, record.SigninApproved), "")
	must(err)
	must(b.UseProofOnce(ctx, "proof-1", backupT0.Add(time.Hour)))
	must(b.SaveCode(ctx, oidcCode(1)))
	must(b.SaveCode(ctx, oidcCode(2)))
	must(b.SaveDeviceGrant(ctx, oidcDevice(1)))
	_, err = b.RedeemCode(ctx, oidcCode(2).ID, oidcBinding, oidcT0)
	must(err)
	_, err = b.RedeemCode(ctx, oidcCode(2).ID, oidcBinding, oidcT0) // the replay revokes grant-2
	if !errors.Is(err, record.ErrCodeReused) {
		t.Fatalf("replay: %v", err)
	}
	_, err = b.AppendLeaves(ctx, "orb/production", []string{commitment(1), commitment(2), commitment(3)}, backupT0)
	must(err)
	_, err = b.AppendLeaf(ctx, "device/staging", commitment(4), backupT0)
	must(err)
	must(b.AddExternalRoot(ctx, record.ExternalRoot{Tree: "orb/production", Root: commitment(77), Depth: 30, At: backupT0}))
	must(b.AddExternalRoot(ctx, record.ExternalRoot{Tree: record.V4RootTree("staging"), Root: commitment(78), At: backupT0}))
	for _, a := range backupAnchors {
		must(b.AddTrustAnchor(ctx, a))
	}
	must(b.SetRefreshEnabled(ctx, false))
	must(b.PutSignup(ctx, record.Signup{IDCommitment: commitment(1), SignupID: "s1", VerifiedAt: backupT0}))
	must(b.AddOrbKey(ctx, "orb-b", "PEM-2"))
	must(b.AddOrbKey(ctx, "orb-b", "PEM-1"))
	must(b.AddOrbKey(ctx, "orb-a", "PEM-3"))
	must(b.RecordRefresh(ctx, record.Refresh{IDCommitment: commitment(1), Sub: commitment(5), At: backupT0.Truncate(time.Second), PCPDigest: fmt.Sprintf("%064x", 6), CredentialID: 1 << 63}))
	// A repeat refresh returns the credential a refresh kept.
	must(b.RecordRefresh(ctx, record.Refresh{IDCommitment: commitment(1), Sub: commitment(5), At: backupT0.Truncate(time.Second).Add(time.Second), CredentialID: 7, Credential: `{"id":"7"}`}))
}

var backupRevokedKey = record.RevokedKey{ID: oidcKey(2, backupT0).ID, RevokedAt: backupT0}

var backupAnchors = []record.TrustAnchor{
	{Kind: record.AnchorIssuerKey, ID: "7", X: commitment(10), Y: commitment(11), At: backupT0},
	{Kind: record.AnchorOPRFKey, ID: testApp(1, 1).RPID, X: commitment(12), Y: commitment(13), At: backupT0},
}

// checkRestored compares domain reads of the original and the copy.
func checkRestored(t *testing.T, ctx context.Context, src, dst BackupBackend) {
	t.Helper()
	srcApps, _ := src.Apps(ctx)
	dstApps, err := dst.Apps(ctx)
	if err != nil || !slices.EqualFunc(srcApps, dstApps, equalApps) {
		t.Errorf("apps: %+v, %v; want %+v", dstApps, err, srcApps)
	}
	if a, err := dst.AppByRP(ctx, testApp(2, 2).RPID); err != nil || !a.Staging || !a.Disabled {
		t.Errorf("AppByRP of the restored staging app: %+v, %v", a, err)
	}
	// A nullifier the original recorded is a reuse, with its first time;
	// the limit holds.
	v, err := dst.RecordVerification(ctx, testApp(1, 1).RPID, "vote\u00e9", "production", commitment(1), backupT0.Add(time.Hour))
	if err != nil || !v.Reused || !v.CreatedAt.Equal(backupT0.Add(time.Second)) || v.Count != 2 {
		t.Errorf("reuse after restore: %+v, %v", v, err)
	}
	if _, err := dst.RecordVerification(ctx, testApp(1, 1).RPID, "vote\u00e9", "production", commitment(1), backupT0); !errors.Is(err, record.ErrLimitReached) {
		t.Errorf("limit after restore: %v", err)
	}
	srcLeaves, _ := src.Leaves(ctx, "orb/production", 0)
	dstLeaves, err := dst.Leaves(ctx, "orb/production", 0)
	if err != nil || len(dstLeaves) != 3 || !slices.EqualFunc(srcLeaves, dstLeaves, func(a, b record.Leaf) bool {
		return a.Index == b.Index && a.Commitment == b.Commitment && a.At.Equal(b.At)
	}) {
		t.Errorf("leaves: %+v, %v", dstLeaves, err)
	}
	if i, err := dst.AppendLeaf(ctx, "orb/production", commitment(8), backupT0); err != nil || i != 3 {
		t.Errorf("next leaf after restore: index %d, %v", i, err)
	}
	if _, err := dst.AppendLeaf(ctx, "orb/production", commitment(2), backupT0); !errors.Is(err, record.ErrExists) {
		t.Errorf("a restored commitment appended again: %v", err)
	}
	if keys, err := dst.OrbKeys(ctx, "orb-b"); err != nil || !slices.Equal(keys, []string{"PEM-2", "PEM-1"}) {
		t.Errorf("orb keys: %v, %v", keys, err)
	}
	if roots, err := dst.ExternalRoots(ctx); err != nil || !slices.ContainsFunc(roots, func(r record.ExternalRoot) bool {
		return r.Tree == record.V4RootTree("staging") && r.Root == commitment(78)
	}) {
		t.Errorf("external roots after restore: %+v, %v", roots, err)
	}
	if anchors, err := dst.TrustAnchors(ctx); err != nil || !slices.EqualFunc(anchors, backupAnchors, func(a, b record.TrustAnchor) bool {
		return a.Kind == b.Kind && a.ID == b.ID && a.X == b.X && a.Y == b.Y && a.At.Equal(b.At)
	}) {
		t.Errorf("trust anchors after restore: %+v, %v; want %+v", anchors, err, backupAnchors)
	}
	if on, err := dst.RefreshEnabled(ctx); err != nil || on {
		t.Errorf("refresh enabled after restore: %v, %v", on, err)
	}
	if sub, err := dst.PinnedSub(ctx, commitment(1)); err != nil || sub != commitment(5) {
		t.Errorf("pinned sub: %q, %v", sub, err)
	}
	if rs, err := dst.Refreshes(ctx, commitment(1)); err != nil || len(rs) != 2 || rs[0].Credential != "" || rs[1].Credential != `{"id":"7"}` {
		t.Errorf("refreshes after restore: %+v, %v", rs, err)
	}
	if keys, err := dst.RevokedKeys(ctx); err != nil || !slices.EqualFunc(keys, []record.RevokedKey{backupRevokedKey}, oidcEqualRevoked) {
		t.Errorf("revoked signing keys after restore: %+v, %v", keys, err)
	}
	if revoked, err := dst.IsGrantRevoked(ctx, "grant-2"); err != nil || !revoked {
		t.Errorf("revoked grant: %v, %v", revoked, err)
	}
	if err := dst.UseProofOnce(ctx, "proof-1", backupT0.Add(time.Hour)); !errors.Is(err, record.ErrExists) {
		t.Errorf("a spent proof is fresh after restore: %v", err)
	}
	if _, err := dst.RedeemCode(ctx, oidcCode(1).ID, oidcBinding, oidcT0); err != nil {
		t.Errorf("an unredeemed code after restore: %v", err)
	}
}

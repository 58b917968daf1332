package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/record"
)

// OIDCBackend is the method set of package oidc's Store: the sign-in
// provider's apps, signing keys, pending sign-ins, spent proofs and codes.
type OIDCBackend interface {
	App(ctx context.Context, id string) (record.App, error)
	SigningKeys(ctx context.Context) ([]record.SigningKey, error)
	AddSigningKey(ctx context.Context, k record.SigningKey, pendingAfter time.Time) error
	DeleteSigningKey(ctx context.Context, id string) error
	RevokedKeys(ctx context.Context) ([]record.RevokedKey, error)
	RevokeSigningKey(ctx context.Context, r record.RevokedKey, replacement *record.SigningKey) error
	SigninProgress(ctx context.Context, id string) (record.SigninProgress, error)
	MarkScanned(ctx context.Context, id string, expiresAt time.Time) error
	AdvanceSignin(ctx context.Context, p record.SigninProgress, from ...string) (record.SigninProgress, error)
	UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error
	SaveCode(ctx context.Context, c record.AuthCode) error
	RedeemCode(ctx context.Context, id string, b record.CodeBinding, now time.Time) (record.AuthCode, error)
	IsGrantRevoked(ctx context.Context, grantID string) (bool, error)
	RevokeGrant(ctx context.Context, grantID string, retainUntil time.Time) error
	SaveDeviceGrant(ctx context.Context, g record.DeviceGrant) error
	DeviceGrantByUserCode(ctx context.Context, userCode string) (record.DeviceGrant, error)
	UpdateDeviceGrant(ctx context.Context, id string, update func(*record.DeviceGrant) bool) (record.DeviceGrant, error)
	PruneExpired(ctx context.Context, now time.Time) error
}

// OIDCOpener opens a fresh, empty backend for t, like Opener.
type OIDCOpener func(t *testing.T) (b OIDCBackend, reopen func() OIDCBackend)

// RunOIDC runs the sign-in conformance suite (App is covered by Run).
func RunOIDC(t *testing.T, open OIDCOpener) {
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, open OIDCOpener)
	}{
		{"SigningKeys", testSigningKeys},
		{"ConcurrentFirstKey", testConcurrentFirstKey},
		{"RevokeSigningKey", testRevokeSigningKey},
		{"ConcurrentRevoke", testConcurrentRevoke},
		{"SigninProgress", testSigninProgress},
		{"ConcurrentAdvance", testConcurrentAdvance},
		{"ScanMarks", testScanMarks},
		{"ProofsOnce", testProofsOnce},
		{"Codes", testCodes},
		{"CodeBinding", testCodeBinding},
		{"ConcurrentRedeem", testConcurrentRedeem},
		{"PruneExpired", testPruneExpired},
		{"RevokeGrant", testRevokeGrant},
		{"OIDCReopen", testOIDCReopen},
		{"DeviceGrants", testDeviceGrants},
		{"ConcurrentDeviceUpdates", testConcurrentDeviceUpdates},
		{"PruneDeviceGrants", testPruneDeviceGrants},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

var oidcT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func oidcKey(n int, activate time.Time) record.SigningKey {
	return record.SigningKey{ID: fmt.Sprintf("kid-%d", n), PrivateKey: []byte{0x30, byte(n)}, CreatedAt: oidcT0, ActivateAt: activate}
}

func oidcEqualKeys(a, b record.SigningKey) bool {
	return a.ID == b.ID && slices.Equal(a.PrivateKey, b.PrivateKey) && a.CreatedAt.Equal(b.CreatedAt) && a.ActivateAt.Equal(b.ActivateAt)
}

func oidcProgress(n int, state string) record.SigninProgress {
	p := record.SigninProgress{ID: fmt.Sprintf("%064x", n), State: state, ExpiresAt: oidcT0.Add(10 * time.Minute)}
	if state == record.SigninApproved || state == record.SigninFinished {
		p.Subject, p.VerificationLevel, p.AuthTime = "0x01", "orb", oidcT0.Add(time.Second)
	}
	return p
}

func oidcEqualProgress(a, b record.SigninProgress) bool {
	return a.ID == b.ID && a.State == b.State && a.Subject == b.Subject && a.VerificationLevel == b.VerificationLevel &&
		a.AuthTime.Equal(b.AuthTime) && a.ExpiresAt.Equal(b.ExpiresAt)
}

func oidcCode(n int) record.AuthCode {
	return record.AuthCode{
		ID: fmt.Sprintf("%064x", n), GrantID: fmt.Sprintf("grant-%d", n), ClientID: "app_1",
		RedirectURI: "https://rp.example/cb", Scope: "openid", Nonce: "n", CodeChallenge: "c",
		Subject: "0x01", VerificationLevel: "orb", AuthTime: oidcT0,
		ExpiresAt: oidcT0.Add(10 * time.Minute), RetainUntil: oidcT0.Add(70 * time.Minute),
	}
}

// oidcBinding is what oidcCode's codes are bound to.
var oidcBinding = record.CodeBinding{ClientID: "app_1", RedirectURI: "https://rp.example/cb", CodeChallenge: "c"}

func testSigningKeys(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	if keys, err := b.SigningKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("SigningKeys on empty backend: %v, %v", keys, err)
	}
	first := oidcKey(1, oidcT0)
	if err := b.AddSigningKey(ctx, first, time.Time{}); err != nil {
		t.Fatalf("first key: %v", err)
	}
	if err := b.AddSigningKey(ctx, oidcKey(2, oidcT0), time.Time{}); !errors.Is(err, record.ErrExists) {
		t.Fatalf("second first key: %v, want ErrExists", err)
	}
	next := oidcKey(3, oidcT0.Add(24*time.Hour))
	if err := b.AddSigningKey(ctx, next, oidcT0); err != nil {
		t.Fatalf("successor: %v", err)
	}
	if err := b.AddSigningKey(ctx, oidcKey(4, oidcT0.Add(48*time.Hour)), oidcT0.Add(time.Hour)); !errors.Is(err, record.ErrExists) {
		t.Fatalf("second successor while one is pending: %v, want ErrExists", err)
	}
	keys, err := b.SigningKeys(ctx)
	if err != nil || len(keys) != 2 {
		t.Fatalf("SigningKeys: %v, %v", keys, err)
	}
	slices.SortFunc(keys, func(a, b record.SigningKey) int { return a.ActivateAt.Compare(b.ActivateAt) })
	if !oidcEqualKeys(keys[0], first) || !oidcEqualKeys(keys[1], next) {
		t.Fatalf("SigningKeys = %+v", keys)
	}
	if err := b.DeleteSigningKey(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteSigningKey(ctx, first.ID); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if keys, _ := b.SigningKeys(ctx); len(keys) != 1 || keys[0].ID != next.ID {
		t.Fatalf("after delete: %+v", keys)
	}
}

// oidcRace runs fn concurrently and returns how many calls succeeded; every
// failure must satisfy isExpected.
func oidcRace(t *testing.T, fn func(i int) error, isExpected func(error) bool) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, concurrency)
	for i := range concurrency {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !isExpected(err):
			t.Errorf("unexpected error: %v", err)
		}
	}
	return ok
}

func oidcIsErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func testConcurrentFirstKey(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	n := oidcRace(t, func(i int) error { return b.AddSigningKey(ctx, oidcKey(i, oidcT0), time.Time{}) }, oidcIsErr(record.ErrExists))
	keys, _ := b.SigningKeys(ctx)
	if n != 1 || len(keys) != 1 {
		t.Fatalf("%d first keys stored, %d succeeded", len(keys), n)
	}
}

func testSigninProgress(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	id := oidcProgress(1, "").ID
	if _, err := b.SigninProgress(ctx, id); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("nothing recorded: %v, want ErrNotFound", err)
	}
	scanned := oidcProgress(1, record.SigninScanned)
	if prev, err := b.AdvanceSignin(ctx, scanned, "", record.SigninScanned); err != nil || prev.State != "" {
		t.Fatalf("scan: %+v, %v", prev, err)
	}
	if prev, err := b.AdvanceSignin(ctx, scanned, "", record.SigninScanned); err != nil || prev.State != record.SigninScanned {
		t.Fatalf("second scan: %+v, %v", prev, err)
	}
	approved := oidcProgress(1, record.SigninApproved)
	if prev, err := b.AdvanceSignin(ctx, approved, "", record.SigninScanned); err != nil || !oidcEqualProgress(prev, scanned) {
		t.Fatalf("approve: %+v, %v", prev, err)
	}
	// A replayed approval and a late cancel find it approved and change nothing.
	for _, p := range []record.SigninProgress{approved, oidcProgress(1, record.SigninCancelled)} {
		cur, err := b.AdvanceSignin(ctx, p, "", record.SigninScanned)
		if !errors.Is(err, record.ErrExists) || !oidcEqualProgress(cur, approved) {
			t.Fatalf("advance %s from approved: %+v, %v; want the approval and ErrExists", p.State, cur, err)
		}
	}
	if got, err := b.SigninProgress(ctx, id); err != nil || !oidcEqualProgress(got, approved) {
		t.Fatalf("read: %+v, %v", got, err)
	}
	finished := oidcProgress(1, record.SigninFinished)
	if prev, err := b.AdvanceSignin(ctx, finished, record.SigninApproved); err != nil || !oidcEqualProgress(prev, approved) {
		t.Fatalf("finish: %+v, %v", prev, err)
	}
	if _, err := b.AdvanceSignin(ctx, finished, record.SigninApproved); !errors.Is(err, record.ErrExists) {
		t.Fatalf("second finish: %v, want ErrExists", err)
	}
	// A request never acted on cannot be finished, and a failed advance
	// leaves nothing behind.
	other := oidcProgress(2, record.SigninFinished)
	if _, err := b.AdvanceSignin(ctx, other, record.SigninApproved); !errors.Is(err, record.ErrExists) {
		t.Fatalf("finish unknown: %v, want ErrExists", err)
	}
	if _, err := b.SigninProgress(ctx, other.ID); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a refused advance stored something: %v", err)
	}
}

// testScanMarks: a scan mark reads as a scanned progress while nothing is
// recorded; transitions ignore it (the request has no recorded state), a
// recorded state wins over it, and PruneExpired forgets it. Backends keep
// it without a durable write (checked per backend: the JSON store's
// journal, PostgreSQL's replicas).
func testScanMarks(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	scanned, other := oidcProgress(1, record.SigninScanned), oidcProgress(2, record.SigninScanned)
	for range 2 {
		if err := errors.Join(b.MarkScanned(ctx, scanned.ID, scanned.ExpiresAt), b.MarkScanned(ctx, other.ID, other.ExpiresAt)); err != nil {
			t.Fatalf("MarkScanned: %v", err)
		}
	}
	if got, err := b.SigninProgress(ctx, scanned.ID); err != nil || !oidcEqualProgress(got, scanned) {
		t.Fatalf("a marked request reads %+v, %v; want %+v", got, err, scanned)
	}
	if _, err := b.AdvanceSignin(ctx, oidcProgress(1, record.SigninFinished), record.SigninScanned, record.SigninApproved); !errors.Is(err, record.ErrExists) {
		t.Fatalf("a transition from a mark: %v, want ErrExists", err)
	}
	approved := oidcProgress(1, record.SigninApproved)
	if prev, err := b.AdvanceSignin(ctx, approved, ""); err != nil || prev.State != "" {
		t.Fatalf("approve a marked request: %+v, %v", prev, err)
	}
	if got, err := b.SigninProgress(ctx, scanned.ID); err != nil || !oidcEqualProgress(got, approved) {
		t.Fatalf("after approval: %+v, %v", got, err)
	}
	if err := b.PruneExpired(ctx, other.ExpiresAt.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.SigninProgress(ctx, other.ID); err != nil || got.State != record.SigninScanned {
		t.Fatalf("a live mark was pruned: %+v, %v", got, err)
	}
	if err := b.PruneExpired(ctx, other.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SigninProgress(ctx, other.ID); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("an expired mark was kept: %v", err)
	}
}

func testConcurrentAdvance(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	n := oidcRace(t, func(i int) error {
		p := oidcProgress(1, record.SigninApproved)
		if i%2 == 1 {
			p = oidcProgress(1, record.SigninCancelled)
		}
		_, err := b.AdvanceSignin(ctx, p, "", record.SigninScanned)
		return err
	}, oidcIsErr(record.ErrExists))
	if n != 1 {
		t.Fatalf("%d transitions out of pending succeeded", n)
	}
	n = oidcRace(t, func(int) error {
		_, err := b.AdvanceSignin(ctx, oidcProgress(1, record.SigninFinished), record.SigninApproved, record.SigninCancelled)
		return err
	}, oidcIsErr(record.ErrExists))
	if n != 1 {
		t.Fatalf("%d finishes succeeded", n)
	}
}

func testProofsOnce(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	if err := b.UseProofOnce(ctx, "p1", oidcT0); err != nil {
		t.Fatal(err)
	}
	if err := b.UseProofOnce(ctx, "p1", oidcT0); !errors.Is(err, record.ErrExists) {
		t.Fatalf("reuse: %v, want ErrExists", err)
	}
	if n := oidcRace(t, func(int) error { return b.UseProofOnce(ctx, "p2", oidcT0) }, oidcIsErr(record.ErrExists)); n != 1 {
		t.Fatalf("%d concurrent uses succeeded", n)
	}
}

func testCodes(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	c := oidcCode(1)
	if err := b.SaveCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := b.SaveCode(ctx, c); !errors.Is(err, record.ErrExists) {
		t.Fatalf("duplicate: %v, want ErrExists", err)
	}
	if _, err := b.RedeemCode(ctx, oidcCode(9).ID, oidcBinding, oidcT0); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("unknown code: %v, want ErrNotFound", err)
	}
	got, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0)
	if err != nil || !got.AuthTime.Equal(c.AuthTime) || !got.ExpiresAt.Equal(c.ExpiresAt) || !got.RetainUntil.Equal(c.RetainUntil) {
		t.Fatalf("redeem: %+v, %v", got, err)
	}
	got.AuthTime, got.ExpiresAt, got.RetainUntil = c.AuthTime, c.ExpiresAt, c.RetainUntil
	if got != c {
		t.Fatalf("redeem = %+v, want %+v", got, c)
	}
	if revoked, err := b.IsGrantRevoked(ctx, c.GrantID); err != nil || revoked {
		t.Fatalf("revoked after one redemption: %v, %v", revoked, err)
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); !errors.Is(err, record.ErrCodeReused) {
		t.Fatalf("replay: %v, want ErrCodeReused", err)
	}
	if revoked, err := b.IsGrantRevoked(ctx, c.GrantID); err != nil || !revoked {
		t.Fatalf("not revoked after replay: %v, %v", revoked, err)
	}
	expired := oidcCode(2)
	if err := b.SaveCode(ctx, expired); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RedeemCode(ctx, expired.ID, oidcBinding, expired.ExpiresAt); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("redeem at expiry: %v, want ErrNotFound", err)
	}
	if revoked, _ := b.IsGrantRevoked(ctx, expired.GrantID); revoked {
		t.Fatal("an expired code's grant is revoked")
	}
	// A replay after expiry still revokes.
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, c.ExpiresAt.Add(time.Minute)); !errors.Is(err, record.ErrCodeReused) {
		t.Fatalf("replay after expiry: %v, want ErrCodeReused", err)
	}
}

// testCodeBinding: a redemption that presents another client, redirect
// URI or challenge spends nothing and revokes nothing, and gets the code
// back so that the caller can say which binding failed; a replay revokes
// the grant only when it comes from the code's own client.
func testCodeBinding(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	c := oidcCode(1)
	if err := b.SaveCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	other := func(change func(*record.CodeBinding)) record.CodeBinding {
		o := oidcBinding
		change(&o)
		return o
	}
	for name, wrong := range map[string]record.CodeBinding{
		"client":         other(func(o *record.CodeBinding) { o.ClientID = "app_2" }),
		"redirect URI":   other(func(o *record.CodeBinding) { o.RedirectURI += "/" }),
		"challenge":      other(func(o *record.CodeBinding) { o.CodeChallenge = "d" }),
		"no challenge":   other(func(o *record.CodeBinding) { o.CodeChallenge = "" }),
		"nothing at all": {},
	} {
		got, err := b.RedeemCode(ctx, c.ID, wrong, oidcT0)
		if !errors.Is(err, record.ErrCodeBinding) || got.GrantID != c.GrantID || got.ClientID != c.ClientID ||
			got.RedirectURI != c.RedirectURI || got.CodeChallenge != c.CodeChallenge {
			t.Fatalf("%s: %+v, %v; want the code with ErrCodeBinding", name, got, err)
		}
	}
	if _, err := b.RedeemCode(ctx, c.ID, other(func(o *record.CodeBinding) { o.RedirectURI += "/" }), c.ExpiresAt); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("wrong binding at expiry: %v, want ErrNotFound", err)
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); err != nil {
		t.Fatalf("redeem after refused redemptions: %v", err)
	}
	got, err := b.RedeemCode(ctx, c.ID, other(func(o *record.CodeBinding) { o.ClientID = "app_2" }), oidcT0)
	if !errors.Is(err, record.ErrCodeReused) || got.ClientID != c.ClientID {
		t.Fatalf("another client's replay: %+v, %v; want the code with ErrCodeReused", got, err)
	}
	if revoked, err := b.IsGrantRevoked(ctx, c.GrantID); err != nil || revoked {
		t.Fatalf("another client's replay revoked the grant: %v, %v", revoked, err)
	}
	got, err = b.RedeemCode(ctx, c.ID, other(func(o *record.CodeBinding) { o.RedirectURI += "/" }), oidcT0)
	if !errors.Is(err, record.ErrCodeReused) || got.GrantID != c.GrantID {
		t.Fatalf("own client's replay: %+v, %v; want the code with ErrCodeReused", got, err)
	}
	if revoked, err := b.IsGrantRevoked(ctx, c.GrantID); err != nil || !revoked {
		t.Fatalf("own client's replay (other redirect URI) did not revoke: %v, %v", revoked, err)
	}
}

func testConcurrentRedeem(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	c := oidcCode(1)
	if err := b.SaveCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	n := oidcRace(t, func(int) error {
		_, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0)
		return err
	}, oidcIsErr(record.ErrCodeReused))
	if n != 1 {
		t.Fatalf("%d redemptions succeeded", n)
	}
	if revoked, _ := b.IsGrantRevoked(ctx, c.GrantID); !revoked {
		t.Fatal("concurrent replays did not revoke the grant")
	}
}

func testPruneExpired(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	r, c, live := oidcProgress(1, record.SigninScanned), oidcCode(1), oidcCode(2)
	live.RetainUntil = oidcT0.Add(24 * time.Hour)
	_, err := b.AdvanceSignin(ctx, r, "")
	for _, err := range []error{
		err, b.UseProofOnce(ctx, "p", oidcT0.Add(10*time.Minute)),
		b.SaveCode(ctx, c), b.SaveCode(ctx, live),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); !errors.Is(err, record.ErrCodeReused) {
		t.Fatal(err)
	}
	// Before the expiries nothing goes.
	if err := b.PruneExpired(ctx, oidcT0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := b.UseProofOnce(ctx, "p", oidcT0); !errors.Is(err, record.ErrExists) {
		t.Fatalf("proof pruned early: %v", err)
	}
	if err := b.PruneExpired(ctx, c.RetainUntil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SigninProgress(ctx, r.ID); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("expired sign-in progress kept: %v", err)
	}
	if err := b.UseProofOnce(ctx, "p", oidcT0); err != nil {
		t.Fatalf("expired proof kept: %v", err)
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("retained code kept: %v", err)
	}
	if revoked, _ := b.IsGrantRevoked(ctx, c.GrantID); revoked {
		t.Fatal("revocation kept past retention")
	}
	if _, err := b.RedeemCode(ctx, live.ID, oidcBinding, oidcT0); err != nil {
		t.Fatalf("live code pruned: %v", err)
	}
}

func testOIDCReopen(t *testing.T, open OIDCOpener) {
	b, reopen := open(t)
	ctx := context.Background()
	k, r, c := oidcKey(1, oidcT0), oidcProgress(1, record.SigninApproved), oidcCode(1)
	_, err := b.AdvanceSignin(ctx, r, "")
	for _, err := range []error{
		b.AddSigningKey(ctx, k, time.Time{}), err,
		b.UseProofOnce(ctx, "p", oidcT0.Add(time.Hour)), b.SaveCode(ctx, c),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); err != nil {
		t.Fatal(err)
	}
	b = reopen()
	if keys, err := b.SigningKeys(ctx); err != nil || len(keys) != 1 || !oidcEqualKeys(keys[0], k) {
		t.Fatalf("keys after reopen: %+v, %v", keys, err)
	}
	if err := b.UseProofOnce(ctx, "p", oidcT0); !errors.Is(err, record.ErrExists) {
		t.Fatalf("spent proof forgotten: %v", err)
	}
	if _, err := b.RedeemCode(ctx, c.ID, oidcBinding, oidcT0); !errors.Is(err, record.ErrCodeReused) {
		t.Fatalf("redemption forgotten: %v", err)
	}
	b = reopen()
	if revoked, err := b.IsGrantRevoked(ctx, c.GrantID); err != nil || !revoked {
		t.Fatalf("revocation forgotten: %v, %v", revoked, err)
	}
	if got, err := b.SigninProgress(ctx, r.ID); err != nil || !oidcEqualProgress(got, r) {
		t.Fatalf("sign-in progress after reopen: %+v, %v", got, err)
	}
}

func testRevokeSigningKey(t *testing.T, open OIDCOpener) {
	b, reopen := open(t)
	ctx := context.Background()
	for n := 1; n <= 2; n++ {
		if err := b.AddSigningKey(ctx, oidcKey(n, oidcT0.Add(time.Duration(n)*time.Hour)), oidcT0.Add(time.Duration(n)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	revoked := func(id string, after time.Duration) record.RevokedKey {
		return record.RevokedKey{ID: id, RevokedAt: oidcT0.Add(after)}
	}
	replacement := oidcKey(3, oidcT0.Add(5*time.Hour))
	if err := b.RevokeSigningKey(ctx, revoked("kid-9", 0), &replacement); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("RevokeSigningKey(unknown): %v, want ErrNotFound", err)
	}
	// A replacement whose ID is taken fails the whole revocation.
	taken := oidcKey(1, oidcT0)
	if err := b.RevokeSigningKey(ctx, revoked("kid-2", 0), &taken); !errors.Is(err, record.ErrExists) {
		t.Fatalf("RevokeSigningKey with a taken replacement ID: %v, want ErrExists", err)
	}
	if keys, err := b.RevokedKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("RevokedKeys after failed revocations: %+v, %v", keys, err)
	}
	if err := b.RevokeSigningKey(ctx, revoked("kid-2", 5*time.Hour), &replacement); err != nil {
		t.Fatal(err)
	}
	if err := b.RevokeSigningKey(ctx, revoked("kid-1", 6*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	// A second revocation is told apart from an unknown key, changes
	// nothing and keeps the first time.
	other := oidcKey(4, oidcT0)
	if err := b.RevokeSigningKey(ctx, revoked("kid-2", 7*time.Hour), &other); !errors.Is(err, record.ErrKeyRevoked) {
		t.Fatalf("RevokeSigningKey(revoked): %v, want ErrKeyRevoked", err)
	}
	b = reopen()
	keys, err := b.SigningKeys(ctx)
	if err != nil || len(keys) != 1 || !oidcEqualKeys(keys[0], replacement) {
		t.Fatalf("after revoking kid-2 (replaced) and kid-1: %+v, %v", keys, err)
	}
	want := []record.RevokedKey{revoked("kid-1", 6*time.Hour), revoked("kid-2", 5*time.Hour)}
	got, err := b.RevokedKeys(ctx)
	slices.SortFunc(got, func(a, b record.RevokedKey) int { return strings.Compare(a.ID, b.ID) })
	if err != nil || !slices.EqualFunc(got, want, oidcEqualRevoked) {
		t.Fatalf("RevokedKeys = %+v, %v; want %+v", got, err, want)
	}
}

func oidcEqualRevoked(a, b record.RevokedKey) bool {
	return a.ID == b.ID && a.RevokedAt.Equal(b.RevokedAt)
}

// testConcurrentRevoke: of concurrent revocations of one key, exactly one
// succeeds; the others are told it is already revoked.
func testConcurrentRevoke(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	if err := b.AddSigningKey(ctx, oidcKey(1, oidcT0), time.Time{}); err != nil {
		t.Fatal(err)
	}
	n := oidcRace(t, func(i int) error {
		return b.RevokeSigningKey(ctx, record.RevokedKey{ID: "kid-1", RevokedAt: oidcT0.Add(time.Duration(i) * time.Second)}, nil)
	}, oidcIsErr(record.ErrKeyRevoked))
	if keys, _ := b.RevokedKeys(ctx); n != 1 || len(keys) != 1 {
		t.Fatalf("%d revocations succeeded, %d recorded", n, len(keys))
	}
}

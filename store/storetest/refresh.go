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

// RefreshBackend is the method set of package refresh's Store plus the
// operator's side (signup import, Orb keys, the switch) and the refresh
// log. UseProofOnce is covered by RunOIDC.
type RefreshBackend interface {
	RefreshEnabled(ctx context.Context) (bool, error)
	SetRefreshEnabled(ctx context.Context, on bool) error
	PutSignup(ctx context.Context, s record.Signup) error
	PutSignups(ctx context.Context, ss []record.Signup) error
	Signup(ctx context.Context, idComm string) (record.Signup, error)
	AddOrbKey(ctx context.Context, orbID, pem string) error
	OrbKeys(ctx context.Context, orbID string) ([]string, error)
	PinnedSub(ctx context.Context, idComm string) (string, error)
	RecordRefresh(ctx context.Context, r record.Refresh) error
	Refreshes(ctx context.Context, idComm string) ([]record.Refresh, error)
}

// RefreshOpener opens a fresh, empty backend for t, like Opener.
type RefreshOpener func(t *testing.T) (b RefreshBackend, reopen func() RefreshBackend)

// RunRefresh runs the credential-refresh conformance suite.
func RunRefresh(t *testing.T, open RefreshOpener) {
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, open RefreshOpener)
	}{
		{"Enabled", testRefreshEnabled},
		{"Signups", testSignups},
		{"InvalidSignupsWriteNothing", testInvalidSignups},
		{"OrbKeys", testOrbKeys},
		{"PinAndMismatch", testPinAndMismatch},
		{"PCPReuse", testPCPReuse},
		{"InvalidRefresh", testInvalidRefresh},
		{"CanceledContextRefresh", testCanceledContextRefresh},
		{"ConcurrentPins", testConcurrentPins},
		{"ConcurrentPCP", testConcurrentPCP},
		{"RefreshReopen", testRefreshReopen},
		{"SpentProofAndCredential", testSpentProofAndCredential},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// rT0 has a non-UTC zone: backends must keep the instant.
var rT0 = time.Date(2025, 6, 1, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600))

func rFE(n int) string { return fmt.Sprintf("0x%064x", n) }

func rDigest(n int) string { return fmt.Sprintf("%064x", n) }

func rSignup(n int) record.Signup {
	return record.Signup{IDCommitment: rFE(n), SignupID: fmt.Sprintf("signup-%d", n), VerifiedAt: rT0.Add(time.Duration(n) * time.Hour)}
}

func refreshOf(idComm, sub int, pcp string, at time.Time, id uint64) record.Refresh {
	return record.Refresh{IDCommitment: rFE(idComm), Sub: rFE(sub), PCPDigest: pcp, At: at, CredentialID: id}
}

var rCtx = context.Background()

func testRefreshEnabled(t *testing.T, open RefreshOpener) {
	b, reopen := open(t)
	checkEnabled(t, b, true)
	if err := b.SetRefreshEnabled(rCtx, false); err != nil {
		t.Fatal(err)
	}
	checkEnabled(t, b, false)
	b = reopen()
	checkEnabled(t, b, false)
	if err := b.SetRefreshEnabled(rCtx, true); err != nil {
		t.Fatal(err)
	}
	checkEnabled(t, b, true)
}

func checkEnabled(t *testing.T, b RefreshBackend, want bool) {
	t.Helper()
	on, err := b.RefreshEnabled(rCtx)
	if err != nil || on != want {
		t.Fatalf("RefreshEnabled = %v, %v; want %v", on, err, want)
	}
}

func testSignups(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	if _, err := b.Signup(rCtx, rFE(1)); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("unknown signup: %v", err)
	}
	if err := b.PutSignups(rCtx, []record.Signup{rSignup(1), rSignup(2)}); err != nil {
		t.Fatal(err)
	}
	checkSignup(t, b, rSignup(1))
	checkSignup(t, b, rSignup(2))
	// Re-import replaces.
	s := rSignup(1)
	s.SignupID = "replaced"
	if err := b.PutSignup(rCtx, s); err != nil {
		t.Fatal(err)
	}
	checkSignup(t, b, s)
}

func checkSignup(t *testing.T, b RefreshBackend, want record.Signup) {
	t.Helper()
	got, err := b.Signup(rCtx, want.IDCommitment)
	if err != nil {
		t.Fatal(err)
	}
	if got.IDCommitment != want.IDCommitment || got.SignupID != want.SignupID || !got.VerifiedAt.Equal(want.VerifiedAt) {
		t.Errorf("Signup = %+v, want %+v", got, want)
	}
}

// testInvalidSignups: one invalid record fails the whole import.
func testInvalidSignups(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	bad := []record.Signup{
		{IDCommitment: "0x1", SignupID: "s", VerifiedAt: rT0},
		{IDCommitment: rFE(3)[:65] + "A", SignupID: "s", VerifiedAt: rT0},
		{IDCommitment: rFE(3), SignupID: "", VerifiedAt: rT0},
		{IDCommitment: rFE(3), SignupID: "s", VerifiedAt: time.Unix(-1, 0)},
	}
	for _, s := range bad {
		if err := b.PutSignups(rCtx, []record.Signup{rSignup(9), s}); err == nil {
			t.Errorf("accepted %+v", s)
		}
	}
	if _, err := b.Signup(rCtx, rFE(9)); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("a failed import wrote its valid records: %v", err)
	}
}

func testOrbKeys(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	checkOrbKeys(t, b, "orb", []string{})
	for _, k := range []string{"pem-1", "pem-2"} {
		if err := b.AddOrbKey(rCtx, "orb", k); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddOrbKey(rCtx, "orb", "pem-1"); !errors.Is(err, record.ErrExists) {
		t.Errorf("duplicate key: %v", err)
	}
	if err := b.AddOrbKey(rCtx, "", "pem"); err == nil {
		t.Error("empty orb_id accepted")
	}
	checkOrbKeys(t, b, "orb", []string{"pem-1", "pem-2"})
	checkOrbKeys(t, b, "other", []string{})
}

func checkOrbKeys(t *testing.T, b RefreshBackend, orb string, want []string) {
	t.Helper()
	got, err := b.OrbKeys(rCtx, orb)
	if err != nil || got == nil || !slices.Equal(got, want) {
		t.Fatalf("OrbKeys(%s) = %q, %v; want %q", orb, got, err, want)
	}
}

func testPinAndMismatch(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	if _, err := b.PinnedSub(rCtx, rFE(1)); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("PinnedSub before any refresh: %v", err)
	}
	first := refreshOf(1, 10, "", rT0, 1)
	second := refreshOf(1, 10, rDigest(5), rT0.Add(time.Minute), 2)
	for _, r := range []record.Refresh{first, second} {
		if err := b.RecordRefresh(rCtx, r); err != nil {
			t.Fatal(err)
		}
	}
	checkPinned(t, b, 1, 10)
	if err := b.RecordRefresh(rCtx, refreshOf(1, 11, rDigest(6), rT0.Add(2*time.Minute), 3)); !errors.Is(err, record.ErrSubMismatch) {
		t.Fatalf("other sub: %v, want ErrSubMismatch", err)
	}
	checkPinned(t, b, 1, 10)
	checkRefreshes(t, b, 1, first, second)
	// The mismatch bound nothing: digest 6 is still free.
	if err := b.RecordRefresh(rCtx, refreshOf(2, 20, rDigest(6), rT0, 4)); err != nil {
		t.Errorf("digest of a failed refresh was bound: %v", err)
	}
}

func checkPinned(t *testing.T, b RefreshBackend, idComm, sub int) {
	t.Helper()
	got, err := b.PinnedSub(rCtx, rFE(idComm))
	if err != nil || got != rFE(sub) {
		t.Fatalf("PinnedSub = %s, %v; want %s", got, err, rFE(sub))
	}
}

func checkRefreshes(t *testing.T, b RefreshBackend, idComm int, want ...record.Refresh) {
	t.Helper()
	got, err := b.Refreshes(rCtx, rFE(idComm))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d refreshes, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.IDCommitment != w.IDCommitment || g.Sub != w.Sub || g.PCPDigest != w.PCPDigest ||
			g.CredentialID != w.CredentialID || !g.At.Equal(w.At) || g.Credential != w.Credential || g.ProofKey != "" {
			t.Errorf("refresh %d = %+v, want %+v", i, g, w)
		}
	}
}

func testPCPReuse(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	if err := b.RecordRefresh(rCtx, refreshOf(1, 10, rDigest(7), rT0, 1)); err != nil {
		t.Fatal(err)
	}
	// The same identity may present its PCP again.
	if err := b.RecordRefresh(rCtx, refreshOf(1, 10, rDigest(7), rT0.Add(time.Second), 2)); err != nil {
		t.Fatal(err)
	}
	if err := b.RecordRefresh(rCtx, refreshOf(2, 20, rDigest(7), rT0, 3)); !errors.Is(err, record.ErrPCPReused) {
		t.Fatalf("other identity: %v, want ErrPCPReused", err)
	}
	if _, err := b.PinnedSub(rCtx, rFE(2)); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("a refused refresh pinned its sub: %v", err)
	}
	checkRefreshes(t, b, 2)
}

func testInvalidRefresh(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	for name, r := range map[string]record.Refresh{
		"short idComm":     {IDCommitment: "0x1", Sub: rFE(1), At: rT0},
		"uppercase sub":    {IDCommitment: rFE(1), Sub: "0x" + fmt.Sprintf("%064X", 0xabc), At: rT0},
		"prefixed digest":  refreshOf(1, 1, "0x"+rDigest(1)[2:], rT0, 1),
		"short digest":     refreshOf(1, 1, rDigest(1)[1:], rT0, 1),
		"before 1970":      refreshOf(1, 1, "", time.Unix(-5, 0), 1),
		"uppercase digest": refreshOf(1, 1, fmt.Sprintf("%064X", 0xabc), rT0, 1),
	} {
		if err := b.RecordRefresh(rCtx, r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := b.PinnedSub(rCtx, rFE(1)); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("an invalid refresh pinned: %v", err)
	}
}

func testCanceledContextRefresh(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	ctx, cancel := context.WithCancel(rCtx)
	cancel()
	if err := b.RecordRefresh(ctx, refreshOf(1, 1, "", rT0, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("RecordRefresh with canceled context: %v", err)
	}
	if err := b.PutSignup(ctx, rSignup(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("PutSignup with canceled context: %v", err)
	}
	checkRefreshes(t, b, 1)
}

// raceRefreshes runs RecordRefresh for each refresh at once and returns
// the errors.
func raceRefreshes(b RefreshBackend, rs []record.Refresh) []error {
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, len(rs))
	for i := range rs {
		wg.Go(func() {
			<-start
			errs[i] = b.RecordRefresh(rCtx, rs[i])
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// testConcurrentPins: first refreshes of one commitment with different
// subs at once; exactly one pins, the others fail with ErrSubMismatch.
func testConcurrentPins(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	rs := make([]record.Refresh, concurrency)
	for i := range rs {
		rs[i] = refreshOf(1, 100+i, "", rT0, uint64(i))
	}
	winner := -1
	for i, err := range raceRefreshes(b, rs) {
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Fatalf("both %d and %d pinned", winner, i)
		case !errors.Is(err, record.ErrSubMismatch):
			t.Fatalf("racer %d: %v, want ErrSubMismatch", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody pinned")
	}
	checkPinned(t, b, 1, 100+winner)
	checkRefreshes(t, b, 1, rs[winner])
}

// testConcurrentPCP: one hashes.json for many commitments at once; exactly
// one binds it.
func testConcurrentPCP(t *testing.T, open RefreshOpener) {
	b, _ := open(t)
	rs := make([]record.Refresh, concurrency)
	for i := range rs {
		rs[i] = refreshOf(1+i, 1, rDigest(42), rT0, uint64(i))
	}
	won := 0
	for i, err := range raceRefreshes(b, rs) {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, record.ErrPCPReused):
			t.Fatalf("racer %d: %v, want ErrPCPReused", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d commitments bound one hashes.json", won)
	}
}

func testRefreshReopen(t *testing.T, open RefreshOpener) {
	b, reopen := open(t)
	r := refreshOf(1, 10, rDigest(3), rT0, 77)
	if err := b.RecordRefresh(rCtx, r); err != nil {
		t.Fatal(err)
	}
	if err := b.PutSignup(rCtx, rSignup(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.AddOrbKey(rCtx, "orb", "pem"); err != nil {
		t.Fatal(err)
	}
	b = reopen()
	checkPinned(t, b, 1, 10)
	checkRefreshes(t, b, 1, r)
	checkSignup(t, b, rSignup(1))
	checkOrbKeys(t, b, "orb", []string{"pem"})
	// Constraints survive the reopen.
	if err := b.RecordRefresh(rCtx, refreshOf(1, 11, "", rT0, 78)); !errors.Is(err, record.ErrSubMismatch) {
		t.Errorf("pin after reopen: %v", err)
	}
	if err := b.RecordRefresh(rCtx, refreshOf(2, 11, rDigest(3), rT0, 79)); !errors.Is(err, record.ErrPCPReused) {
		t.Errorf("PCP binding after reopen: %v", err)
	}
}

// testSpentProofAndCredential: RecordRefresh keeps the issued credential
// and spends r.ProofKey in the same transaction; a proof key used before
// fails the whole record (ErrExists) and writes nothing.
func testSpentProofAndCredential(t *testing.T, open RefreshOpener) {
	b, reopen := open(t)
	withProof := func(r record.Refresh, key string) record.Refresh {
		r.ProofKey, r.ProofExpiresAt = key, rT0.Add(5*time.Minute)
		return r
	}
	first := refreshOf(1, 10, "", rT0, 1)
	first.Credential = `{"id":1,"version":"V1"}`
	if err := b.RecordRefresh(rCtx, withProof(first, "refresh:k1")); err != nil {
		t.Fatal(err)
	}
	checkRefreshes(t, b, 1, first)
	if err := b.RecordRefresh(rCtx, withProof(refreshOf(1, 10, "", rT0.Add(time.Second), 2), "refresh:k1")); !errors.Is(err, record.ErrExists) {
		t.Fatalf("second use of a proof key: %v, want ErrExists", err)
	}
	if err := b.RecordRefresh(rCtx, withProof(refreshOf(2, 20, rDigest(9), rT0, 3), "refresh:k1")); !errors.Is(err, record.ErrExists) {
		t.Fatalf("proof key reused for another commitment: %v, want ErrExists", err)
	}
	checkRefreshes(t, b, 1, first)
	checkRefreshes(t, b, 2)
	if _, err := b.PinnedSub(rCtx, rFE(2)); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a refused record pinned a sub: %v", err)
	}
	// The refused record bound nothing: the digest is still free.
	third := refreshOf(3, 30, rDigest(9), rT0, 4)
	if err := b.RecordRefresh(rCtx, withProof(third, "refresh:k3")); err != nil {
		t.Fatal(err)
	}
	long := refreshOf(4, 40, "", rT0, 5)
	long.Credential = strings.Repeat("x", 16<<10+1)
	if err := b.RecordRefresh(rCtx, long); err == nil {
		t.Error("a credential over 16 KiB was stored")
	}
	b = reopen()
	checkRefreshes(t, b, 1, first)
	checkRefreshes(t, b, 3, third)
	if err := b.RecordRefresh(rCtx, withProof(refreshOf(5, 50, "", rT0, 6), "refresh:k3")); !errors.Is(err, record.ErrExists) {
		t.Fatalf("spent proof key after reopen: %v, want ErrExists", err)
	}
}

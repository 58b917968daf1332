package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"worldid/record"
)

// VerifyBackend is the part of a backend that records proof verifications
// (doc/design.md §5): the verify endpoint's and the admin's storage.
type VerifyBackend interface {
	RecordVerification(ctx context.Context, rpID, action, environment, nullifier string, now time.Time) (record.Verification, error)
	SetActionLimit(ctx context.Context, rpID, action, environment string, maxVerifications int, now time.Time) error
	Action(ctx context.Context, rpID, action, environment string) (record.Action, error)
	// NullifierCount is the number of nullifiers recorded, over all
	// actions (the server's metrics read it).
	NullifierCount(ctx context.Context) (int, error)
}

// VerifyOpener is Opener for a VerifyBackend.
type VerifyOpener func(t *testing.T) (b VerifyBackend, reopen func() VerifyBackend)

// limitRacers is the number of goroutines racing for one nullifier.
const limitRacers = 100

// RunVerify runs the verification suite against the backends open returns.
func RunVerify(t *testing.T, open VerifyOpener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open VerifyOpener)
	}{
		{"FirstAndReuse", testFirstAndReuse},
		{"Scopes", testScopes},
		{"Limit", testLimit},
		{"SetActionLimit", testSetActionLimit},
		{"ActionNotFound", testActionNotFound},
		{"InvalidUTF8", testInvalidUTF8},
		{"CanceledContextVerify", testCanceledContextVerify},
		{"ConcurrentLimit", testConcurrentLimit},
		{"ConcurrentUnlimited", testConcurrentUnlimited},
		{"ReopenVerify", testReopenVerify},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

const (
	vRP        = "rp_00000000000000aa"
	vAction    = "vote"
	vEnv       = "production"
	vNullifier = "0x00000000000000000000000000000000000000000000000000000000000000aa"
)

// t0 has nanoseconds and a non-UTC zone: backends must keep the instant.
var t0 = time.Date(2025, 6, 1, 14, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))

func mustRecord(t *testing.T, b VerifyBackend, rp, action, env, nullifier string, now time.Time) record.Verification {
	t.Helper()
	v, err := b.RecordVerification(context.Background(), rp, action, env, nullifier, now)
	if err != nil {
		t.Fatalf("RecordVerification(%s, %q, %s, %s): %v", rp, action, env, nullifier, err)
	}
	return v
}

func checkVerification(t *testing.T, got record.Verification, created time.Time, count int) {
	t.Helper()
	if !got.CreatedAt.Equal(created) || got.Count != count || got.Reused != (count > 1) {
		t.Errorf("verification %+v, want created %v, count %d", got, created, count)
	}
}

func checkAction(t *testing.T, b VerifyBackend, rp, action, env string, limit int, created time.Time) {
	t.Helper()
	a, err := b.Action(context.Background(), rp, action, env)
	if err != nil {
		t.Fatalf("Action(%s, %q, %s): %v", rp, action, env, err)
	}
	if a.RPID != rp || a.Action != action || a.Environment != env || a.MaxVerifications != limit || !a.CreatedAt.Equal(created) {
		t.Errorf("Action = %+v, want limit %d created %v", a, limit, created)
	}
}

func setLimit(t *testing.T, b VerifyBackend, n int, now time.Time) {
	t.Helper()
	if err := b.SetActionLimit(context.Background(), vRP, vAction, vEnv, n, now); err != nil {
		t.Fatalf("SetActionLimit(%d): %v", n, err)
	}
}

func wantLimited(t *testing.T, b VerifyBackend, nullifier string) {
	t.Helper()
	if v, err := b.RecordVerification(context.Background(), vRP, vAction, vEnv, nullifier, t0); !errors.Is(err, record.ErrLimitReached) {
		t.Fatalf("RecordVerification over the limit = %+v, %v; want ErrLimitReached", v, err)
	}
}

func testFirstAndReuse(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0), t0, 1)
	checkAction(t, b, vRP, vAction, vEnv, 0, t0)
	for i := 2; i <= 5; i++ {
		later := t0.Add(time.Duration(i) * time.Hour)
		checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, vNullifier, later), t0, i)
	}
	// The action keeps its creation time.
	checkAction(t, b, vRP, vAction, vEnv, 0, t0)
}

// Nullifiers are counted per (rp, action, environment); no combination of
// parts collides with another, whatever the action text holds.
func testScopes(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	scopes := [][3]string{
		{vRP, vAction, vEnv},
		{"rp_00000000000000bb", vAction, vEnv},
		{vRP, "vote2", vEnv},
		{vRP, vAction, "staging"},
		{vRP, "", vEnv},
		{vRP, `a","b`, vEnv},
		{vRP, `a`, `b","` + vEnv},
		{vRP, "a\x00b", vEnv},
		{vRP, "a/b", vEnv},
		{vRP + "/a", "b", vEnv},
		{vRP, "ünïcödé ✓", vEnv},
	}
	for round := 1; round <= 2; round++ {
		for _, s := range scopes {
			for _, n := range []string{vNullifier, "0x01"} {
				v := mustRecord(t, b, s[0], s[1], s[2], n, t0)
				checkVerification(t, v, t0, round)
			}
		}
	}
	for _, s := range scopes {
		checkAction(t, b, s[0], s[1], s[2], 0, t0)
	}
	if n, err := b.NullifierCount(context.Background()); err != nil || n != 2*len(scopes) {
		t.Errorf("NullifierCount = %d, %v; want %d", n, err, 2*len(scopes))
	}
}

func testLimit(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	setLimit(t, b, 2, t0) // before the first verification: creates the action
	checkAction(t, b, vRP, vAction, vEnv, 2, t0)
	mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0)
	mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0.Add(time.Hour))
	wantLimited(t, b, vNullifier)
	wantLimited(t, b, vNullifier)
	// Another nullifier has its own count.
	checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, "0x01", t0), t0, 1)
	// Raising the limit allows exactly one more; the refusals were not counted.
	setLimit(t, b, 3, t0.Add(time.Hour))
	checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0.Add(2*time.Hour)), t0, 3)
	wantLimited(t, b, vNullifier)
	// Lowering it below the count refuses; 0 lifts it.
	setLimit(t, b, 1, t0)
	wantLimited(t, b, vNullifier)
	setLimit(t, b, 0, t0)
	checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0), t0, 4)
	// The limit belongs to the action only.
	setLimit(t, b, 1, t0)
	mustRecord(t, b, vRP, vAction, "staging", vNullifier, t0)
	mustRecord(t, b, vRP, vAction, "staging", vNullifier, t0)
}

func testSetActionLimit(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0)
	setLimit(t, b, 7, t0.Add(time.Hour))
	// An existing action keeps its creation time.
	checkAction(t, b, vRP, vAction, vEnv, 7, t0)
	if err := b.SetActionLimit(context.Background(), vRP, vAction, vEnv, -1, t0); err == nil {
		t.Errorf("SetActionLimit(-1) succeeded")
	}
	checkAction(t, b, vRP, vAction, vEnv, 7, t0)
}

func testActionNotFound(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	if _, err := b.Action(context.Background(), vRP, vAction, vEnv); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Action on empty backend: %v, want ErrNotFound", err)
	}
	mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0)
	if _, err := b.Action(context.Background(), vRP, vAction, "staging"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Action(other environment): %v, want ErrNotFound", err)
	}
}

// Distinct invalid UTF-8 actions must not be merged (as a lossy encoding
// would); a backend refuses them.
func testInvalidUTF8(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	ctx := context.Background()
	if _, err := b.RecordVerification(ctx, vRP, "a\xff", vEnv, vNullifier, t0); err == nil {
		t.Errorf("RecordVerification with invalid UTF-8 action succeeded")
	}
	if err := b.SetActionLimit(ctx, vRP, "a\xfe", vEnv, 1, t0); err == nil {
		t.Errorf("SetActionLimit with invalid UTF-8 action succeeded")
	}
	if _, err := b.RecordVerification(ctx, vRP, vAction, vEnv, "0x\xff", t0); err == nil {
		t.Errorf("RecordVerification with invalid UTF-8 nullifier succeeded")
	}
	if _, err := b.Action(ctx, vRP, "a\xff", vEnv); err == nil {
		t.Errorf("Action with invalid UTF-8 succeeded")
	}
}

func testCanceledContextVerify(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.RecordVerification(ctx, vRP, vAction, vEnv, vNullifier, t0); !errors.Is(err, context.Canceled) {
		t.Fatalf("RecordVerification with canceled context: %v, want context.Canceled", err)
	}
	if err := b.SetActionLimit(ctx, vRP, vAction, vEnv, 1, t0); !errors.Is(err, context.Canceled) {
		t.Fatalf("SetActionLimit with canceled context: %v, want context.Canceled", err)
	}
	if _, err := b.Action(context.Background(), vRP, vAction, vEnv); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("canceled calls left an action behind: %v", err)
	}
}

// raceRecord records vNullifier from limitRacers goroutines at once and
// returns the successful verifications; every failure must be ErrLimitReached.
func raceRecord(t *testing.T, b VerifyBackend) []record.Verification {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		vs    = make([]record.Verification, limitRacers)
		errs  = make([]error, limitRacers)
	)
	for i := range limitRacers {
		wg.Go(func() {
			<-start
			vs[i], errs[i] = b.RecordVerification(context.Background(), vRP, vAction, vEnv, vNullifier, t0.Add(time.Duration(i)*time.Second))
		})
	}
	close(start)
	wg.Wait()
	var won []record.Verification
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, vs[i])
		case !errors.Is(err, record.ErrLimitReached):
			t.Errorf("racer %d: %v, want nil or ErrLimitReached", i, err)
		}
	}
	return won
}

func testConcurrentLimit(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	setLimit(t, b, 1, t0)
	if won := raceRecord(t, b); len(won) != 1 || won[0].Count != 1 || won[0].Reused {
		t.Fatalf("%d of %d racers verified (%+v), want exactly 1", len(won), limitRacers, won)
	}
	wantLimited(t, b, vNullifier)
}

// Without a limit every racer verifies, each with a distinct count, and all
// report the creation time of whichever came first.
func testConcurrentUnlimited(t *testing.T, open VerifyOpener) {
	b, _ := open(t)
	won := raceRecord(t, b)
	if len(won) != limitRacers {
		t.Fatalf("%d of %d racers verified", len(won), limitRacers)
	}
	seen := make(map[int]bool)
	for _, v := range won {
		if seen[v.Count] || v.Count < 1 || v.Count > limitRacers || v.Reused != (v.Count > 1) || !v.CreatedAt.Equal(won[0].CreatedAt) {
			t.Fatalf("verifications %+v", won)
		}
		seen[v.Count] = true
	}
	checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0), won[0].CreatedAt, limitRacers+1)
}

func testReopenVerify(t *testing.T, open VerifyOpener) {
	b, reopen := open(t)
	mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0)
	mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0.Add(time.Hour))
	setLimit(t, b, 3, t0.Add(time.Hour))
	for i := range 3 {
		mustRecord(t, b, vRP, fmt.Sprintf("other-%d", i), "staging", vNullifier, t0)
	}
	b = reopen()
	checkAction(t, b, vRP, vAction, vEnv, 3, t0)
	checkVerification(t, mustRecord(t, b, vRP, vAction, vEnv, vNullifier, t0.Add(2*time.Hour)), t0, 3)
	wantLimited(t, b, vNullifier)
	b = reopen()
	wantLimited(t, b, vNullifier)
	for i := range 3 {
		checkAction(t, b, vRP, fmt.Sprintf("other-%d", i), "staging", 0, t0)
	}
}

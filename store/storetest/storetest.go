// Package storetest is the conformance suite every storage backend passes:
// the semantics of the domain methods, their unique constraints under
// concurrency, and durability across close and reopen (doc/design.md §3).
//
// A backend's test calls Run with a function that opens a fresh, empty
// backend for one subtest. Run does not test crash safety or a backend's
// storage format; those belong to each backend's own tests.
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

// Backend is the set of domain methods every backend implements. Handlers
// declare subsets of it as their own interfaces.
type Backend interface {
	CreateApp(ctx context.Context, a record.App) error
	App(ctx context.Context, id string) (record.App, error)
	AppByRP(ctx context.Context, rpID string) (record.App, error)
	Apps(ctx context.Context) ([]record.App, error)
	// Health is nil while the backend accepts writes, else an error
	// wrapping record.ErrUnavailable (server /healthz).
	Health(ctx context.Context) error
	ImportApps(ctx context.Context, apps []record.App, replace bool) error
	UpdateApp(ctx context.Context, id string, change func(*record.App) error) (record.App, error)
	DeleteApp(ctx context.Context, id string) error
}

// Opener opens a fresh, empty backend for the subtest t and arranges for it
// to be closed when t ends. reopen closes the backend and opens it again on
// the same state, returning the new handle (the old one is no longer used).
type Opener func(t *testing.T) (b Backend, reopen func() Backend)

// concurrency is the number of goroutines racing for one unique value.
const concurrency = 50

// Run runs the conformance suite against the backends open returns.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"CreateAndRead", testCreateAndRead},
		{"NotFound", testNotFound},
		{"DuplicateID", testDuplicateID},
		{"DuplicateRPID", testDuplicateRPID},
		{"FailedCreateLeavesNothing", testFailedCreateLeavesNothing},
		{"AppsSortedByID", testAppsSortedByID},
		{"ResultsAreCopies", testResultsAreCopies},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentSameID", testConcurrentSameID},
		{"ConcurrentSameRPID", testConcurrentSameRPID},
		{"ConcurrentDistinct", testConcurrentDistinct},
		{"Reopen", testReopen},
		{"Healthy", testHealthy},
		{"LifecycleFields", testLifecycleFields},
		{"ImportApps", testImportApps},
		{"ImportAppsReplace", testImportAppsReplace},
		{"UpdateApp", testUpdateApp},
		{"DeleteApp", testDeleteApp},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"SigninSettings", testSigninSettings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// testApp returns a valid app whose ID and RPID derive from id and rp.
func testApp(id, rp int) record.App {
	return record.App{
		ID:           fmt.Sprintf("app_%032x", id),
		RPID:         fmt.Sprintf("rp_%016x", rp),
		Name:         fmt.Sprintf("App %d", id),
		SecretHash:   fmt.Sprintf("%064x", id*7919),
		RedirectURIs: []string{fmt.Sprintf("https://app%d.example/callback", id), "http://localhost:3000/cb"},
		CreatedAt:    time.Date(2025, 6, 1, 12, 0, id%60, 123456789, time.UTC),
	}
}

func equalApps(a, b record.App) bool {
	return a.ID == b.ID && a.RPID == b.RPID && a.Name == b.Name && a.SecretHash == b.SecretHash &&
		slices.Equal(a.RedirectURIs, b.RedirectURIs) && a.CreatedAt.Equal(b.CreatedAt) &&
		a.Staging == b.Staging && a.Disabled == b.Disabled && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Profile == b.Profile && slices.Equal(a.PostLogoutRedirectURIs, b.PostLogoutRedirectURIs) &&
		a.TokenEndpointAuthMethod == b.TokenEndpointAuthMethod && a.JWKS == b.JWKS && a.JWKSURI == b.JWKSURI && a.PKCERequired == b.PKCERequired &&
		slices.Equal(a.ResponseTypes, b.ResponseTypes) && a.RPSigningKey == b.RPSigningKey &&
		a.SectorIdentifierURI == b.SectorIdentifierURI && a.SectorAppID == b.SectorAppID
}

func mustCreate(t *testing.T, b Backend, a record.App) {
	t.Helper()
	if err := b.CreateApp(context.Background(), a); err != nil {
		t.Fatalf("CreateApp(%s): %v", a.ID, err)
	}
}

// checkApp asserts that want is readable by ID and by RPID.
func checkApp(t *testing.T, b Backend, want record.App) {
	t.Helper()
	ctx := context.Background()
	got, err := b.App(ctx, want.ID)
	if err != nil || !equalApps(got, want) {
		t.Errorf("App(%s) = %+v, %v; want %+v", want.ID, got, err, want)
	}
	got, err = b.AppByRP(ctx, want.RPID)
	if err != nil || !equalApps(got, want) {
		t.Errorf("AppByRP(%s) = %+v, %v; want %+v", want.RPID, got, err, want)
	}
}

// checkApps asserts that Apps returns exactly want, in this order.
func checkApps(t *testing.T, b Backend, want []record.App) {
	t.Helper()
	got, err := b.Apps(context.Background())
	if err != nil {
		t.Fatalf("Apps: %v", err)
	}
	if !slices.EqualFunc(got, want, equalApps) {
		t.Errorf("Apps = %+v; want %+v", got, want)
	}
}

func testCreateAndRead(t *testing.T, open Opener) {
	b, _ := open(t)
	a := testApp(1, 1)
	mustCreate(t, b, a)
	checkApp(t, b, a)
	checkApps(t, b, []record.App{a})
}

func testNotFound(t *testing.T, open Opener) {
	b, _ := open(t)
	ctx := context.Background()
	checkApps(t, b, nil)
	if _, err := b.App(ctx, testApp(1, 1).ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("App on empty backend: %v, want ErrNotFound", err)
	}
	mustCreate(t, b, testApp(1, 1))
	if _, err := b.App(ctx, testApp(2, 2).ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("App(unknown): %v, want ErrNotFound", err)
	}
	if _, err := b.AppByRP(ctx, testApp(2, 2).RPID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("AppByRP(unknown): %v, want ErrNotFound", err)
	}
	// An app ID is not an RP ID and vice versa.
	if _, err := b.AppByRP(ctx, testApp(1, 1).ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("AppByRP(app ID): %v, want ErrNotFound", err)
	}
	if _, err := b.App(ctx, testApp(1, 1).RPID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("App(rp ID): %v, want ErrNotFound", err)
	}
}

func testDuplicateID(t *testing.T, open Opener) {
	b, _ := open(t)
	first := testApp(1, 1)
	mustCreate(t, b, first)
	if err := b.CreateApp(context.Background(), testApp(1, 2)); !errors.Is(err, record.ErrExists) {
		t.Fatalf("CreateApp with taken ID: %v, want ErrExists", err)
	}
	checkApp(t, b, first)
	checkApps(t, b, []record.App{first})
}

func testDuplicateRPID(t *testing.T, open Opener) {
	b, _ := open(t)
	first := testApp(1, 1)
	mustCreate(t, b, first)
	if err := b.CreateApp(context.Background(), testApp(2, 1)); !errors.Is(err, record.ErrExists) {
		t.Fatalf("CreateApp with taken RPID: %v, want ErrExists", err)
	}
	checkApp(t, b, first)
	checkApps(t, b, []record.App{first})
}

// A create that fails on one constraint must not have claimed the other.
func testFailedCreateLeavesNothing(t *testing.T, open Opener) {
	b, _ := open(t)
	ctx := context.Background()
	mustCreate(t, b, testApp(1, 1))
	// ID 2 is free, RPID 1 is taken: the create fails...
	if err := b.CreateApp(ctx, testApp(2, 1)); !errors.Is(err, record.ErrExists) {
		t.Fatalf("CreateApp with taken RPID: %v, want ErrExists", err)
	}
	// ...and must not have claimed ID 2.
	if _, err := b.App(ctx, testApp(2, 1).ID); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("failed create left its ID behind: %v", err)
	}
	mustCreate(t, b, testApp(2, 2))
	// RPID 3 is free, ID 1 is taken: the create fails and must not claim RPID 3.
	if err := b.CreateApp(ctx, testApp(1, 3)); !errors.Is(err, record.ErrExists) {
		t.Fatalf("CreateApp with taken ID: %v, want ErrExists", err)
	}
	mustCreate(t, b, testApp(3, 3))
	checkApps(t, b, []record.App{testApp(1, 1), testApp(2, 2), testApp(3, 3)})
}

func testAppsSortedByID(t *testing.T, open Opener) {
	b, _ := open(t)
	var want []record.App
	for _, i := range []int{7, 3, 12, 1, 9, 4} {
		a := testApp(i, 100-i)
		mustCreate(t, b, a)
		want = append(want, a)
	}
	slices.SortFunc(want, func(x, y record.App) int { return strings.Compare(x.ID, y.ID) })
	checkApps(t, b, want)
}

// Callers may modify what they get without affecting the stored app.
func testResultsAreCopies(t *testing.T, open Opener) {
	b, _ := open(t)
	ctx := context.Background()
	a := testApp(1, 1)
	mustCreate(t, b, a)
	got, err := b.App(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.RedirectURIs[0] = "https://evil.example/"
	all, err := b.Apps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all[0].RedirectURIs[0] = "https://evil.example/"
	a.RedirectURIs[1] = "https://evil.example/" // the caller's input, too
	checkApp(t, b, testApp(1, 1))
}

func testCanceledContext(t *testing.T, open Opener) {
	b, _ := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.CreateApp(ctx, testApp(1, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateApp with canceled context: %v, want context.Canceled", err)
	}
	checkApps(t, b, nil)
}

// race runs create concurrently for i in [0, concurrency) and returns how
// many succeeded; every failure must be ErrExists.
func race(t *testing.T, b Backend, app func(i int) record.App) int {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, concurrency)
	)
	for i := range concurrency {
		wg.Go(func() {
			<-start
			errs[i] = b.CreateApp(context.Background(), app(i))
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, record.ErrExists):
			t.Errorf("racer %d: %v, want nil or ErrExists", i, err)
		}
	}
	return won
}

func testConcurrentSameID(t *testing.T, open Opener) {
	b, _ := open(t)
	if won := race(t, b, func(i int) record.App { return testApp(1, i) }); won != 1 {
		t.Fatalf("%d of %d creates of one ID succeeded, want 1", won, concurrency)
	}
	apps, err := b.Apps(context.Background())
	if err != nil || len(apps) != 1 {
		t.Fatalf("Apps = %d apps, %v; want 1", len(apps), err)
	}
	checkApp(t, b, apps[0])
}

func testConcurrentSameRPID(t *testing.T, open Opener) {
	b, _ := open(t)
	if won := race(t, b, func(i int) record.App { return testApp(i, 1) }); won != 1 {
		t.Fatalf("%d of %d creates of one RPID succeeded, want 1", won, concurrency)
	}
	apps, err := b.Apps(context.Background())
	if err != nil || len(apps) != 1 {
		t.Fatalf("Apps = %d apps, %v; want 1", len(apps), err)
	}
	checkApp(t, b, apps[0])
}

func testConcurrentDistinct(t *testing.T, open Opener) {
	b, _ := open(t)
	if won := race(t, b, func(i int) record.App { return testApp(i, i) }); won != concurrency {
		t.Fatalf("%d of %d distinct creates succeeded", won, concurrency)
	}
	var want []record.App
	for i := range concurrency {
		want = append(want, testApp(i, i))
	}
	checkApps(t, b, want)
}

func testReopen(t *testing.T, open Opener) {
	b, reopen := open(t)
	var want []record.App
	for i := range 5 {
		a := testApp(i, i)
		mustCreate(t, b, a)
		want = append(want, a)
	}
	b = reopen()
	checkApps(t, b, want)
	for _, a := range want {
		checkApp(t, b, a)
	}
	// Constraints survive the reopen.
	if err := b.CreateApp(context.Background(), testApp(0, 99)); !errors.Is(err, record.ErrExists) {
		t.Errorf("taken ID after reopen: %v, want ErrExists", err)
	}
	if err := b.CreateApp(context.Background(), testApp(99, 0)); !errors.Is(err, record.ErrExists) {
		t.Errorf("taken RPID after reopen: %v, want ErrExists", err)
	}
	a := testApp(5, 5)
	mustCreate(t, b, a)
	b = reopen()
	checkApps(t, b, append(want, a))
}

// A working backend is healthy, before and after writes and across a
// reopen.
func testHealthy(t *testing.T, open Opener) {
	b, reopen := open(t)
	ctx := context.Background()
	if err := b.Health(ctx); err != nil {
		t.Fatalf("Health of a fresh backend: %v", err)
	}
	if err := b.CreateApp(ctx, testApp(1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Health(ctx); err != nil {
		t.Fatalf("Health after a write: %v", err)
	}
	if err := reopen().Health(ctx); err != nil {
		t.Fatalf("Health after reopening: %v", err)
	}
}

package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"worldid/record"
)

// App lifecycle: import with replacement, update, delete.

// The staging, disabled and updated fields survive a reopen.
func testLifecycleFields(t *testing.T, open Opener) {
	b, reopen := open(t)
	a := testApp(1, 1)
	a.ID = "app_staging_" + a.ID[len("app_"):]
	a.Staging, a.Disabled, a.UpdatedAt = true, true, a.CreatedAt.Add(time.Hour)
	mustCreate(t, b, a)
	checkApp(t, b, a)
	b = reopen()
	checkApp(t, b, a)
}

// A batch is stored whole or not at all; a refusal names the app.
func testImportApps(t *testing.T, open Opener) {
	b, reopen := open(t)
	ctx := context.Background()
	mustCreate(t, b, testApp(1, 1))
	refused := func(batch []record.App, index int) {
		t.Helper()
		var item *record.ItemError
		if err := b.ImportApps(ctx, batch, false); !errors.As(err, &item) || item.Index != index || !errors.Is(err, record.ErrExists) {
			t.Fatalf("ImportApps = %v; want an ItemError of app %d wrapping ErrExists", err, index)
		}
		checkApps(t, b, []record.App{testApp(1, 1)})
	}
	refused([]record.App{testApp(2, 2), testApp(3, 3), testApp(1, 4)}, 2) // a stored app_id
	refused([]record.App{testApp(2, 2), testApp(3, 1)}, 1)                // a stored rp_id
	refused([]record.App{testApp(2, 2), testApp(2, 3)}, 1)                // an app_id twice
	refused([]record.App{testApp(2, 2), testApp(3, 2)}, 1)                // an rp_id twice
	if err := b.ImportApps(ctx, []record.App{testApp(2, 2), testApp(3, 3)}, false); err != nil {
		t.Fatalf("ImportApps: %v", err)
	}
	b = reopen()
	checkApps(t, b, []record.App{testApp(1, 1), testApp(2, 2), testApp(3, 3)})
	for _, a := range []record.App{testApp(2, 2), testApp(3, 3)} {
		checkApp(t, b, a)
	}
}

// With replace, an app of the same ID is replaced (its old rp_id is
// released, in batch order); an rp_id of another app is still refused.
func testImportAppsReplace(t *testing.T, open Opener) {
	b, reopen := open(t)
	ctx := context.Background()
	a := testApp(1, 1)
	mustCreate(t, b, a)
	mustCreate(t, b, testApp(2, 2))
	replaced := testApp(1, 3)
	replaced.Name = "replaced"
	replaced.CreatedAt = a.CreatedAt.Add(time.Hour) // the import's time
	// The new app 4 takes rp 1, which replacing app 1 released.
	if err := b.ImportApps(ctx, []record.App{replaced, testApp(4, 1), testApp(5, 5)}, true); err != nil {
		t.Fatalf("ImportApps(replace): %v", err)
	}
	// The replaced app keeps when it was created; the import updated it.
	replaced.CreatedAt, replaced.UpdatedAt = a.CreatedAt, replaced.CreatedAt
	checkApp(t, b, replaced)
	checkApp(t, b, testApp(4, 1))
	want := []record.App{replaced, testApp(2, 2), testApp(4, 1), testApp(5, 5)}
	var item *record.ItemError
	if err := b.ImportApps(ctx, []record.App{testApp(6, 6), testApp(1, 2)}, true); !errors.As(err, &item) || item.Index != 1 || !errors.Is(err, record.ErrExists) {
		t.Fatalf("ImportApps(replace) with another app's rp_id: %v, want an ItemError of app 1 wrapping ErrExists", err)
	}
	b = reopen()
	checkApps(t, b, want)
}

func testUpdateApp(t *testing.T, open Opener) {
	b, reopen := open(t)
	ctx := context.Background()
	a := testApp(1, 1)
	mustCreate(t, b, a)
	got, err := b.UpdateApp(ctx, a.ID, func(x *record.App) error {
		x.Name, x.Disabled, x.RedirectURIs = "renamed", true, []string{"https://new.example/cb"}
		return nil
	})
	want := a
	want.Name, want.Disabled, want.RedirectURIs = "renamed", true, []string{"https://new.example/cb"}
	if err != nil || !equalApps(got, want) {
		t.Fatalf("UpdateApp = %+v, %v; want %+v", got, err, want)
	}
	refuse := errors.New("refused")
	if _, err := b.UpdateApp(ctx, a.ID, func(x *record.App) error { x.Name = "half"; return refuse }); !errors.Is(err, refuse) {
		t.Errorf("UpdateApp whose change fails: %v, want its error", err)
	}
	if _, err := b.UpdateApp(ctx, a.ID, func(x *record.App) error { x.RPID = testApp(2, 2).RPID; return nil }); err == nil {
		t.Error("UpdateApp changed the rp_id")
	}
	if _, err := b.UpdateApp(ctx, testApp(9, 9).ID, func(*record.App) error { return nil }); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("UpdateApp(unknown): %v, want ErrNotFound", err)
	}
	b = reopen()
	checkApps(t, b, []record.App{want})
	checkApp(t, b, want)
}

func testDeleteApp(t *testing.T, open Opener) {
	b, reopen := open(t)
	ctx := context.Background()
	a := testApp(1, 1)
	mustCreate(t, b, a)
	mustCreate(t, b, testApp(2, 2))
	if err := b.DeleteApp(ctx, a.ID); err != nil {
		t.Fatalf("DeleteApp: %v", err)
	}
	if err := b.DeleteApp(ctx, a.ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("DeleteApp twice: %v, want ErrNotFound", err)
	}
	if _, err := b.AppByRP(ctx, a.RPID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("AppByRP after delete: %v, want ErrNotFound", err)
	}
	b = reopen()
	checkApps(t, b, []record.App{testApp(2, 2)})
	mustCreate(t, b, a) // both ids are free again
	checkApp(t, b, a)
}

// Concurrent read-modify-write updates of one app lose none.
func testConcurrentUpdates(t *testing.T, open Opener) {
	b, _ := open(t)
	ctx := context.Background()
	a := testApp(1, 1)
	a.RedirectURIs = nil
	mustCreate(t, b, a)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := b.UpdateApp(ctx, a.ID, func(x *record.App) error {
				x.RedirectURIs = append(x.RedirectURIs, "https://x.example/cb")
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := b.App(ctx, a.ID)
	if err != nil || len(got.RedirectURIs) != 20 {
		t.Fatalf("after 20 concurrent appends: %d URIs, %v", len(got.RedirectURIs), err)
	}
}

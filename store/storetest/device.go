package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"worldid/record"
)

// The device grants of package oidc's Store (RFC 8628).

func oidcDevice(n int) record.DeviceGrant {
	return record.DeviceGrant{ID: fmt.Sprintf("%064x", n), UserCode: fmt.Sprintf("%064x", 1000+n), ClientID: "app_1",
		Scope: "openid email", State: record.DevicePending, Interval: 5,
		ExpiresAt: oidcT0.Add(10 * time.Minute), RetainUntil: oidcT0.Add(20 * time.Minute)}
}

func oidcEqualDevice(a, b record.DeviceGrant) bool {
	return a.ID == b.ID && a.UserCode == b.UserCode && a.ClientID == b.ClientID && a.Scope == b.Scope && a.State == b.State &&
		a.Subject == b.Subject && a.VerificationLevel == b.VerificationLevel && a.AuthTime.Equal(b.AuthTime) &&
		a.Interval == b.Interval && a.PolledAt.Equal(b.PolledAt) && a.ExpiresAt.Equal(b.ExpiresAt) && a.RetainUntil.Equal(b.RetainUntil)
}

func testDeviceGrants(t *testing.T, open OIDCOpener) {
	b, reopen := open(t)
	ctx := context.Background()
	g := oidcDevice(1)
	if err := b.SaveDeviceGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	sameID, sameUser := oidcDevice(2), oidcDevice(3)
	sameID.ID, sameUser.UserCode = g.ID, g.UserCode
	for _, dup := range []record.DeviceGrant{sameID, sameUser} {
		if err := b.SaveDeviceGrant(ctx, dup); !errors.Is(err, record.ErrExists) {
			t.Fatalf("duplicate code: %v", err)
		}
	}
	if _, err := b.DeviceGrantByUserCode(ctx, sameID.UserCode); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a refused grant was stored: %v", err)
	}
	if got, err := b.DeviceGrantByUserCode(ctx, g.UserCode); err != nil || !oidcEqualDevice(got, g) {
		t.Fatalf("by user code: %+v, %v", got, err)
	}
	if _, err := b.UpdateDeviceGrant(ctx, oidcDevice(9).ID, func(*record.DeviceGrant) bool { return true }); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("update of an unknown grant: %v", err)
	}
	// update reporting no change stores nothing.
	got, err := b.UpdateDeviceGrant(ctx, g.ID, func(d *record.DeviceGrant) bool { d.State = record.DeviceDenied; return false })
	if err != nil || got.State != record.DeviceDenied {
		t.Fatalf("unwritten update: %+v, %v", got, err)
	}
	// Changing the codes is refused.
	if _, err := b.UpdateDeviceGrant(ctx, g.ID, func(d *record.DeviceGrant) bool { d.UserCode = oidcDevice(7).UserCode; return true }); err == nil {
		t.Fatal("an update changed the user code")
	}
	approved := g
	approved.State, approved.Subject, approved.VerificationLevel, approved.AuthTime = record.DeviceApproved, "0x01", "orb", oidcT0.Add(time.Second)
	approved.PolledAt, approved.Interval = oidcT0.Add(2*time.Second), 10
	got, err = b.UpdateDeviceGrant(ctx, g.ID, func(d *record.DeviceGrant) bool {
		if !oidcEqualDevice(*d, g) {
			t.Errorf("update saw %+v, want %+v", *d, g)
		}
		*d = approved
		return true
	})
	if err != nil || !oidcEqualDevice(got, approved) {
		t.Fatalf("update: %+v, %v", got, err)
	}
	b = reopen()
	if got, err := b.DeviceGrantByUserCode(ctx, g.UserCode); err != nil || !oidcEqualDevice(got, approved) {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
}

// testConcurrentDeviceUpdates: updates of one grant run one after the
// other, so none is lost.
func testConcurrentDeviceUpdates(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	g := oidcDevice(1)
	if err := b.SaveDeviceGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	oidcRace(t, func(int) error {
		_, err := b.UpdateDeviceGrant(ctx, g.ID, func(d *record.DeviceGrant) bool { d.Interval++; return true })
		return err
	}, func(error) bool { return false })
	got, err := b.DeviceGrantByUserCode(ctx, g.UserCode)
	if err != nil || got.Interval != g.Interval+concurrency {
		t.Fatalf("interval %d after %d concurrent increments of %d: %v", got.Interval, concurrency, g.Interval, err)
	}
}

func testPruneDeviceGrants(t *testing.T, open OIDCOpener) {
	b, _ := open(t)
	ctx := context.Background()
	old, live := oidcDevice(1), oidcDevice(2)
	live.RetainUntil = oidcT0.Add(time.Hour)
	for _, g := range []record.DeviceGrant{old, live} {
		if err := b.SaveDeviceGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PruneExpired(ctx, old.RetainUntil.Add(-time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeviceGrantByUserCode(ctx, old.UserCode); err != nil {
		t.Fatalf("grant pruned before its retention ended: %v", err)
	}
	if err := b.PruneExpired(ctx, old.RetainUntil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeviceGrantByUserCode(ctx, old.UserCode); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("retained grant kept: %v", err)
	}
	if _, err := b.UpdateDeviceGrant(ctx, old.ID, func(*record.DeviceGrant) bool { return false }); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("retained grant kept by id: %v", err)
	}
	if _, err := b.DeviceGrantByUserCode(ctx, live.UserCode); err != nil {
		t.Fatalf("live grant pruned: %v", err)
	}
	// The pruned grant's user code is free again.
	reuse := oidcDevice(3)
	reuse.UserCode = old.UserCode
	if err := b.SaveDeviceGrant(ctx, reuse); err != nil {
		t.Fatalf("user code of a pruned grant: %v", err)
	}
}

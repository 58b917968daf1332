package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/record"
	"worldid/store/jsontest"
)

// memKeys is a Keys that revokes as package oidc does: the key moves to
// the revoked list with the time, and a second revocation is
// record.ErrKeyRevoked.
type memKeys struct {
	mu   sync.Mutex
	now  time.Time
	keys []record.KeyInfo
}

func (k *memKeys) RotateKeys(context.Context) error { return nil }

func (k *memKeys) RevokeKey(_ context.Context, kid string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.keys, func(info record.KeyInfo) bool { return info.KID == kid })
	switch {
	case i < 0:
		return fmt.Errorf("oidc: revoke signing key %q: %w", kid, record.ErrNotFound)
	case k.keys[i].State == "revoked":
		return fmt.Errorf("oidc: revoke signing key %q: %w", kid, record.ErrKeyRevoked)
	}
	k.keys[i] = record.KeyInfo{KID: kid, State: "revoked", RevokedAt: k.now}
	return nil
}

func (k *memKeys) KeyList(context.Context) ([]record.KeyInfo, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.keys), nil
}

// A revoked key stays in the list as revoked, with its time and without
// the times only a stored key has; revoking it again is 409 "already
// revoked", an unknown kid 404.
func TestRevokeKeyTwice(t *testing.T) {
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	keys := &memKeys{now: now, keys: []record.KeyInfo{{KID: "kid-1", State: "active", CreatedAt: now.Add(-time.Hour), ActivatesAt: now.Add(-time.Hour)}}}
	h := newHandler(t, Options{Token: testToken, Store: jsontest.Open(t), Keys: keys, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	ctx := t.Context()

	if err := c.RevokeKey(ctx, "kid-1"); err != nil {
		t.Fatal(err)
	}
	if r := do(t, srv, http.MethodGet, "/admin/keys", testToken, "", ""); r.status != 200 ||
		!strings.Contains(r.body, `{"kid":"kid-1","state":"revoked","revoked_at":"2026-11-28T01:00:00Z"}`) {
		t.Errorf("list after revoking: %d %s", r.status, r.body)
	}
	var e *Error
	if err := c.RevokeKey(ctx, "kid-1"); !errors.As(err, &e) || e.Status != http.StatusConflict || e.Code != "conflict" ||
		!strings.Contains(e.Message, "already revoked") {
		t.Errorf("second revocation: %v", err)
	}
	if err := c.RevokeKey(ctx, "kid-2"); !errors.As(err, &e) || e.Status != http.StatusNotFound {
		t.Errorf("revoking an unknown key: %v", err)
	}
}

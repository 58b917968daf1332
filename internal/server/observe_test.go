package server

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"worldid/internal/leaf/metrics"
	"worldid/record"
)

// The next rotation is a pending successor's activation; the record of a
// revoked key listed after the signing key is no successor.
func TestNextRotationSkipsRevokedKeys(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rotation := 720 * time.Hour
	active := record.KeyInfo{KID: "a", State: "active", CreatedAt: at, ActivatesAt: at}
	revoked := record.KeyInfo{KID: "r", State: "revoked", RevokedAt: at.Add(time.Hour)}
	pending := record.KeyInfo{KID: "p", State: "pending", CreatedAt: at, ActivatesAt: at.Add(48 * time.Hour)}
	for _, tt := range []struct {
		name string
		keys []record.KeyInfo
		want time.Time
	}{
		{"active then revoked", []record.KeyInfo{active, revoked}, at.Add(rotation)},
		{"active, pending, revoked", []record.KeyInfo{active, pending, revoked}, pending.ActivatesAt},
	} {
		m := metrics.NewRegistry()
		r := &storeReadings{log: slog.New(slog.NewTextHandler(io.Discard, nil)), rotation: rotation,
			nullifiers:     func(context.Context) (int, error) { return 0, nil },
			keys:           func(context.Context) ([]record.KeyInfo, error) { return tt.keys, nil },
			nullifierCount: m.NewGauge("nullifiers", "n"),
			nextRotation:   m.NewGauge("next_rotation", "n"),
		}
		r.read(t.Context())
		var b strings.Builder
		m.WriteTo(&b)
		if want := "next_rotation " + strconv.FormatFloat(float64(tt.want.Unix()), 'g', -1, 64) + "\n"; !strings.Contains(b.String(), want) {
			t.Errorf("%s: want %q in\n%s", tt.name, want, b.String())
		}
	}
}

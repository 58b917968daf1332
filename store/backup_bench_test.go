package store

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"worldid/backup"
)

// BenchmarkBackup100k measures a backup (Export into backup.Writer) and a
// restore of a store of 100,000 nullifiers, and how long Export holds the
// read lock (the pause writers see).
func BenchmarkBackup100k(b *testing.B) {
	const n = 100_000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := func(emit backup.Emit) error {
		for i := range n {
			if err := emit(backup.TableNullifiers, backup.Nullifier{RPID: "rp_0123456789abcdef", Environment: "production",
				Action: "vote", Nullifier: fmt.Sprintf("0x%064x", i), CreatedAt: t0, Count: 1}); err != nil {
				return err
			}
		}
		return nil
	}
	dir := b.TempDir()
	if err := Restore(dir, false, rows, nil); err != nil {
		b.Fatal(err)
	}
	db := mustOpen(b, dir, Options{})
	defer db.Close()
	b.Run("export", func(b *testing.B) {
		for b.Loop() {
			w, _ := backup.NewWriter(io.Discard, "json", t0)
			if err := db.Export(context.Background(), w.Row); err != nil {
				b.Fatal(err)
			}
			w.Close()
		}
	})
	b.Run("copy-under-lock", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.Copy(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restore", func(b *testing.B) {
		for b.Loop() {
			if err := Restore(b.TempDir(), false, rows, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"worldid/record"
	"worldid/store/engine"
	"worldid/store/storetest"
)

var _ storetest.OIDCBackend = (*DB)(nil)

func TestOIDCConformance(t *testing.T) {
	storetest.RunOIDC(t, func(t *testing.T) (storetest.OIDCBackend, func() storetest.OIDCBackend) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		reopen := func() storetest.OIDCBackend {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			return db
		}
		return db, reopen
	})
}

// TestScanMarksInMemory: scan marks cost no journal write, are bounded,
// and a restart forgets them.
func TestScanMarksInMemory(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	ctx := context.Background()
	lsn := func() (n uint64) {
		db.View(func(tx *engine.ReadTx) error { n = tx.LSN(); return nil })
		return n
	}
	before := lsn()
	exp := time.Date(2025, 6, 1, 12, 11, 0, 0, time.UTC)
	for i := range maxScanMarks + 10 {
		if err := db.MarkScanned(ctx, fmt.Sprintf("%064x", i), exp); err != nil {
			t.Fatal(err)
		}
	}
	if after := lsn(); after != before {
		t.Fatalf("%d journal writes for scan marks", after-before)
	}
	if n := len(db.scans.m); n != maxScanMarks {
		t.Fatalf("%d scan marks held, bound %d", n, maxScanMarks)
	}
	last := fmt.Sprintf("%064x", maxScanMarks+9)
	if p, err := db.SigninProgress(ctx, last); err != nil || p.State != record.SigninScanned {
		t.Fatalf("the newest mark: %+v, %v", p, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	if _, err := db.SigninProgress(ctx, last); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a mark survived a restart: %v", err)
	}
}

package postgres

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestSharedFiles(t *testing.T) {
	db, reopen := openFresh(t)
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	if _, ok, err := db.SharedFile(ctx, "k"); ok || err != nil {
		t.Fatalf("fresh store: ok=%v err=%v", ok, err)
	}
	first := []byte("first\x00content")
	if got, err := db.StoreSharedFile(ctx, "k", first, now); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("store: %q, %v", got, err)
	}
	// A later store keeps the first content and returns it.
	if got, err := db.StoreSharedFile(ctx, "k", []byte("second"), now); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("second store: %q, %v", got, err)
	}
	db = reopen()
	if got, ok, err := db.SharedFile(ctx, "k"); !ok || err != nil || !bytes.Equal(got, first) {
		t.Fatalf("after reopen: %q, %v, %v", got, ok, err)
	}
	if got, err := db.StoreSharedFile(ctx, "empty", nil, now); err != nil || len(got) != 0 {
		t.Fatalf("empty file: %q, %v", got, err)
	}
}

// TestSharedFilesConcurrent: replicas storing different content at once
// all get the same stored content back.
func TestSharedFilesConcurrent(t *testing.T) {
	db, _ := openFresh(t)
	const n = 8
	got := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if got[i], err = db.StoreSharedFile(context.Background(), "race", fmt.Appendf(nil, "replica %d", i), time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range got {
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("replica %d got %q, replica 0 got %q", i, got[i], got[0])
		}
	}
}

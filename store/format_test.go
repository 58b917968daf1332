package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"worldid/backup"
	"worldid/record"
	"worldid/store/engine"
)

// hash is the canonical spelling of a small commitment or nullifier.
func hash(i int) string { return fmt.Sprintf("0x%064x", i) }

// TestOpensFormat1DataDir opens the files an earlier version wrote
// (testdata/format1: leaves 0xa1, 0xa2 in orb/production and 0xb1 in
// orb/production/extra at 10:00:00.123, nullifier 1 of "vote" verified
// twice and 2 of `other "action"` in staging once; compacted; then leaf
// 0xa3 and nullifier 3 of "vote" an hour later, in the journal): every
// row reads back, the next writes see them, the snapshot is rewritten in
// the current format with the rows packed, and it reopens the same.
func TestOpensFormat1DataDir(t *testing.T) {
	ctx := context.Background()
	dir := copyDataDir(t, "format1")
	at := time.Date(2026, 11, 27, 10, 0, 0, 123000000, time.UTC)
	wantLeaves := map[string][]record.Leaf{
		"orb/production": {{Index: 0, Commitment: hash(0xa1), At: at}, {Index: 1, Commitment: hash(0xa2), At: at},
			{Index: 2, Commitment: hash(0xa3), At: at.Add(time.Hour)}},
		"orb/production/extra": {{Index: 0, Commitment: hash(0xb1), At: at}},
	}
	db := mustOpen(t, dir, Options{})
	checkLeaves(t, db, wantLeaves)
	v, err := db.RecordVerification(ctx, "rp_0123456789abcdef", "vote", "production", hash(1), at.Add(2*time.Hour))
	if err != nil || v.Count != 3 || !v.CreatedAt.Equal(at) {
		t.Fatalf("nullifier 1 again: %+v, %v; want count 3 from %v", v, err, at)
	}
	if n, err := db.NullifierCount(ctx); err != nil || n != 3 {
		t.Fatalf("NullifierCount = %d, %v; want 3", n, err)
	}
	if _, err := db.AppendLeaf(ctx, "orb/production", hash(0xa2), at); err == nil {
		t.Fatal("a commitment of the old file was appended again")
	}
	checkLeafIndexRows(t, db, 0)
	db.Close()
	snap, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil || !bytes.Contains(snap, []byte(`"format": "worldid-store/2"`)) || !bytes.Contains(snap, []byte(`"leaves": {"codec":"leaf/2"`)) {
		t.Fatalf("the snapshot was not rewritten with packed leaves (%v):\n%.600s", err, snap)
	}
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	checkLeaves(t, db, wantLeaves)
	var nullifiers []backup.Nullifier
	if err := db.Export(ctx, func(table string, row any) error {
		if n, ok := row.(backup.Nullifier); ok {
			nullifiers = append(nullifiers, n)
		}
		return nil
	}); err != nil || len(nullifiers) != 3 || nullifiers[2].Action != `other "action"` || nullifiers[1].Count != 1 || nullifiers[0].Count != 3 {
		t.Fatalf("exported nullifiers %+v, %v", nullifiers, err)
	}
}

// copyDataDir copies the data dir testdata/name to a new directory.
func copyDataDir(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, file := range []string{"state.json", "journal.jsonl", "store.mark"} {
		b, err := os.ReadFile(filepath.Join("testdata", name, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDropsLeafIndexRows opens the files of a version that kept a
// leaf_index row for every leaf (testdata/format2-leafindex: in
// orb/production leaves 0xa1, 0xa2 and "c1", which the leaf codec does
// not pack, at 10:00:00.123, and 0xa1 in orb/production/extra; compacted;
// then 0xa3 in orb/production an hour later, in the journal). The rows of
// packed leaves are dropped, from memory and from the rewritten snapshot;
// the one of "c1" stays; every commitment is still refused in its tree;
// the leaves' codec is renamed leaf/2, which earlier builds refuse.
func TestDropsLeafIndexRows(t *testing.T) {
	ctx := context.Background()
	dir := copyDataDir(t, "format2-leafindex")
	at := time.Date(2026, 11, 28, 10, 0, 0, 123000000, time.UTC)
	wantLeaves := map[string][]record.Leaf{
		"orb/production": {{Index: 0, Commitment: hash(0xa1), At: at}, {Index: 1, Commitment: hash(0xa2), At: at},
			{Index: 2, Commitment: "c1", At: at}, {Index: 3, Commitment: hash(0xa3), At: at.Add(time.Hour)}},
		"orb/production/extra": {{Index: 0, Commitment: hash(0xa1), At: at}},
	}
	for range 2 { // as found, then as rewritten
		db := mustOpen(t, dir, Options{})
		checkLeaves(t, db, wantLeaves)
		checkLeafIndexRows(t, db, 1)
		for tree, leaves := range wantLeaves {
			for _, l := range leaves {
				if _, err := db.AppendLeaf(ctx, tree, l.Commitment, at); !errors.Is(err, record.ErrExists) {
					t.Fatalf("%s appended to %s again: %v", l.Commitment, tree, err)
				}
			}
		}
		db.Close()
		snap, err := os.ReadFile(filepath.Join(dir, "state.json"))
		if err != nil || bytes.Contains(snap, []byte(`"leaf-index/1"`)) || !bytes.Contains(snap, []byte(`"leaves": {"codec":"leaf/2"`)) || !bytes.Contains(snap, []byte(`"orb/production/c1": 2`)) {
			t.Fatalf("the snapshot still holds the packed leaves' leaf_index rows, or lost c1's (%v):\n%.900s", err, snap)
		}
	}
}

// checkLeafIndexRows asserts that the leaf_index table holds n rows.
func checkLeafIndexRows(t *testing.T, db *DB, n int) {
	t.Helper()
	db.View(func(tx *engine.ReadTx) error {
		if got := tx.Count(tableLeafIndex); got != n {
			t.Errorf("%d leaf_index rows, want %d", got, n)
		}
		return nil
	})
}

func checkLeaves(t *testing.T, db *DB, want map[string][]record.Leaf) {
	t.Helper()
	for tree, leaves := range want {
		got, err := db.Leaves(context.Background(), tree, 0)
		if err != nil || len(got) != len(leaves) {
			t.Fatalf("Leaves(%s) = %+v, %v; want %+v", tree, got, err, leaves)
		}
		for i := range leaves {
			if got[i].Index != leaves[i].Index || got[i].Commitment != leaves[i].Commitment || !got[i].At.Equal(leaves[i].At) {
				t.Fatalf("Leaves(%s)[%d] = %+v, want %+v", tree, i, got[i], leaves[i])
			}
		}
		if tail, err := db.Leaves(context.Background(), tree, 1); err != nil || len(tail) != len(leaves)-1 {
			t.Fatalf("Leaves(%s, from 1) = %+v, %v", tree, tail, err)
		}
	}
}

// The rows the domain methods write for leaves and nullifiers are kept as
// packed records, not as JSON strings, and a packed leaf needs no
// leaf_index row.
func TestDomainRowsArePacked(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	at := time.Date(2026, 11, 28, 0, 0, 0, 1, time.UTC)
	if _, err := db.AppendLeaves(ctx, "orb/production", []string{hash(1), hash(2)}, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordVerification(ctx, "rp_1", "act", "production", hash(3), at); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	db.View(func(tx *engine.ReadTx) error {
		for table, group := range map[string]string{tableLeaves: "orb/production/", tableNullifiers: `["rp_1","production","act",`} {
			tx.Records(table, group, func([]byte) { counts[table]++ })
		}
		counts[tableLeafIndex] = tx.Count(tableLeafIndex)
		return nil
	})
	if counts[tableLeaves] != 2 || counts[tableLeafIndex] != 0 || counts[tableNullifiers] != 1 {
		t.Fatalf("packed records %v, want 2 leaves, 1 nullifier and no leaf_index rows (the engine finds a leaf by its commitment)", counts)
	}
}

package server

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"worldid/store"
	"worldid/store/engine"
)

// startedDataDir returns a data dir whose first start completed, with the
// store holding writes acknowledged after it, stopped.
func startedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, rec, err := openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := markFirstStartDone(dir, rec); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"n1", "n2", "n3"} {
		if err := db.Update(context.Background(), func(tx *engine.Tx) error { return tx.Insert("nullifiers", k, 1) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	m, found, err := newFirstStartRecord(dir).Load()
	if err != nil || !found || m.LSN != 3 || m.ID == "" {
		t.Fatalf("%s after a clean shutdown: %+v %v %v", FirstStartFile, m, found, err)
	}
	return dir
}

func removeAll(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// A data dir whose first start completed never starts with its store's
// files deleted together with store.mark: the refusal names the record
// and the recovery command, and -accept-data-loss starts it, logged.
func TestDeletedStoreRefused(t *testing.T) {
	for name, files := range map[string][]string{
		"journal and mark":   {"journal.jsonl", "store.mark"},
		"all files and mark": {"state.json", "journal.jsonl", "store.mark"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := startedDataDir(t)
			removeAll(t, dir, files...)
			_, _, err := openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler))
			if !errors.Is(err, store.ErrDataLoss) {
				t.Fatalf("start: %v, want ErrDataLoss", err)
			}
			wantIn(t, err.Error(), filepath.Join(dir, FirstStartFile), "missing", "lsn 3", "-accept-data-loss", "worldid restore")

			var log strings.Builder
			db, _, err := openJSONStore(t.Context(), Config{DataDir: dir, AcceptDataLoss: true}, slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatalf("start with -accept-data-loss: %v", err)
			}
			db.Close()
			wantIn(t, log.String(), "level=WARN", "continuing without data", FirstStartFile)
			db, _, err = openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatalf("the start after the accepted loss: %v", err)
			}
			db.Close()
		})
	}
}

// A fresh data dir starts, and so does one whose first start did not
// finish (its record is written only when it does) or a record from
// before the witness, which then gets one.
func TestFirstStartRecordAdopted(t *testing.T) {
	dir := t.TempDir()
	db, _, err := openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("fresh data dir: %v", err)
	}
	db.Close()
	if done, _ := firstStartDone(dir); done {
		t.Fatal("the store wrote the first-start record before the first start finished")
	}
	removeAll(t, dir, "state.json", "journal.jsonl", "store.mark")
	if err := os.WriteFile(filepath.Join(dir, FirstStartFile), []byte(firstStartLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, _, err = openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("a record from before the witness: %v", err)
	}
	db.Close()
	if m, found, err := newFirstStartRecord(dir).Load(); err != nil || !found || m.ID == "" {
		t.Fatalf("the old record was not upgraded: %+v %v %v", m, found, err)
	}
}

func TestParseFirstStartRecord(t *testing.T) {
	for _, c := range []struct {
		in        string
		m         store.Mark
		found, ok bool
	}{
		{firstStartLine + "\nstore-id ab01\nacknowledged-lsn 42\n", store.Mark{ID: "ab01", LSN: 42}, true, true},
		{firstStartLine + "\n", store.Mark{}, false, true},
		{firstStartLine + "\nstore-id ab01\n", store.Mark{}, false, false},
		{firstStartLine + "\nstore-id ab01\nacknowledged-lsn -1\n", store.Mark{}, false, false},
		{firstStartLine + "\nstore-id \nacknowledged-lsn 1\n", store.Mark{}, false, false},
		{"something else\n", store.Mark{}, false, false},
	} {
		m, found, ok := parseFirstStartRecord(c.in)
		if m != c.m || found != c.found || ok != c.ok {
			t.Errorf("parseFirstStartRecord(%q) = %+v %v %v, want %+v %v %v", c.in, m, found, ok, c.m, c.found, c.ok)
		}
	}
}

// A damaged record stops the start until the loss is accepted.
func TestDamagedFirstStartRecord(t *testing.T) {
	dir := startedDataDir(t)
	if err := os.WriteFile(filepath.Join(dir, FirstStartFile), []byte(firstStartLine+"\nstore-id x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler)); !errors.Is(err, store.ErrDataLoss) {
		t.Fatalf("start with a damaged record: %v, want ErrDataLoss", err)
	}
}

func wantIn(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q lacks %q", s, p)
		}
	}
}

// A restore replaces the store: the record forgets the old one's identity
// and LSN, and the restored store starts and gets recorded.
func TestRestoreForgetsStoreRecord(t *testing.T) {
	dir := startedDataDir(t)
	removeAll(t, dir, "state.json", "journal.jsonl", "store.mark") // as a restore's new store would replace them
	if err := forgetStoreRecord(dir); err != nil {
		t.Fatal(err)
	}
	db, _, err := openJSONStore(t.Context(), Config{DataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("start after the restore: %v", err)
	}
	db.Close()
	if m, found, err := newFirstStartRecord(dir).Load(); err != nil || !found || m.LSN != 0 {
		t.Fatalf("record after the restore: %+v %v %v", m, found, err)
	}
}

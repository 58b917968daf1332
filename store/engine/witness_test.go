package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// memWitness is a Witness in memory, as another directory or file would
// keep it.
type memWitness struct {
	mu      sync.Mutex
	m       Mark
	found   bool
	loadErr error
}

func (w *memWitness) Load() (Mark, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m, w.found, w.loadErr
}

func (w *memWitness) Save(m Mark) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m, w.found = m, true
	return nil
}

func (w *memWitness) String() string { return "the witness" }

func (w *memWitness) mark() Mark {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m
}

// witnessedStore returns a stopped store with writes up to lsn 3 in its
// journal, and its witness.
func witnessedStore(t *testing.T) (string, *memWitness) {
	t.Helper()
	dir, w := t.TempDir(), &memWitness{}
	db := mustOpen(t, dir, Options{Witness: w})
	for i := range 3 {
		put(t, db, "nullifiers", fmt.Sprint(i), i)
	}
	db.Close()
	if m := w.mark(); m.LSN != 3 || len(m.ID) != 2*idBytes {
		t.Fatalf("witness after a clean shutdown: %+v, want lsn 3 and an identity", m)
	}
	return dir, w
}

// Deleting the store's files together with the mark is what the mark alone
// cannot see; the witness can, and an accepted loss is logged and
// recorded.
func TestWitnessRefusesDeletedFiles(t *testing.T) {
	for name, files := range map[string][]string{
		"journal and mark":   {journalName, markName},
		"all files and mark": {snapshotName, journalName, markName},
	} {
		t.Run(name, func(t *testing.T) {
			dir, w := witnessedStore(t)
			for _, f := range files {
				if err := os.Remove(dir + "/" + f); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Open(dir, Options{Witness: w})
			if !errors.Is(err, ErrDataLoss) {
				t.Fatalf("Open: %v, want ErrDataLoss", err)
			}
			wantErrContains(t, err, "missing", "the witness", "lsn 3")

			log, buf := testLogger()
			db := mustOpen(t, dir, Options{Witness: w, AcceptLoss: true, Log: log})
			db.Close()
			if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "the witness") {
				t.Errorf("the accepted loss is not logged: %s", buf)
			}
			if m := w.mark(); m.LSN != 0 {
				t.Errorf("witness after the accepted loss: %+v, want lsn 0", m)
			}
			mustOpen(t, dir, Options{Witness: w}).Close() // accepted once
		})
	}
}

// Without the witness, the deleted journal and mark go unnoticed: what the
// witness adds.
func TestWithoutWitnessDeletedMarkGoesUnnoticed(t *testing.T) {
	dir, _ := witnessedStore(t)
	for _, f := range []string{journalName, markName} {
		if err := os.Remove(dir + "/" + f); err != nil {
			t.Fatal(err)
		}
	}
	db := mustOpen(t, dir, Options{})
	defer db.Close()
	checkState(t, db, map[string]map[string]string{})
}

// An older journal with its own older mark is caught by the witness.
func TestWitnessRefusesOlderCopy(t *testing.T) {
	dir, w := t.TempDir(), &memWitness{}
	db := mustOpen(t, dir, Options{Witness: w})
	put(t, db, "t", "a", 1)
	db.Close()
	older := copyStore(t, dir) // lsn 1, with a mark of lsn 1
	db = mustOpen(t, dir, Options{Witness: w})
	put(t, db, "t", "b", 2)
	db.Close()
	_, err := Open(older, Options{Witness: w})
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("Open of an older copy: %v, want ErrDataLoss", err)
	}
	wantErrContains(t, err, "end at lsn 1", "the witness says lsn 2")
}

// Another store's files, mark included, are refused by identity even when
// they hold more.
func TestWitnessRefusesAnotherStore(t *testing.T) {
	dir, w := witnessedStore(t)
	other, _ := witnessedStore(t)
	db := mustOpen(t, other, Options{})
	put(t, db, "t", "more", 4)
	db.Close()
	for _, name := range []string{snapshotName, journalName, markName} {
		writeFile(t, dir+"/"+name, readFile(t, other+"/"+name))
	}
	_, err := Open(dir, Options{Witness: w})
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("Open of another store's files: %v, want ErrDataLoss", err)
	}
	wantErrContains(t, err, "another store's", w.mark().ID)
}

// A new store, a store from before identities and a store from before the
// witness open and get both records; the witness follows the mark.
func TestWitnessCreatedAndFollowsMark(t *testing.T) {
	dir, w := t.TempDir(), &memWitness{}
	db := mustOpen(t, dir, Options{Witness: w, markEvery: 10 * time.Millisecond, Rand: bytes.NewReader(bytes.Repeat([]byte{7}, idBytes))})
	if m := w.mark(); m != (Mark{ID: strings.Repeat("07", idBytes), LSN: 0}) {
		t.Fatalf("witness of a new store: %+v", m)
	}
	put(t, db, "t", "a", 1)
	eventually(t, 5*time.Second, "the witness to follow the mark", func() bool { return w.mark().LSN == 1 })
	db.Close()

	// A mark without identity, and no witness yet: both get the identity.
	writeFile(t, markPath(dir), encodeMark(Mark{LSN: 1}))
	w2 := &memWitness{}
	mustOpen(t, dir, Options{Witness: w2}).Close()
	m, _, err := loadMark(markPath(dir))
	if err != nil || m.ID == "" || w2.mark() != m {
		t.Fatalf("upgraded mark %+v (%v), witness %+v", m, err, w2.mark())
	}
}

// A damaged witness stops Open until the loss is accepted; an unreadable
// one stops it regardless.
func TestWitnessDamaged(t *testing.T) {
	dir, w := witnessedStore(t)
	w.loadErr = fmt.Errorf("does not parse: %w", ErrDataLoss)
	_, err := Open(dir, Options{Witness: w})
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("Open with a damaged witness: %v, want ErrDataLoss", err)
	}
	mustOpen(t, dir, Options{Witness: w, AcceptLoss: true, Log: slog.New(slog.DiscardHandler)}).Close()
	w.loadErr = os.ErrPermission
	if _, err := Open(dir, Options{Witness: w, AcceptLoss: true}); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Open with an unreadable witness: %v, want the error", err)
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Whole-state copies, for backups and restores: a copy of an open store's
// durable state, the state of a stopped store's files, and a new store
// written from a state built elsewhere.

// ErrNotEmpty: a restore target already holds data.
var ErrNotEmpty = errors.New("the target store is not empty")

// Copy returns a copy of the durable state: exactly the writes acknowledged
// before it began. Writers wait while the tables are copied.
func (db *DB) Copy() (st State, err error) {
	err = db.View(func(tx *ReadTx) error {
		st = tx.base.clone()
		return nil
	})
	return st, err
}

// ReadDir returns the state of the store in dir without opening it: it
// takes the directory's lock (so no server may be running on it), reads the
// snapshot and the journal, and changes no file (Open would compact). Files
// that hold less than the mark says was acknowledged are an error wrapping
// ErrDataLoss, as in Open: a copy must not carry a silent reset along.
// codecs are the tables' codecs, as in Options.Codecs.
func ReadDir(dir string, codecs map[string]Codec) (State, error) {
	if _, err := os.Stat(filepath.Join(dir, snapshotName)); err != nil {
		return State{}, fmt.Errorf("store: %s holds no JSON store: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return State{}, err
	}
	defer lock.Close()
	st, _, err := recoverState(dir, codecs)
	return st, err
}

// WriteDir makes the state that fill builds the store of dir, which must
// hold no store (or force must be set: then the store there is replaced),
// under the directory's lock. fill gets an empty State; an error it returns
// stops WriteDir before anything is written. The new snapshot (LSN 0, no
// journal) is written to a temporary file first; only a complete snapshot
// replaces the old state (rename), so a failed write leaves dir as it was.
// codecs are the tables' codecs, as in Options.Codecs.
func WriteDir(dir string, force bool, codecs map[string]Codec, fill func(State) error) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	if !force {
		_, n, err := recoverState(dir, codecs)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("store: %s holds %d records: %w", dir, n, ErrNotEmpty)
		}
	}
	st := newState(codecs)
	if err := fill(st); err != nil {
		return err
	}
	return replaceState(dir, st)
}

// replaceState writes st as the snapshot of dir at LSN 0 and removes the
// journal; the caller holds the lock.
func replaceState(dir string, st State) error {
	path := filepath.Join(dir, snapshotName)
	f, err := os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := errors.Join(writeSnapshot(f, 0, st), f.Sync(), f.Close()); err != nil {
		os.Remove(path + ".tmp")
		return fmt.Errorf("store: write snapshot: %w", err)
	}
	// The journal goes first: its LSNs would continue the old snapshot's.
	// Until the new mark is written a crash leaves a store Open refuses
	// (the old mark names a journal that is gone).
	if err := os.Remove(filepath.Join(dir, journalName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: %w", err)
	}
	if err := (&DB{dir: dir, openFile: openOSFile}).writeMark(0); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return syncDir(dir)
}

// recoverState reads the state and record count of the store in dir as
// Open would recover them, without changing anything; files that hold less
// than the mark says was acknowledged are an error wrapping ErrDataLoss.
func recoverState(dir string, codecs map[string]Codec) (State, int, error) {
	markPath := filepath.Join(dir, markName)
	mark, marked, err := loadMark(markPath)
	if err != nil {
		return State{}, 0, err
	}
	snap, _, err := loadSnapshot(context.Background(), filepath.Join(dir, snapshotName), codecs)
	if err != nil {
		return State{}, 0, err
	}
	n := snap.records
	last := snap.lsn
	path := filepath.Join(dir, journalName)
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return State{}, 0, fmt.Errorf("store: %w", err)
	default:
		defer f.Close()
		rep, err := replayJournal(context.Background(), f, path, snap.lsn, func(e entry) {
			for _, c := range e.Changes {
				n += snap.tables.apply(c)
			}
		})
		if err != nil {
			return State{}, 0, err
		}
		last = rep.last
	}
	if marked && last < mark.LSN {
		return State{}, 0, fmt.Errorf("store: %s ends at lsn %d, but %s says lsn %d was acknowledged: %w", dir, last, markPath, mark.LSN, ErrDataLoss)
	}
	return snap.tables, n, nil
}

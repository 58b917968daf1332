package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Names of the store's files inside its directory.
const (
	snapshotName = "state.json"
	journalName  = "journal.jsonl"
	lockName     = "LOCK"
	markName     = "store.mark"
)

// file is the part of *os.File the store writes through; tests substitute a
// faulty one to exercise the failed state.
type file interface {
	Write(b []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// openOSFile opens name with mode 0600; it is Options.openFile's default.
func openOSFile(name string, flag int) (file, error) {
	f, err := os.OpenFile(name, flag, 0o600)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// syncDir makes renames and file creations in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// lockDir takes an exclusive flock on dir/LOCK, held until the returned file
// is closed (or the process dies). flock locks belong to the open file, so a
// second Open of the same directory fails even inside one process.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return f, nil
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("store: data directory %s is locked: another server (or another Open) is using it", dir)
	}
	return nil, fmt.Errorf("store: lock %s: %w", path, err)
}

package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"worldid/record"
)

// diskFile models a file's page cache and its disk as Linux keeps them
// after a failed writeback (the "fsyncgate" case): the real file is the
// page cache, what a process reads, and disk is what a crash of the machine
// would leave. A failed Sync returns EIO and drops the ranges written since
// the last Sync without writing them (the kernel marks the pages clean), so
// a later Sync that succeeds does not write them either; the file's size
// still reaches the disk, with zeros where they were.
type diskFile struct {
	file
	mu        sync.Mutex
	size      int64  // in the page cache
	disk      []byte // on the disk
	dirty     []span // written since the last Sync
	failSyncs int    // how many of the next Syncs fail with EIO
}

// span is data written at an offset.
type span struct {
	off  int64
	data []byte
}

func (f *diskFile) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.file.Write(b) // the journal is opened O_APPEND: at the end
	f.dirty = append(f.dirty, span{f.size, bytes.Clone(b[:n])})
	f.size += int64(n)
	return n, err
}

func (f *diskFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.file.Truncate(size); err != nil {
		return err
	}
	f.size = size
	return nil
}

func (f *diskFile) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dirty := f.dirty
	f.dirty = nil
	if f.failSyncs > 0 {
		f.failSyncs--
		return syscall.EIO
	}
	disk := make([]byte, f.size)
	copy(disk, f.disk)
	for _, s := range dirty {
		if s.off < f.size {
			copy(disk[s.off:], s.data)
		}
	}
	f.disk = disk
	return f.file.Sync()
}

func (f *diskFile) set(fn func(f *diskFile)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// onDisk returns what a crash of the machine would leave of the journal.
func (f *diskFile) onDisk() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.disk)
}

// openOnDisk opens dir with its journal behind a diskFile.
func openOnDisk(t *testing.T, dir string, opts Options) (*DB, *diskFile) {
	t.Helper()
	var journal *diskFile
	opts.openFile = func(name string, flag int) (file, error) {
		f, err := openOSFile(name, flag)
		if err != nil || filepath.Base(name) != journalName {
			return f, err
		}
		disk, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		journal = &diskFile{file: f, disk: disk, size: int64(len(disk))}
		return journal, nil
	}
	opts.Log = slog.New(slog.DiscardHandler)
	return mustOpen(t, dir, opts), journal
}

// crashImage returns a copy of dir as a crash would leave it: of the
// machine (journal as on the disk), or of the process only (journal as in
// the page cache). The snapshot and the mark are written through real
// files that do not fail.
func crashImage(t *testing.T, dir string, journal []byte) string {
	t.Helper()
	out := copyStore(t, dir)
	writeFile(t, journalPath(out), journal)
	return out
}

// recovered opens a copy of the store as a restart would and returns its
// state.
func recovered(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	db := mustOpen(t, dir, Options{Log: slog.New(slog.DiscardHandler)})
	defer db.Close()
	return dump(t, db)
}

// The model itself: a Sync that succeeds after a failed one leaves a hole
// where the failed write was, while the page cache still shows it, which
// is why a store that merely retried the fsync would acknowledge a write
// the disk does not hold.
func TestDiskFileModelsFsyncgate(t *testing.T) {
	dir := t.TempDir()
	f, err := openOSFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := &diskFile{file: f}
	d.Write([]byte("acked\n"))
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.set(func(d *diskFile) { d.failSyncs = 1 })
	d.Write([]byte("lost\n"))
	if err := d.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync: %v, want EIO", err)
	}
	if err := d.Sync(); err != nil {
		t.Fatalf("the retried Sync: %v", err)
	}
	if got := string(readFile(t, filepath.Join(dir, "f"))); got != "acked\nlost\n" {
		t.Fatalf("page cache %q", got)
	}
	if got := string(d.onDisk()); got != "acked\n\x00\x00\x00\x00\x00" {
		t.Fatalf("disk %q, want the lost write as a hole", got)
	}
}

// A write whose fsync fails with EIO is not acknowledged, and nothing of it
// survives: not in the page cache, which a restart of the process reads
// (the store cuts it at once, before its repair), and not on the disk,
// which a crash of the machine leaves.
func TestFsyncEIONotAcknowledged(t *testing.T) {
	dir := t.TempDir()
	db, journal := openOnDisk(t, dir, Options{repairAfter: time.Hour})
	ctx := context.Background()
	put(t, db, "nullifiers", "acked", 1)
	acked := map[string]map[string]string{"nullifiers": {"acked": "1"}}
	cut := int64(len(readFile(t, journalPath(dir))))
	journal.set(func(f *diskFile) { f.failSyncs = 1 })
	err := db.Update(ctx, func(tx *Tx) error { return tx.Insert("nullifiers", "failed", 2) })
	if !errors.Is(err, record.ErrUnavailable) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Update whose fsync failed: %v, want ErrUnavailable wrapping EIO", err)
	}
	if err := db.Health(ctx); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("Health after EIO: %v", err)
	}
	eventually(t, 5*time.Second, "the journal cut back to its acknowledged lines", func() bool {
		fi, err := os.Stat(journalPath(dir))
		return err == nil && fi.Size() == cut
	})
	sameState(t, "a restart of the process", recovered(t, crashImage(t, dir, readFile(t, journalPath(dir)))), acked)
	sameState(t, "a crash of the machine", recovered(t, crashImage(t, dir, journal.onDisk())), acked)
	sameState(t, "reads", dump(t, db), acked)
	db.Close() // before any repair
	sameState(t, "a restart after Close", recovered(t, dir), acked)
}

// After the failed fsync the store does not trust the page cache: the
// fsyncs that follow succeed, yet the failed write is not on the disk; the
// repair rewrites the files from the acknowledged state, so that disk and
// page cache agree and hold exactly the acknowledged writes, and so does a
// restart.
func TestRepairAfterFsyncEIO(t *testing.T) {
	dir := t.TempDir()
	db, journal := openOnDisk(t, dir, Options{repairAfter: time.Millisecond})
	ctx := context.Background()
	put(t, db, "nullifiers", "a", 1)
	journal.set(func(f *diskFile) { f.failSyncs = 1 })
	if err := db.Update(ctx, func(tx *Tx) error { return tx.Insert("nullifiers", "failed", 2) }); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Update whose fsync failed: %v, want EIO", err)
	}
	eventually(t, 10*time.Second, "the repair", func() bool { return db.Health(ctx) == nil })
	if err := db.Update(ctx, func(tx *Tx) error { return tx.Insert("nullifiers", "failed", 2) }); err != nil {
		t.Fatalf("the failed write, again after the repair: %v (it was not acknowledged, so it is new)", err)
	}
	put(t, db, "nullifiers", "b", 3)
	acked := map[string]map[string]string{"nullifiers": {"a": "1", "failed": "2", "b": "3"}}
	if page, disk := readFile(t, journalPath(dir)), journal.onDisk(); !bytes.Equal(page, disk) {
		t.Fatalf("journal after the repair: page cache %q, disk %q", page, disk)
	}
	sameState(t, "a crash of the machine", recovered(t, crashImage(t, dir, journal.onDisk())), acked)
	sameState(t, "reads", dump(t, db), acked)
	db.Close()
	sameState(t, "a restart", recovered(t, dir), acked)
}

// A journal holding only a torn line is compacted at Open: the next line
// would otherwise be appended to the torn one and lost with it.
func TestTornLineAloneIsRemoved(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "t", "a", 1)
	db.Close()
	mustOpen(t, dir, Options{}).Close() // the snapshot holds lsn 1; the journal is empty
	writeFile(t, journalPath(dir), []byte(`{"lsn":2,"ops":[{"op":"put"`))
	db = mustOpen(t, dir, Options{Log: slog.New(slog.DiscardHandler)})
	put(t, db, "t", "b", 2)
	db.Close()
	sameState(t, "after the restart", recovered(t, dir), map[string]map[string]string{"t": {"a": "1", "b": "2"}})
}

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"worldid/record"
)

// commitLoop is the committer: it writes every queued line with one write
// and one fsync (group commit), publishes the result, and compacts when the
// journal has grown past the threshold. It exits on Close or on the first
// write error.
func (db *DB) commitLoop() {
	defer close(db.done)
	var buf []byte
	for {
		batches := db.takeQueue()
		if batches == nil {
			return
		}
		buf = buf[:0]
		for _, b := range batches {
			buf = append(buf, b.line...)
		}
		if err := db.appendJournal(buf); err != nil {
			db.fail(err)
			return
		}
		db.journalLines += len(batches)
		db.publish(batches)
		if db.journalLines >= max(db.compactAfter, db.records) {
			if err := db.compact(); err != nil {
				db.fail(err)
				return
			}
		}
	}
}

// takeQueue waits for queued batches; nil means the store is closing and
// the queue is empty.
func (db *DB) takeQueue() []*batch {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	for len(db.queue) == 0 && !db.stopping {
		db.queued.Wait()
	}
	// The writers the previous fsync released are runnable and about to
	// queue again: yield while the queue grows, so that they share this
	// fsync instead of waiting for the next. Each writer has at most one
	// batch queued, so this ends after at most one round per writer.
	for n := 0; n != len(db.queue); {
		n = len(db.queue)
		db.qmu.Unlock()
		runtime.Gosched()
		db.qmu.Lock()
	}
	batches := db.queue
	db.queue = nil
	return batches
}

func (db *DB) appendJournal(buf []byte) error {
	if _, err := db.journal.Write(buf); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	if err := db.journal.Sync(); err != nil {
		return fmt.Errorf("fsync journal: %w", err)
	}
	return nil
}

// publish applies durable batches to base, drops them from the overlay and
// wakes their Updates. base changes before durable advances, so an Update
// that returned is visible to every later View.
func (db *DB) publish(batches []*batch) {
	db.mu.Lock()
	for _, b := range batches {
		for _, c := range b.changes {
			db.records += db.base.apply(c)
			db.dropPending(c.Table, c.Key, b.lsn)
		}
	}
	db.mu.Unlock()
	db.qmu.Lock()
	db.durable = batches[len(batches)-1].lsn
	db.synced.Broadcast()
	db.qmu.Unlock()
}

// dropPending removes the overlay entry of table/key unless a later batch
// has replaced it. The caller holds mu.
func (db *DB) dropPending(table, key string, lsn uint64) {
	rows := db.overlay[table]
	if p, ok := rows[key]; ok && p.lsn <= lsn {
		delete(rows, key)
		if len(rows) == 0 {
			delete(db.overlay, table)
		}
	}
}

// fail puts the store in the failed state: the file state after a failed
// write or fsync is unknown, so no later write may be acknowledged.
func (db *DB) fail(err error) {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	db.failure = fmt.Errorf("store: writes disabled after a storage error: %w: %w", record.ErrUnavailable, err)
	db.synced.Broadcast()
}

// compact writes base as the new snapshot and then empties the journal. It
// runs on the committer (or in Open before the committer starts), the only
// writer of base, so it reads base without mu: Views continue, and
// acknowledgements wait until it is done.
//
// Crash safety: the snapshot becomes visible by an atomic rename after its
// data and then the directory are fsynced; the journal is truncated only
// after that. A crash in between leaves journal lines the snapshot already
// holds, which replay skips by LSN.
func (db *DB) compact() error {
	if err := db.writeSnapshotFile(); err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	if err := db.journal.Truncate(0); err != nil {
		return fmt.Errorf("store: compact: truncate journal: %w", err)
	}
	if err := db.journal.Sync(); err != nil {
		return fmt.Errorf("store: compact: fsync journal: %w", err)
	}
	db.journalLines = 0
	return nil
}

// writeSnapshotFile makes base the durable snapshot: temporary file, fsync,
// rename, directory fsync.
func (db *DB) writeSnapshotFile() error {
	final := filepath.Join(db.dir, snapshotName)
	tmp := final + ".tmp"
	f, err := db.openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	if err := writeSnapshot(f, db.durable, db.base); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	return syncDir(db.dir)
}

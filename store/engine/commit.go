package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"worldid/record"
)

// run is the committer goroutine: it runs commitLoop and, after a storage
// error, disables writes and repairs the store, until Close.
func (db *DB) run() {
	defer close(db.done)
	defer func() {
		if db.markTimer != nil {
			db.markTimer.Stop()
		}
	}()
	for {
		err := db.commitLoop()
		if err == nil {
			// Closing: a clean shutdown leaves the mark at the newest LSN.
			if db.durable != db.marked {
				if err := db.writeMark(db.durable); err != nil {
					db.log.Error("store: closing", "dir", db.dir, "err", err)
				}
			}
			return
		}
		db.fail(err)
		db.dropUnacknowledged()
		if !db.repair() {
			return
		}
	}
}

// commitLoop writes every queued line with one write and one fsync (group
// commit), publishes the result, compacts when the journal has grown past
// the threshold, and keeps the mark at most markEvery behind. It returns
// nil on Close and the error of the first failed write.
func (db *DB) commitLoop() error {
	var buf []byte
	for {
		batches, markDue, stop := db.takeQueue()
		if stop {
			return nil
		}
		if markDue {
			db.markTimer = nil
		}
		if len(batches) > 0 {
			buf = buf[:0]
			for _, b := range batches {
				buf = append(buf, b.line...)
			}
			if err := db.appendJournal(buf); err != nil {
				return err
			}
			for _, b := range batches {
				db.journalChanges += len(b.changes)
			}
			db.released = len(batches)
			db.publish(batches)
			if db.journalChanges >= max(db.compactAfter, db.records) {
				if err := db.compact(); err != nil {
					return err
				}
			}
		}
		if err := db.markWhenDue(); err != nil {
			return err
		}
	}
}

// markWhenDue writes the mark if it is behind and the last one is
// markEvery old; otherwise it arms a timer that wakes the committer then,
// so that the mark also catches up when writes stop.
func (db *DB) markWhenDue() error {
	if db.durable == db.marked || db.markTimer != nil {
		return nil
	}
	if wait := db.markEvery - time.Since(db.lastMark); wait > 0 {
		db.markTimer = time.AfterFunc(wait, func() {
			db.qmu.Lock()
			db.markDue = true
			db.queued.Signal()
			db.qmu.Unlock()
		})
		return nil
	}
	return db.writeMark(db.durable)
}

// takeQueue waits for queued batches or a due mark. stop means the store
// is closing and the queue is empty.
func (db *DB) takeQueue() (batches []*batch, markDue, stop bool) {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	for len(db.queue) == 0 && !db.stopping && !db.markDue {
		db.queued.Wait()
	}
	if db.allPatient() {
		db.qmu.Unlock()
		runtime.Gosched()
		db.qmu.Lock()
	}
	// The writers the previous fsync released are runnable and about to
	// queue again: yield while the queue grows, so that they share this
	// fsync instead of waiting for the next. Each writer has at most one
	// batch queued, so this ends after at most one round per writer. Once
	// as many are queued as were released, no yield is owed: a lone
	// writer on a busy server would otherwise wait a full round of the
	// scheduler's run queue for every commit.
	for n := 0; n != len(db.queue) && len(db.queue) < db.released; {
		n = len(db.queue)
		db.qmu.Unlock()
		runtime.Gosched()
		db.qmu.Lock()
	}
	batches, db.queue = db.queue, nil
	markDue, db.markDue = db.markDue, false
	return batches, markDue, db.stopping && len(batches) == 0
}

// allPatient reports whether batches are queued and all of them are
// UpdatePatient's. The caller holds qmu.
func (db *DB) allPatient() bool {
	for _, b := range db.queue {
		if !b.patient {
			return false
		}
	}
	return len(db.queue) > 0
}

func (db *DB) appendJournal(buf []byte) error {
	if _, err := db.journal.Write(buf); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	if err := db.journal.Sync(); err != nil {
		return fmt.Errorf("fsync journal: %w", err)
	}
	db.journalSize += int64(len(buf))
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
	db.baseLSN = batches[len(batches)-1].lsn
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
		if p.hasSecond {
			forgetSecond(db.overlaySeconds, p.second, key)
		}
		delete(rows, key)
		if len(rows) == 0 {
			delete(db.overlay, table)
		}
	}
}

// fail puts the store in the failed state: the file state after a failed
// write or fsync is unknown, so no later write may be acknowledged until
// repair has rewritten it.
func (db *DB) fail(err error) {
	db.log.Error("store: writes disabled after a storage error; retrying until the disk accepts them", "dir", db.dir, "err", err)
	db.qmu.Lock()
	defer db.qmu.Unlock()
	db.failure = fmt.Errorf("store: writes disabled after a storage error: %w: %w", record.ErrUnavailable, err)
	db.failedAt[db.epoch] = db.durable
	db.synced.Broadcast()
}

// dropUnacknowledged cuts from the journal whatever follows its
// acknowledged lines, at once rather than at the first repair: after a
// failed write or fsync those bytes may still be in the page cache, where
// a restart of the process (a crash, or a Close before the repair) would
// read them and bring back writes whose Update had returned an error.
// Failing here is only logged; the repair does the same first.
func (db *DB) dropUnacknowledged() {
	if err := db.truncateJournal(); err != nil {
		db.log.Warn("store: cannot cut the unacknowledged end of the journal yet", "dir", db.dir, "err", err)
	}
}

// truncateJournal cuts the journal to its acknowledged lines and fsyncs it.
func (db *DB) truncateJournal() error {
	if err := db.journal.Truncate(db.journalSize); err != nil {
		return fmt.Errorf("store: truncate journal: %w", err)
	}
	if err := db.journal.Sync(); err != nil {
		return fmt.Errorf("store: fsync journal: %w", err)
	}
	return nil
}

// repair retries repairOnce, with growing delays, until it succeeds (true)
// or the store is closed (false).
func (db *DB) repair() bool {
	delay := db.repairAfter
	for {
		select {
		case <-db.stop:
			return false
		case <-time.After(delay):
		}
		err := db.repairOnce()
		if err == nil {
			db.log.Info("store: writes enabled again: the files hold every acknowledged write", "dir", db.dir)
			return true
		}
		delay = min(2*delay, maxRepairDelay)
		db.log.Warn("store: still cannot write", "dir", db.dir, "err", err, "retry_in", delay)
	}
}

// repairOnce makes the files hold exactly base, the acknowledged state:
// it cuts what a failed write left in the journal, then compacts, so that
// the files are rewritten from memory rather than trusted (after a failed
// fsync the page cache may hold lines the disk does not, and a later fsync
// that succeeds does not write them). It then drops the queued batches,
// whose Updates have returned errors, and starts a new epoch that reuses
// their LSNs. While failure is set no Update queues anything, so only that
// last step needs writeMu: Updates keep failing fast during the compaction.
func (db *DB) repairOnce() error {
	if err := db.truncateJournal(); err != nil {
		return err
	}
	if err := db.compact(); err != nil {
		return err
	}
	if err := db.writeMark(db.durable); err != nil {
		return err
	}
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	db.mu.Lock()
	clear(db.overlay)
	clear(db.overlaySeconds)
	db.mu.Unlock()
	db.lastLSN = db.durable
	db.qmu.Lock()
	db.queue, db.failure = nil, nil
	db.epoch++
	db.synced.Broadcast()
	db.qmu.Unlock()
	return nil
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
	// The snapshot holds every acknowledged line: none is left to keep.
	db.journalSize = 0
	if err := db.journal.Truncate(0); err != nil {
		return fmt.Errorf("store: compact: truncate journal: %w", err)
	}
	if err := db.journal.Sync(); err != nil {
		return fmt.Errorf("store: compact: fsync journal: %w", err)
	}
	db.journalChanges = 0
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
	err = writeSnapshot(f, db.durable, db.base)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		// A partial snapshot on a full disk would hold the space a retry needs.
		os.Remove(tmp)
		return err
	}
	return syncDir(db.dir)
}

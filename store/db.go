package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"worldid/record"
)

// defaultCompactAfter is Options.CompactAfter's default: small enough that
// replaying the journal of a small store takes milliseconds.
const defaultCompactAfter = 10_000

var errClosed = fmt.Errorf("store: closed: %w", record.ErrUnavailable)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// CompactAfter is the number of journal lines after which the journal
	// is folded into a new snapshot. The effective threshold is never below
	// the number of live records, so the cost of compaction stays
	// proportional to the number of writes. Zero means 10,000.
	CompactAfter int

	// openFile opens the journal and the snapshot's temporary file; tests
	// replace it to inject write faults. Nil means openOSFile.
	openFile func(name string, flag int) (file, error)
}

// DB is an open store. Its methods are safe for concurrent use.
type DB struct {
	dir          string
	compactAfter int
	openFile     func(name string, flag int) (file, error)
	lock         *os.File
	closed       atomic.Bool

	// writeMu serializes Updates: fn, LSN assignment and queueing happen
	// under it, so journal order is LSN order.
	writeMu sync.Mutex
	lastLSN uint64 // newest LSN assigned

	// mu guards the durable state and the overlay of queued changes.
	mu      sync.RWMutex
	base    tables                        // state up to the durable LSN
	overlay map[string]map[string]pending // changes queued but not yet durable

	// qmu guards the commit queue and the durability state.
	qmu      sync.Mutex
	queued   *sync.Cond // signalled when queue grows or stopping is set
	synced   *sync.Cond // broadcast when durable advances or failure is set
	queue    []*batch
	durable  uint64 // newest LSN that is fsynced and applied to base
	failure  error  // sticky: set by the first journal or snapshot error
	stopping bool

	// Owned by the committer goroutine once Open returns.
	journal      file
	journalLines int
	records      int // live records in base
	done         chan struct{}
}

// pending is the newest queued, not yet durable value of one key.
type pending struct {
	lsn     uint64
	value   string
	present bool // false: deleted
}

// batch is one Update's journal line waiting for the committer.
type batch struct {
	lsn     uint64
	changes []change
	line    []byte
}

// Open opens the store in dir, creating the directory (0700) and its files
// (0600) if absent. It takes an exclusive lock on dir/LOCK, loads the
// snapshot, replays the journal (dropping a torn final line; any other
// corruption is an error naming file and line) and compacts.
func Open(dir string, opts Options) (*DB, error) {
	if opts.CompactAfter < 0 {
		return nil, errors.New("store: negative CompactAfter")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	db := &DB{
		dir:          dir,
		compactAfter: orDefault(opts.CompactAfter, defaultCompactAfter),
		openFile:     opts.openFile,
		lock:         lock,
		overlay:      map[string]map[string]pending{},
		done:         make(chan struct{}),
	}
	if db.openFile == nil {
		db.openFile = openOSFile
	}
	db.queued = sync.NewCond(&db.qmu)
	db.synced = sync.NewCond(&db.qmu)
	if err := db.recover(); err != nil {
		if db.journal != nil {
			db.journal.Close()
		}
		lock.Close()
		return nil, err
	}
	go db.commitLoop()
	return db, nil
}

// orDefault returns v, or def if v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// recover rebuilds the state from the snapshot and the journal, then
// compacts so that the journal starts empty (which also removes a torn tail).
func (db *DB) recover() error {
	snap, found, err := loadSnapshot(filepath.Join(db.dir, snapshotName))
	if err != nil {
		return err
	}
	db.base, db.records = snap.tables, snap.records
	path := filepath.Join(db.dir, journalName)
	if db.journal, err = db.openFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	r, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer r.Close()
	last, lines, err := replayJournal(r, path, snap.lsn, func(e entry) {
		for _, c := range e.Changes {
			db.records += db.base.apply(c)
		}
	})
	if err != nil {
		return err
	}
	db.lastLSN, db.durable = last, last
	db.journalLines = lines
	if lines > 0 || !found {
		return db.compact()
	}
	return nil
}

// Close waits for queued writes, stops the committer and releases the lock.
// Later calls of any method return an error wrapping record.ErrUnavailable.
func (db *DB) Close() error {
	db.writeMu.Lock()
	wasClosed := db.closed.Swap(true)
	db.writeMu.Unlock()
	if wasClosed {
		return errClosed
	}
	db.qmu.Lock()
	db.stopping = true
	db.queued.Signal()
	db.qmu.Unlock()
	<-db.done
	return errors.Join(db.journal.Close(), db.lock.Close())
}

// View runs fn on a consistent, read-only view of the durable state: it
// never shows a write whose journal line is not yet fsynced. fn must not
// call View or Update and must not keep tx after returning.
func (db *DB) View(fn func(tx *ReadTx) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed.Load() {
		return errClosed
	}
	return fn(&ReadTx{base: db.base})
}

// Update runs fn under the write lock. If fn returns nil, its puts and
// deletes become one journal line and Update returns once that line is
// fsynced; concurrent Updates share one fsync (group commit). If fn returns
// an error, nothing is written and Update returns that error. After a
// journal or snapshot write error, every Update returns an error wrapping
// record.ErrUnavailable; an Update that returns such an error may or may not
// have been persisted.
//
// ctx is checked before fn runs. Once fn's changes are queued, Update waits
// for the fsync regardless of ctx, so that its result is never ambiguous.
// fn must not call View or Update and must not keep tx after returning.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	wait, err := db.stage(ctx, fn)
	if werr := db.waitDurable(wait); werr != nil {
		return werr
	}
	return err
}

// stage runs fn and queues its changes. It returns the LSN Update must wait
// for before answering: its own, or, if it wrote nothing, the newest queued
// LSN fn read (its answer may depend on that value).
func (db *DB) stage(ctx context.Context, fn func(tx *Tx) error) (uint64, error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if err := db.writable(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tx := &Tx{db: db}
	if err := fn(tx); err != nil {
		return tx.seen, err
	}
	if len(tx.changes) == 0 {
		return tx.seen, nil
	}
	b := &batch{lsn: db.lastLSN + 1, changes: tx.changes}
	line, err := encodeLine(entry{LSN: b.lsn, Changes: b.changes})
	if err != nil {
		return tx.seen, fmt.Errorf("store: encode journal line: %w", err)
	}
	b.line = line
	db.lastLSN = b.lsn
	db.addPending(b)
	db.qmu.Lock()
	db.queue = append(db.queue, b)
	db.queued.Signal()
	db.qmu.Unlock()
	return b.lsn, nil
}

func (db *DB) writable() error {
	if db.closed.Load() {
		return errClosed
	}
	db.qmu.Lock()
	defer db.qmu.Unlock()
	return db.failure
}

// addPending makes b's changes visible to later Updates (not to Views).
func (db *DB) addPending(b *batch) {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, c := range b.changes {
		rows := db.overlay[c.Table]
		if rows == nil {
			rows = map[string]pending{}
			db.overlay[c.Table] = rows
		}
		rows[c.Key] = pending{lsn: b.lsn, value: string(c.Value), present: c.Op == opPut}
	}
}

// waitDurable blocks until lsn is durable or the store has failed.
func (db *DB) waitDurable(lsn uint64) error {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	for db.durable < lsn && db.failure == nil {
		db.synced.Wait()
	}
	if db.durable >= lsn {
		return nil
	}
	return db.failure
}

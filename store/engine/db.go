package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"worldid/record"
)

// defaultCompactAfter is Options.CompactAfter's default: small enough that
// replaying the journal of a small store takes milliseconds.
const defaultCompactAfter = 10_000

// After a storage error the store retries its repair after
// defaultRepairAfter, doubling the delay up to maxRepairDelay, so that it
// is writable again within seconds of the disk having room and a broken
// disk costs little.
const (
	defaultRepairAfter = time.Second
	maxRepairDelay     = 10 * time.Second
)

// defaultMarkEvery is how often, at most, the committer rewrites the mark
// (doc.go, "Never a silent reset"): each costs two fsyncs.
const defaultMarkEvery = time.Second

var (
	errClosed = fmt.Errorf("store: closed: %w", record.ErrUnavailable)
	errLost   = fmt.Errorf("store: the write was lost to a storage error (the store has recovered since): %w", record.ErrUnavailable)
)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// CompactAfter is the number of changes (puts and deletes) in the
	// journal after which it is folded into a new snapshot. The effective
	// threshold is never below the number of live records, so the cost of
	// compaction stays proportional to the number of writes, and the
	// journal a start replays never holds more changes than that. Zero
	// means 10,000.
	CompactAfter int

	// AcceptLoss opens a store even though its files hold less than it had
	// acknowledged (Open's error would wrap ErrDataLoss): a missing or
	// older state.json or journal.jsonl, or a damaged mark. Open then logs
	// what is lost and continues with what the files hold. Operators set
	// it once, after deciding that no backup is better.
	AcceptLoss bool

	// Witness, if set, keeps a second copy of the mark outside the store's
	// files: Open also refuses files that hold less than it records, or
	// whose mark names another store (doc.go, "Never a silent reset").
	Witness Witness

	// Codecs packs the rows of the tables it names into fixed-width
	// records (doc.go, "Packed tables"). A snapshot with packed tables
	// opens only with the codecs that wrote them.
	Codecs map[string]Codec

	// Obsolete names rows that Open drops from what it loads: table →
	// whether the row of key and value, in the loaded state st, goes (a
	// table a newer version derives instead of storing). Dropping any
	// makes Open write a new snapshot, so that the files lose them too;
	// a crash before that drops them again at the next Open.
	Obsolete map[string]func(st State, key, value string) bool

	// Rand is the source of the store's identity, chosen when the store
	// gets its first mark. Nil means crypto/rand.Reader.
	Rand io.Reader

	// Log receives what an operator must hear about: a dropped torn
	// journal line, an accepted loss, a storage error and the recovery
	// from it. Nil means slog.Default().
	Log *slog.Logger

	// openFile opens the journal and the snapshot's temporary file; tests
	// replace it to inject write faults. Nil means openOSFile.
	openFile func(name string, flag int) (file, error)
	// repairAfter and markEvery replace defaultRepairAfter and
	// defaultMarkEvery when set (tests).
	repairAfter, markEvery time.Duration
}

// DB is an open store. Its methods are safe for concurrent use.
type DB struct {
	dir          string
	codecs       map[string]Codec
	obsolete     map[string]func(st State, key, value string) bool
	compactAfter int
	acceptLoss   bool
	witness      Witness
	rand         io.Reader
	id           string // the store's identity, in the mark and the witness
	log          *slog.Logger
	openFile     func(name string, flag int) (file, error)
	repairAfter  time.Duration
	markEvery    time.Duration
	lock         *os.File
	closed       atomic.Bool

	// writeMu serializes Updates: fn, LSN assignment and queueing happen
	// under it, so journal order is LSN order.
	writeMu sync.Mutex
	lastLSN uint64 // newest LSN assigned

	// mu guards the durable state and the overlay of queued changes.
	mu      sync.RWMutex
	base    State                         // state up to the durable LSN
	baseLSN uint64                        // LSN of the newest write in base
	overlay map[string]map[string]pending // changes queued but not yet durable
	// overlaySeconds finds the overlay's rows by second key (Tx.Lookup).
	overlaySeconds map[secondID]string

	// qmu guards the commit queue and the durability state.
	qmu      sync.Mutex
	queued   *sync.Cond // signalled when queue grows or stopping is set
	synced   *sync.Cond // broadcast when durable advances or failure is set
	queue    []*batch
	durable  uint64 // newest LSN that is fsynced and applied to base
	failure  error  // set by a journal or snapshot error until the repair
	stopping bool
	stop     chan struct{} // closed by Close: ends the wait for a repair
	markDue  bool          // the mark timer fired
	// epoch counts repairs: an Update waits for an LSN of its epoch, since
	// a repair drops the queued batches and reuses their LSNs.
	epoch    uint64
	failedAt map[uint64]uint64 // epoch → durable LSN when it failed

	// Owned by the committer goroutine once Open returns.
	journal        file
	journalChanges int    // puts and deletes in the journal
	journalSize    int64  // bytes of the journal that hold acknowledged lines
	released       int    // batches the last fsync made durable: writers that may queue again
	records        int    // live records in base
	marked         uint64 // LSN of the newest mark
	lastMark       time.Time
	markTimer      *time.Timer // armed while a mark waits for markEvery
	done           chan struct{}
}

// pending is the newest queued, not yet durable value of one key.
type pending struct {
	lsn     uint64
	value   string
	present bool // false: deleted
	// second is the row's entry in overlaySeconds, if it has one.
	second    secondID
	hasSecond bool
}

// batch is one Update's journal line waiting for the committer.
type batch struct {
	lsn     uint64
	changes []change
	line    []byte
	patient bool // UpdatePatient: its commit may wait a scheduler round
}

// Open opens the store in dir, creating the directory (0700) and its files
// (0600) if absent. It takes an exclusive lock on dir/LOCK, loads the
// snapshot, replays the journal (dropping a torn final line; any other
// corruption is an error naming file and line) and compacts.
func Open(dir string, opts Options) (*DB, error) {
	return OpenContext(context.Background(), dir, opts)
}

// OpenContext is Open, stopped when ctx is done: it looks at ctx between
// chunks of the snapshot and of the journal and before it compacts, and
// then returns ctx's error having changed nothing on disk.
func OpenContext(ctx context.Context, dir string, opts Options) (*DB, error) {
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
		dir:            dir,
		codecs:         opts.Codecs,
		obsolete:       opts.Obsolete,
		compactAfter:   orDefault(opts.CompactAfter, defaultCompactAfter),
		acceptLoss:     opts.AcceptLoss,
		witness:        opts.Witness,
		rand:           opts.Rand,
		log:            opts.Log,
		openFile:       opts.openFile,
		repairAfter:    orDefault(opts.repairAfter, defaultRepairAfter),
		markEvery:      orDefault(opts.markEvery, defaultMarkEvery),
		lock:           lock,
		overlay:        map[string]map[string]pending{},
		overlaySeconds: map[secondID]string{},
		stop:           make(chan struct{}),
		failedAt:       map[uint64]uint64{},
		done:           make(chan struct{}),
	}
	if db.openFile == nil {
		db.openFile = openOSFile
	}
	if db.log == nil {
		db.log = slog.Default()
	}
	if db.rand == nil {
		db.rand = rand.Reader
	}
	db.queued = sync.NewCond(&db.qmu)
	db.synced = sync.NewCond(&db.qmu)
	if err := db.recover(ctx); err != nil {
		if db.journal != nil {
			db.journal.Close()
		}
		lock.Close()
		return nil, err
	}
	go db.run()
	return db, nil
}

// orDefault returns v, or def if v is zero.
func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// recover rebuilds the state from the snapshot and the journal, checks
// them against the mark and the witness, then compacts so that the journal
// starts empty (which also removes a torn tail) and brings the mark and
// the witness up to date. A snapshot of an older format is rewritten.
func (db *DB) recover(ctx context.Context) error {
	want, err := db.expected()
	if err != nil {
		return err
	}
	snapPath := filepath.Join(db.dir, snapshotName)
	snap, found, err := loadSnapshot(ctx, snapPath, db.codecs)
	if err != nil {
		return err
	}
	path := filepath.Join(db.dir, journalName)
	_, err = os.Stat(path)
	journalFound := err == nil
	for _, f := range []struct {
		name    string
		present bool
	}{{snapPath, found}, {path, journalFound}} {
		if want.lsn > 0 && !f.present { // an LSN of 0: nothing was acknowledged
			if err := db.lose(fmt.Errorf("store: %s is missing, but %s says the store had acknowledged writes up to lsn %d: %w",
				f.name, want.by, want.lsn, ErrDataLoss)); err != nil {
				return err
			}
		}
	}
	db.base, db.records = snap.tables, snap.records
	if db.journal, err = db.openFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	r, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer r.Close()
	rep, err := replayJournal(ctx, r, path, snap.lsn, func(e entry) {
		for _, c := range e.Changes {
			db.records += db.base.apply(c)
		}
	})
	if errors.Is(err, ErrDataLoss) {
		// Only lines the snapshot holds: nothing was applied.
		err, rep = db.lose(err), replayed{last: snap.lsn, lines: 1}
	}
	if err != nil {
		return err
	}
	if rep.tornLine > 0 {
		db.log.Warn("store: dropped the torn final line of the journal: one update that was never acknowledged",
			"file", path, "line", rep.tornLine, "bytes", rep.tornBytes, "dropped_records", 1)
	}
	if rep.last < want.lsn {
		if err := db.lose(fmt.Errorf("store: %s and %s end at lsn %d, but %s says lsn %d was acknowledged: one of them was truncated or replaced by an older copy: %w",
			snapPath, path, rep.last, want.by, want.lsn, ErrDataLoss)); err != nil {
			return err
		}
	}
	db.lastLSN, db.durable, db.baseLSN = rep.last, rep.last, rep.last
	if err := ctx.Err(); err != nil {
		return err
	}
	// A torn line alone must go too: the next line would be appended to it.
	if db.dropObsolete() > 0 || rep.lines > 0 || rep.tornLine > 0 || !found || snap.format != snapshotFormat || snap.renamed {
		if err := db.compact(); err != nil {
			return err
		}
	}
	if db.id = want.id; db.id == "" {
		if db.id, err = newID(db.rand); err != nil {
			return err
		}
	}
	current := Mark{ID: db.id, LSN: db.durable}
	if want.mark != current || (db.witness != nil && want.witnessed != current) {
		if err := db.writeMark(db.durable); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	return nil
}

// dropObsolete drops the loaded rows that Options.Obsolete names and
// returns how many.
func (db *DB) dropObsolete() (dropped int) {
	var keys []string
	for table, obsolete := range db.obsolete {
		keys = keys[:0]
		if r := db.base.tables[table]; r != nil {
			r.each(func(k, v string) bool {
				if obsolete(db.base, k, v) {
					keys = append(keys, k)
				}
				return true
			})
		}
		for _, k := range keys {
			db.records += db.base.apply(change{Op: opDel, Table: table, Key: k})
		}
		dropped += len(keys)
	}
	return dropped
}

// expectation is what the mark and the witness say the files must hold.
type expectation struct {
	lsn uint64 // the newest LSN either says was acknowledged
	by  string // which of them says so, for errors
	id  string // the store's identity; "" if neither names one
	// mark and witnessed are the records as found (zero: none).
	mark, witnessed Mark
}

// expected reads the mark and the witness. A damaged mark or witness, or a
// mark naming another store than the witness, is an error wrapping
// ErrDataLoss unless the operator accepts the loss; then the files' own
// mark counts.
func (db *DB) expected() (expectation, error) {
	markPath := filepath.Join(db.dir, markName)
	var want expectation
	m, marked, err := loadMark(markPath)
	if err != nil {
		if err = db.lose(err); err != nil {
			return want, err
		}
	}
	if marked {
		want = expectation{lsn: m.LSN, by: markPath, id: m.ID, mark: m}
	}
	if db.witness == nil {
		return want, nil
	}
	w, witnessed, err := db.witness.Load()
	if errors.Is(err, ErrDataLoss) {
		return want, db.lose(fmt.Errorf("store: %s: %w", db.witness, err))
	}
	if err != nil {
		return want, fmt.Errorf("store: %s: %w", db.witness, err)
	}
	if !witnessed {
		return want, nil
	}
	want.witnessed = w
	if marked && m.ID != "" && m.ID != w.ID {
		return want, db.lose(fmt.Errorf("store: %s names store %s, but %s records store %s: the store's files were replaced by another store's: %w",
			markPath, m.ID, db.witness, w.ID, ErrDataLoss))
	}
	if !marked || w.LSN > want.lsn {
		want.lsn, want.by = w.LSN, db.witness.String()
	}
	if want.id == "" {
		want.id = w.ID
	}
	return want, nil
}

// lose returns err, which wraps ErrDataLoss, unless the operator accepts
// the loss: then it logs it and returns nil.
func (db *DB) lose(err error) error {
	if !db.acceptLoss {
		return err
	}
	db.log.Warn("store: continuing without data the store had acknowledged, as the operator accepted", "err", err)
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
	close(db.stop)
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
	return fn(&ReadTx{base: db.base, lsn: db.baseLSN})
}

// Update runs fn under the write lock. If fn returns nil, its puts and
// deletes become one journal line and Update returns once that line is
// fsynced; concurrent Updates share one fsync (group commit). If fn returns
// an error, nothing is written and Update returns that error. After a
// journal or snapshot write error, every Update returns an error wrapping
// record.ErrUnavailable; an Update that returns such an error may or may not
// have been persisted. The store repairs itself once the disk accepts
// writes again (doc.go, "Failure").
//
// ctx is checked before fn runs. Once fn's changes are queued, Update waits
// for the fsync regardless of ctx, so that its result is never ambiguous.
// fn must not call View or Update and must not keep tx after returning.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return db.update(ctx, fn, false)
}

// UpdatePatient is Update for a writer whose answer is not latency-critical.
// While only such writes are queued, the committer first yields the
// processor once (runtime.Gosched), so that goroutines the CPU is busy with
// can queue their writes and share the fsync: on a saturated server each
// one that joins saves an fsync (about 60 µs of CPU here), for the cost of
// a round of the scheduler's run queue; on an idle one the yield returns at
// once. Durability and errors are Update's.
func (db *DB) UpdatePatient(ctx context.Context, fn func(tx *Tx) error) error {
	return db.update(ctx, fn, true)
}

func (db *DB) update(ctx context.Context, fn func(tx *Tx) error, patient bool) error {
	wait, epoch, err := db.stage(ctx, fn, patient)
	if werr := db.waitDurable(wait, epoch); werr != nil {
		return werr
	}
	return err
}

// stage runs fn and queues its changes. It returns the LSN Update must wait
// for before answering: its own, or, if it wrote nothing, the newest queued
// LSN fn read (its answer may depend on that value), and the epoch of that
// LSN.
func (db *DB) stage(ctx context.Context, fn func(tx *Tx) error, patient bool) (uint64, uint64, error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	epoch, err := db.writable()
	if err != nil {
		return 0, epoch, err
	}
	if err := ctx.Err(); err != nil {
		return 0, epoch, err
	}
	tx := &Tx{db: db}
	if err := fn(tx); err != nil {
		return tx.seen, epoch, err
	}
	if len(tx.changes) == 0 {
		return tx.seen, epoch, nil
	}
	b := &batch{lsn: db.lastLSN + 1, changes: tx.changes, patient: patient}
	line, err := encodeLine(entry{LSN: b.lsn, Changes: b.changes})
	if err != nil {
		return tx.seen, epoch, fmt.Errorf("store: encode journal line: %w", err)
	}
	b.line = line
	db.lastLSN = b.lsn
	db.addPending(b)
	db.qmu.Lock()
	db.queue = append(db.queue, b)
	db.queued.Signal()
	db.qmu.Unlock()
	return b.lsn, epoch, nil
}

// writable returns the current epoch and, if the store does not accept
// writes, why.
func (db *DB) writable() (uint64, error) {
	if db.closed.Load() {
		return 0, errClosed
	}
	db.qmu.Lock()
	defer db.qmu.Unlock()
	return db.epoch, db.failure
}

// Health reports whether the store accepts writes: nil, or the error an
// Update would return, which wraps record.ErrUnavailable and names the
// cause. It does no I/O.
func (db *DB) Health(context.Context) error {
	_, err := db.writable()
	return err
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
		if p, ok := rows[c.Key]; ok && p.hasSecond {
			forgetSecond(db.overlaySeconds, p.second, c.Key)
		}
		p := pending{lsn: b.lsn, value: string(c.Value), present: c.Op == opPut}
		p.second, p.hasSecond = noteSecond(db.overlaySeconds, db.codecs[c.Table], c.Table, c.Key, c.Value)
		rows[c.Key] = p
	}
}

// waitDurable blocks until lsn of epoch is durable or lost to a storage
// error. An LSN of an earlier epoch is durable if the store had made it
// durable before it failed; the repair dropped the others.
func (db *DB) waitDurable(lsn, epoch uint64) error {
	if lsn == 0 {
		return nil
	}
	db.qmu.Lock()
	defer db.qmu.Unlock()
	for db.epoch == epoch && db.durable < lsn && db.failure == nil {
		db.synced.Wait()
	}
	switch {
	case db.epoch != epoch && lsn <= db.failedAt[epoch]:
		return nil
	case db.epoch != epoch:
		return errLost
	case db.durable >= lsn:
		return nil
	}
	return db.failure
}

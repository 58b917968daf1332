package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"worldid/record"
)

// Never a silent reset (doc.go): files that hold less than the store had
// acknowledged make Open fail with ErrDataLoss, naming the file, and
// change nothing; AcceptLoss opens them anyway and says so.

func markPath(dir string) string { return filepath.Join(dir, markName) }

// logBuffer is a slog handler's output, safe for the committer goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func testLogger() (*slog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}

// copyStore copies the store's files of a running store, as a kill would
// leave them (the committer is idle between the test's Updates).
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	for _, name := range []string{snapshotName, journalName, markName} {
		writeFile(t, filepath.Join(out, name), readFile(t, filepath.Join(dir, name)))
	}
	return out
}

// openRefused checks that Open fails with ErrDataLoss naming file and
// leaves every file as it was.
func openRefused(t *testing.T, dir, file string) {
	t.Helper()
	before := map[string][]byte{}
	for _, name := range []string{snapshotName, journalName, markName} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			before[name] = b
		}
	}
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("Open: %v, want ErrDataLoss", err)
	}
	wantErrContains(t, err, file)
	for name, b := range before {
		if after, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(after, b) {
			t.Errorf("the refused Open changed %s", name)
		}
	}
}

func TestMarkWrittenAndUpgraded(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "t", "a", 1)
	put(t, db, "t", "b", 2)
	db.Close()
	m, found, err := loadMark(markPath(dir))
	if err != nil || !found || m.LSN != 2 || len(m.ID) != 2*idBytes {
		t.Fatalf("loadMark: %+v %v %v", m, found, err)
	}
	if got := string(readFile(t, markPath(dir))); got != string(encodeMark(m)) {
		t.Fatalf("mark after a clean shutdown: %q, want lsn 2", got)
	}
	// A data dir from before marks opens and gets one.
	if err := os.Remove(markPath(dir)); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, Options{})
	db.Close()
	if m, found, err := loadMark(markPath(dir)); err != nil || !found || m.LSN != 2 || m.ID == "" {
		t.Fatalf("mark of an upgraded dir: %+v %v %v", m, found, err)
	}
}

// The mark follows the writes while the store runs, at most markEvery
// behind, also when writes stop.
func TestMarkFollowsWrites(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{markEvery: 20 * time.Millisecond})
	defer db.Close()
	for i := range 5 {
		put(t, db, "t", fmt.Sprint(i), i)
	}
	waitMark(t, dir, 5)
}

func TestMissingSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "apps", "app_1", "demo")
	db.Close()
	db = mustOpen(t, dir, Options{}) // clean restart: the journal is empty
	db.Close()
	if err := os.Remove(snapshotPath(dir)); err != nil {
		t.Fatal(err)
	}
	openRefused(t, dir, snapshotPath(dir))

	log, buf := testLogger()
	db = mustOpen(t, dir, Options{AcceptLoss: true, Log: log})
	checkState(t, db, map[string]map[string]string{})
	db.Close()
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), snapshotPath(dir)) {
		t.Errorf("the accepted loss is not logged: %s", buf)
	}
	db = mustOpen(t, dir, Options{}) // accepted once, the store opens again
	db.Close()
}

func TestLostJournalRefused(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{markEvery: time.Nanosecond})
	defer db.Close()
	for i := range 3 {
		put(t, db, "t", fmt.Sprint(i), i)
	}
	older := readFile(t, journalPath(dir)) // LSNs 1–3
	put(t, db, "t", "3", 3)
	waitMark(t, dir, 4)
	killed := copyStore(t, dir) // snapshot at 0, journal 1–4, mark 4

	for name, change := range map[string]func(dir string){
		"journal deleted":      func(dir string) { os.Remove(journalPath(dir)) },
		"journal emptied":      func(dir string) { writeFile(t, journalPath(dir), nil) },
		"journal older copy":   func(dir string) { writeFile(t, journalPath(dir), older) },
		"journal cut mid-line": func(dir string) { writeFile(t, journalPath(dir), readFile(t, journalPath(killed))[:len(older)+5]) },
		"mark damaged":         func(dir string) { writeFile(t, markPath(dir), []byte(`{"lsn":4,"crc":"00000000"}`+"\n")) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyStore(t, killed)
			change(dir)
			file := journalPath(dir)
			if name == "mark damaged" {
				file = markPath(dir)
			}
			openRefused(t, dir, file)
			db := mustOpen(t, dir, Options{AcceptLoss: true, Log: slog.New(slog.DiscardHandler)})
			db.Close()
		})
	}
	// Unchanged, the copy opens with every acknowledged write.
	db2 := mustOpen(t, killed, Options{})
	defer db2.Close()
	if _, ok := getRaw(t, db2, "t", "3"); !ok {
		t.Fatal("the last acknowledged write is missing")
	}
}

func waitMark(t *testing.T, dir string, lsn uint64) {
	t.Helper()
	eventually(t, 5*time.Second, fmt.Sprintf("the mark to reach lsn %d", lsn), func() bool {
		got, _, err := loadMark(markPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		return got.LSN >= lsn
	})
}

// An older state.json (a compaction has happened since) is refused.
func TestOlderSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "t", "a", 1)
	db.Close()
	db = mustOpen(t, dir, Options{}) // snapshot at lsn 1
	old := readFile(t, snapshotPath(dir))
	put(t, db, "t", "b", 2)
	db.Close()
	db = mustOpen(t, dir, Options{}) // snapshot at lsn 2, journal empty
	db.Close()
	writeFile(t, snapshotPath(dir), old)
	openRefused(t, dir, snapshotPath(dir))
}

// A journal whose lines all precede the snapshot but end before it is an
// older copy.
func TestOlderJournalBelowSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	for i := range 5 {
		put(t, db, "t", fmt.Sprint(i), i)
	}
	db.Close()
	lines := journalLines(t, dir) // LSNs 1–5
	db = mustOpen(t, dir, Options{})
	db.Close()
	snap := readFile(t, snapshotPath(dir)) // lsn 5
	_, err := openWithFiles(t, snap, bytes.Join(lines[:3], nil))
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("Open with journal lines 1–3 and a snapshot at lsn 5: %v", err)
	}
	wantErrContains(t, err, journalName, "older copy")
}

// A dropped torn line is logged with file, line and what was dropped.
func TestTornTailIsLogged(t *testing.T) {
	snap, journal, _ := threeWrites(t)
	next := encodedLine(t, 4, putChange("t", "new", `"torn"`))
	for name, tail := range map[string][]byte{
		"without newline": next[:len(next)-1],
		"bad checksum":    bytes.Replace(next, []byte("torn"), []byte("tOrn"), 1),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, snapshotPath(dir), snap)
			writeFile(t, journalPath(dir), append(bytes.Clone(journal), tail...))
			log, buf := testLogger()
			db := mustOpen(t, dir, Options{Log: log})
			db.Close()
			for _, want := range []string{"level=WARN", "file=" + journalPath(dir), "line=4", fmt.Sprint("bytes=", len(tail)), "dropped_records=1"} {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("log %q lacks %q", buf, want)
				}
			}
		})
	}
}

// After a storage error the store refuses writes and reports it in Health
// until the disk accepts writes again; then it repairs itself: the files
// hold exactly the acknowledged writes, and new writes are acknowledged.
func TestRepairAfterStorageError(t *testing.T) {
	dir := t.TempDir()
	log, buf := testLogger()
	db, journal := openFaulty(t, dir, Options{repairAfter: 10 * time.Millisecond, Log: log})
	defer db.Close()
	ctx := context.Background()
	put(t, db, "t", "before", 1)
	if err := db.Health(ctx); err != nil {
		t.Fatalf("Health of a working store: %v", err)
	}
	syncs := make(chan struct{}, 64)
	journal.set(func(f *faultyFile) { f.syncErr, f.entered = syscall.ENOSPC, syncs })
	err := db.Update(ctx, func(tx *Tx) error { return tx.Put("t", "failed", 2) })
	if !errors.Is(err, record.ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Update on a full disk: %v", err)
	}
	// The repair needs an fsync of the journal too: it keeps failing.
	// The Update's fsync, the immediate cut's, then two repairs' fsyncs:
	// the first repair has failed and been logged.
	for n := range 4 {
		select {
		case <-syncs:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d journal fsyncs of the 4 awaited: the repair did not retry (Health: %v)", n, db.Health(ctx))
		}
	}
	if err := db.Health(ctx); !errors.Is(err, record.ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Health after a failed repair: %v", err)
	}
	if !strings.Contains(buf.String(), "still cannot write") {
		t.Errorf("a failed repair is not logged:\n%s", buf)
	}
	journal.set(func(f *faultyFile) { f.syncErr, f.entered = nil, nil })
	eventually(t, 10*time.Second, "the repair after the disk recovered", func() bool { return db.Health(ctx) == nil })
	put(t, db, "t", "after", 3)
	checkState(t, db, map[string]map[string]string{"t": {"before": "1", "after": "3"}})
	db.Close()
	for _, want := range []string{"level=ERROR", "writes disabled", "level=INFO", "writes enabled again"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf)
		}
	}
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	checkState(t, db, map[string]map[string]string{"t": {"before": "1", "after": "3"}})
}

// The example in doc.go.
func TestMarkFormat(t *testing.T) {
	if got, want := string(encodeMark(Mark{LSN: 42})), `{"lsn":42,"crc":"3081ac24"}`+"\n"; got != want {
		t.Fatalf("encodeMark(42) = %q, want %q", got, want)
	}
	m := Mark{ID: "00112233445566778899aabbccddeeff", LSN: 42}
	if got, want := string(encodeMark(m)), `{"lsn":42,"id":"00112233445566778899aabbccddeeff","crc":"b118d69e"}`+"\n"; got != want {
		t.Fatalf("encodeMark(%+v) = %q, want %q", m, got, want)
	}
}

// An Update queued behind a failing fsync never reports success, even
// though the repair reuses its LSN for a later write.
func TestRepairDropsQueuedUpdates(t *testing.T) {
	db, journal := openFaulty(t, t.TempDir(), Options{repairAfter: 10 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	defer db.Close()
	ctx := context.Background()
	put(t, db, "t", "before", 1)
	gate, entered := make(chan struct{}), make(chan struct{}, 10)
	journal.set(func(f *faultyFile) { f.gate, f.entered, f.syncErr = gate, entered, syscall.EIO })
	results := make(chan error, 2)
	go func() { results <- db.Update(ctx, func(tx *Tx) error { return tx.Put("t", "a", 1) }) }()
	<-entered // a's fsync is under way
	go func() { results <- db.Update(ctx, func(tx *Tx) error { return tx.Put("t", "b", 1) }) }()
	for queued := 0; queued == 0; {
		db.qmu.Lock()
		queued = len(db.queue)
		db.qmu.Unlock()
	}
	journal.set(func(f *faultyFile) { f.gate, f.entered, f.syncErr = nil, nil, nil })
	close(gate)
	for range 2 {
		if err := <-results; !errors.Is(err, record.ErrUnavailable) {
			t.Fatalf("an Update of the failed batch or queued behind it: %v, want ErrUnavailable", err)
		}
	}
	eventually(t, 10*time.Second, "the repair", func() bool { return db.Health(ctx) == nil })
	put(t, db, "t", "c", 1)
	checkState(t, db, map[string]map[string]string{"t": {"before": "1", "c": "1"}})
}

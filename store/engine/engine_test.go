package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"worldid/record"
)

func TestOpenCreatesDirAndFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db := mustOpen(t, dir, Options{})
	defer db.Close()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}
	for _, name := range []string{snapshotName, journalName, lockName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
}

func TestOpenRejectsNegativeCompactAfter(t *testing.T) {
	if _, err := Open(t.TempDir(), Options{CompactAfter: -1}); err == nil {
		t.Fatal("Open accepted CompactAfter -1")
	}
}

// The snapshot is the human-readable format doc.go documents.
func TestSnapshotFormat(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "apps_rp", "rp_0123456789abcdef", "app_1")
	put(t, db, "apps", "app_2", map[string]any{"id": "app_2", "name": "B"})
	put(t, db, "apps", "app_1", map[string]any{"id": "app_1", "name": "A <&>"})
	db.Close()
	db = mustOpen(t, dir, Options{}) // compacts the journal into the snapshot
	db.Close()
	want := `{
  "format": "worldid-store/2",
  "lsn": 3,
  "tables": {
    "apps": {
      "app_1": {"id":"app_1","name":"A \u003c\u0026\u003e"},
      "app_2": {"id":"app_2","name":"B"}
    },
    "apps_rp": {
      "rp_0123456789abcdef": "app_1"
    }
  },
  "packed": {},
  "crc": "`
	got := string(readFile(t, snapshotPath(dir)))
	if !strings.HasPrefix(got, want) || len(got) != len(want)+len("xxxxxxxx\"\n}\n") {
		t.Fatalf("snapshot:\n%s\nwant:\n%sxxxxxxxx\"\n}\n", got, want)
	}
	if len(readFile(t, journalPath(dir))) != 0 {
		t.Fatal("journal not empty after compaction")
	}
}

// doc.go's snapshot example, byte for byte. The checksum was computed
// independently with a bitwise CRC-32C (polynomial 0x82F63B78).
func TestSnapshotDocExample(t *testing.T) {
	const want = `{
  "format": "worldid-store/2",
  "lsn": 3,
  "tables": {
    "apps": {
      "app_1": {"id":"app_1","name":"A"}
    }
  },
  "packed": {},
  "crc": "4dc12663"
}
`
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, 3, stateOf(nil, map[string]map[string]string{"apps": {"app_1": `{"id":"app_1","name":"A"}`}})); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want {
		t.Fatalf("snapshot:\n%s\nwant:\n%s", buf.String(), want)
	}
	s, err := decodeSnapshot(context.Background(), []byte(want), nil)
	if v, _ := s.tables.get("apps", "app_1"); err != nil || s.lsn != 3 || s.records != 1 || v != `{"id":"app_1","name":"A"}` {
		t.Fatalf("parse = %+v, %v", s, err)
	}
}

// A snapshot of the first format, before packed tables (its checksum
// computed as TestSnapshotDocExample's), still loads.
func TestSnapshotFormat1(t *testing.T) {
	const v1 = `{
  "format": "worldid-store/1",
  "lsn": 3,
  "tables": {
    "apps": {
      "app_1": {"id":"app_1","name":"A"}
    }
  },
  "crc": "065b3b00"
}
`
	s, err := parseSnapshot(context.Background(), strings.NewReader(v1), int64(len(v1)), nil)
	if v, _ := s.tables.get("apps", "app_1"); err != nil || s.format != snapshotFormatV1 || s.lsn != 3 || s.records != 1 || v != `{"id":"app_1","name":"A"}` {
		t.Fatalf("parse = %+v, %v", s, err)
	}
}

// The journal line is the format doc.go documents, example included. The
// checksum was computed independently with a bitwise CRC-32C (polynomial
// 0x82F63B78, check value e3069283 for "123456789").
func TestJournalLineFormat(t *testing.T) {
	line := encodedLine(t, 42,
		putChange("apps", "app_1", `{"id":"app_1"}`),
		change{Op: opDel, Table: "codes", Key: "c1"})
	const want = `{"lsn":42,"ops":[{"op":"put","t":"apps","k":"app_1","v":{"id":"app_1"}},{"op":"del","t":"codes","k":"c1"}],"crc":"0873869c"}` + "\n"
	if string(line) != want {
		t.Fatalf("line\n%s want\n%s", line, want)
	}
	e, err := new(lineParser).parse([]byte(want[:len(want)-1]))
	if err != nil || e.LSN != 42 || len(e.Changes) != 2 || string(e.Changes[0].Value) != `{"id":"app_1"}` || e.Changes[1].Op != opDel {
		t.Fatalf("parse = %+v, %v", e, err)
	}
}

func TestReopenKeepsState(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "a", "1", "one")
	put(t, db, "a", "2", 2)
	put(t, db, "b", "x", []int{1, 2})
	put(t, db, "a", "1", "uno")
	del(t, db, "a", "2")
	want := map[string]map[string]string{"a": {"1": `"uno"`}, "b": {"x": `[1,2]`}}
	checkState(t, db, want)
	db.Close()
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	checkState(t, db, want)
}

// Copying the files of an open store is what a kill -9 leaves on disk: every
// acknowledged write is in the journal.
func TestReplayOfLiveFiles(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	defer db.Close()
	for i := range 20 {
		put(t, db, "t", fmt.Sprint(i), i)
	}
	del(t, db, "t", "3")
	want := dump(t, db)
	crashed := t.TempDir()
	writeFile(t, snapshotPath(crashed), readFile(t, snapshotPath(dir)))
	writeFile(t, journalPath(crashed), readFile(t, journalPath(dir)))
	db2 := mustOpen(t, crashed, Options{})
	defer db2.Close()
	checkState(t, db2, want)
}

// threeWrites returns the files of a store after three single-put writes
// (journal lines 1–3, snapshot at LSN 0) and the resulting state.
func threeWrites(t *testing.T) (snapshot, journal []byte, state map[string]map[string]string) {
	t.Helper()
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	for i := range 3 {
		put(t, db, "t", fmt.Sprint(i), fmt.Sprintf("value %d", i))
	}
	state = dump(t, db)
	db.Close()
	return readFile(t, snapshotPath(dir)), readFile(t, journalPath(dir)), state
}

func TestTornTailIsDropped(t *testing.T) {
	snap, journal, state := threeWrites(t)
	next := encodedLine(t, 4, putChange("t", "new", `"torn"`))
	corrupt := bytes.Replace(next, []byte("torn"), []byte("tOrn"), 1)
	for name, tail := range map[string][]byte{
		"half a line":              next[:len(next)/2],
		"line without newline":     next[:len(next)-1],
		"bad checksum, last line":  corrupt,
		"garbage, last line":       []byte("\x00\x00\x00\n"),
		"zeros without newline":    make([]byte, 100),
		"only the opening bracket": []byte("{"),
	} {
		t.Run(name, func(t *testing.T) {
			db, err := openWithFiles(t, snap, append(bytes.Clone(journal), tail...))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			checkState(t, db, state)
			// The store keeps working and the dropped LSN is reused cleanly.
			put(t, db, "t", "after", true)
			dir := db.dir
			db.Close()
			db = mustOpen(t, dir, Options{})
			defer db.Close()
			if _, ok := getRaw(t, db, "t", "after"); !ok {
				t.Fatal("write after recovery lost")
			}
		})
	}
}

func getRaw(t testing.TB, db *DB, table, key string) (v json.RawMessage, ok bool) {
	t.Helper()
	if err := db.View(func(tx *ReadTx) error { v, ok = tx.Get(table, key); return nil }); err != nil {
		t.Fatal(err)
	}
	return v, ok
}

func TestCorruptJournalNamesLine(t *testing.T) {
	snap, journal, _ := threeWrites(t)
	lines := bytes.SplitAfter(journal, []byte("\n"))[:3]
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	flipped := bytes.Replace(lines[1], []byte("value 1"), []byte("value X"), 1)
	tests := []struct {
		name    string
		journal []byte
		want    []string
	}{
		{"checksum does not verify", join(lines[0], flipped, lines[2]), []string{":2:", "checksum does not verify"}},
		{"garbage line", join(lines[0], []byte("hello\n"), lines[2]), []string{":2:", "crc"}},
		{"empty line", join(lines[0], []byte("\n"), lines[1], lines[2]), []string{":2:"}},
		{"missing line", join(lines[0], lines[2]), []string{":2:", "sequence gap"}},
		{"swapped lines", join(lines[1], lines[0], lines[2]), []string{":1:", "sequence gap"}},
		{"duplicated line", join(lines[0], lines[1], lines[1], lines[2]), []string{":3:", "sequence gap"}},
		{"bad line before torn tail", join(lines[0], lines[1], flipped, lines[2][:10]), []string{":3:", "checksum does not verify"}},
		{"valid checksum, bad op", join(lines[0], lines[1], lines[2], encodedLine(t, 4, change{Op: "upsert", Table: "t", Key: "k"}), encodedLine(t, 5, putChange("t", "k", "1"))), []string{":4:", "unknown op"}},
		// Not a torn write: the checksum verifies.
		{"valid checksum, bad op, last line", join(lines[0], lines[1], lines[2], encodedLine(t, 4, change{Op: "del", Table: "t", Key: "k", Value: json.RawMessage("1")})), []string{":4:", "del"}},
		{"valid checksum, bad JSON, last line", join(lines[0], lines[1], lines[2], withLineCRC([]byte(`{"lsn":4,"ops":[}`))), []string{":4:", "invalid character"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, snapshotPath(dir), snap)
			writeFile(t, journalPath(dir), tt.journal)
			_, err := Open(dir, Options{})
			wantErrContains(t, err, append([]string{journalPath(dir)}, tt.want...)...)
			// Never a silent reset: the files are untouched, and Open
			// fails again.
			if !bytes.Equal(readFile(t, journalPath(dir)), tt.journal) || !bytes.Equal(readFile(t, snapshotPath(dir)), snap) {
				t.Fatal("failed Open modified the files")
			}
			if _, err := Open(dir, Options{}); err == nil {
				t.Fatal("second Open succeeded")
			}
		})
	}
}

func TestCorruptSnapshotNamesFile(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	put(t, db, "t", "a", "alpha")
	put(t, db, "t", "b", "beta")
	db.Close()
	db = mustOpen(t, dir, Options{})
	db.Close()
	snap := readFile(t, snapshotPath(dir))
	// Line 6 is `      "a": "alpha",`, line 7 `      "b": "beta"`.
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"checksum does not verify", bytes.Replace(snap, []byte("alpha"), []byte("alphA"), 1), []string{"checksum does not verify"}},
		{"syntax error", bytes.Replace(snap, []byte(`"beta"`), []byte(`"beta`), 1), []string{":7:"}},
		{"duplicate key", bytes.Replace(snap, []byte(`"b": "beta"`), []byte(`"a": "beta"`), 1), []string{":7:", "duplicate key"}},
		{"truncated", snap[:len(snap)/2], []string{"unexpected EOF"}},
		{"empty file", nil, []string{":1:"}},
		{"unknown format", bytes.Replace(snap, []byte("worldid-store/2"), []byte("worldid-store/9"), 1), []string{":2:", "unsupported format"}},
		{"trailing data", append(bytes.Clone(snap), "{}"...), []string{"2 bytes after the packed records"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, snapshotPath(dir), tt.data)
			_, err := Open(dir, Options{})
			wantErrContains(t, err, append([]string{snapshotPath(dir)}, tt.want...)...)
		})
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	_, err := Open(dir, Options{})
	wantErrContains(t, err, "locked", dir)
	db.Close()
	db = mustOpen(t, dir, Options{})
	db.Close()
}

// A crash between the snapshot's rename and the journal's truncation leaves
// journal lines the snapshot already holds; replay skips them.
func TestReplaySkipsLinesInSnapshot(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	for i := range 5 {
		put(t, db, "t", fmt.Sprint(i), i)
	}
	want5 := dump(t, db)
	db.Close()
	old := readFile(t, journalPath(dir)) // LSNs 1–5
	db = mustOpen(t, dir, Options{})     // snapshot at LSN 5, journal empty
	put(t, db, "t", "0", "changed")
	del(t, db, "t", "1")
	want := dump(t, db)
	db.Close()
	newer := readFile(t, journalPath(dir)) // LSNs 6–7
	snap := readFile(t, snapshotPath(dir))

	for _, tc := range []struct {
		name    string
		journal []byte
		want    map[string]map[string]string
	}{
		{"old and new lines", append(bytes.Clone(old), newer...), want},
		{"only old lines", old, want5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := openWithFiles(t, snap, tc.journal)
			if err != nil {
				t.Fatal(err)
			}
			checkState(t, db, tc.want)
		})
	}
	_, err := openWithFiles(t, snap, bytes.SplitAfter(newer, []byte("\n"))[1])
	wantErrContains(t, err, ":1:", "sequence gap")
	_, err = openWithFiles(t, nil, newer)
	wantErrContains(t, err, ":1:", "sequence gap")
}

// The compaction threshold counts changes, not lines: one Update of as
// many puts as there are records (a batch of tree leaves) is folded into
// the snapshot, so a start never replays more changes than there are
// records.
func TestCompactionCountsChanges(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{CompactAfter: 10})
	if err := db.Update(context.Background(), func(tx *Tx) error {
		for i := range 40 {
			tx.Put("t", fmt.Sprint(i), i)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close() // waits for the committer, and so for its compaction
	if lines := journalLines(t, dir); len(lines) != 0 {
		t.Fatalf("journal holds %d lines of 40 changes after the update, want it compacted", len(lines))
	}
}

func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{CompactAfter: 10})
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]string{}
	for i := range 300 {
		key := fmt.Sprint(rng.IntN(20))
		if rng.IntN(4) == 0 {
			del(t, db, "t", key)
			delete(want, key)
			continue
		}
		put(t, db, "t", key, i)
		want[key] = fmt.Sprint(i)
	}
	last := db.lastLSN
	db.Close()
	// With at most 20 live records the threshold is at most 20 lines.
	lines := len(journalLines(t, dir))
	if lines >= 20 {
		t.Fatalf("journal has %d lines after compactions", lines)
	}
	s, _, err := loadSnapshot(context.Background(), snapshotPath(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.lsn+uint64(lines) != last {
		t.Fatalf("snapshot at LSN %d + %d journal lines, want LSN %d", s.lsn, lines, last)
	}
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	checkState(t, db, map[string]map[string]string{"t": want})
	if db.records != len(want) {
		t.Fatalf("record count %d, want %d", db.records, len(want))
	}
}

func TestWriteErrorFailsStore(t *testing.T) {
	faults := map[string]func(f *faultyFile){
		"write ENOSPC": func(f *faultyFile) { f.writeErr = syscall.ENOSPC },
		"write EROFS":  func(f *faultyFile) { f.writeErr = syscall.EROFS },
		"fsync EIO":    func(f *faultyFile) { f.syncErr = syscall.EIO },
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			db, journal := openFaulty(t, dir, Options{})
			put(t, db, "t", "before", 1)
			journal.set(fault)
			err := db.Update(context.Background(), func(tx *Tx) error { return tx.Put("t", "failed", 2) })
			if !errors.Is(err, record.ErrUnavailable) {
				t.Fatalf("Update: %v, want ErrUnavailable", err)
			}
			if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.EIO) {
				t.Fatalf("Update: %v does not wrap the cause", err)
			}
			journal.set(func(f *faultyFile) { f.writeErr, f.syncErr = nil, nil }) // the disk recovers...
			ran := false
			err = db.Update(context.Background(), func(tx *Tx) error { ran = true; return nil })
			if !errors.Is(err, record.ErrUnavailable) || ran {
				t.Fatalf("Update after failure: %v (fn ran: %v), want ErrUnavailable without running", err, ran)
			}
			// ...but the store stays failed; reads keep working and show
			// only acknowledged writes.
			checkState(t, db, map[string]map[string]string{"t": {"before": "1"}})
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			defer db.Close()
			if _, ok := getRaw(t, db, "t", "before"); !ok {
				t.Fatal("acknowledged write lost")
			}
		})
	}
}

func TestCompactionErrorFailsStore(t *testing.T) {
	dir := t.TempDir()
	var failSnapshot bool
	var mu sync.Mutex
	opts := Options{CompactAfter: 3, openFile: func(name string, flag int) (file, error) {
		mu.Lock()
		defer mu.Unlock()
		if failSnapshot && strings.HasSuffix(name, ".tmp") {
			return nil, syscall.ENOSPC
		}
		return openOSFile(name, flag)
	}}
	db := mustOpen(t, dir, opts)
	mu.Lock()
	failSnapshot = true
	mu.Unlock()
	for i := range 3 {
		put(t, db, "t", fmt.Sprint(i), i) // the third triggers compaction
	}
	err := db.Update(context.Background(), func(tx *Tx) error { return tx.Put("t", "x", 0) })
	if !errors.Is(err, record.ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Update after failed compaction: %v", err)
	}
	db.Close()
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	checkState(t, db, map[string]map[string]string{"t": {"0": "0", "1": "1", "2": "2"}})

	// A failing first snapshot fails Open.
	_, err = Open(t.TempDir(), opts)
	wantErrContains(t, err, "compact")
}

// Views never show a write before its journal line is durable; Updates see
// it, but cannot acknowledge anything based on it before it is durable.
func TestVisibility(t *testing.T) {
	db, journal := openFaulty(t, t.TempDir(), Options{})
	defer db.Close()
	ctx := context.Background()
	put(t, db, "t", "old", 1)
	gate, entered := make(chan struct{}), make(chan struct{}, 10)
	journal.set(func(f *faultyFile) { f.gate, f.entered = gate, entered })

	first := make(chan error, 1)
	go func() {
		first <- db.Update(ctx, func(tx *Tx) error {
			tx.Delete("t", "old")
			return tx.Put("t", "k", "pending")
		})
	}()
	<-entered // the first write's fsync has started and is held

	err := db.View(func(tx *ReadTx) error {
		if v, ok := tx.Get("t", "k"); ok {
			t.Errorf("View sees non-durable value %s", v)
		}
		if _, ok := tx.Get("t", "old"); !ok {
			t.Error("View misses a value whose deletion is not durable")
		}
		if n := tx.Count("t"); n != 1 {
			t.Errorf("View Count = %d, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A read-only Update sees the pending value but returns only once it is durable.
	readOnly := make(chan error, 1)
	go func() {
		readOnly <- db.Update(ctx, func(tx *Tx) error {
			if v, ok := tx.Get("t", "k"); !ok || string(v) != `"pending"` {
				return fmt.Errorf("Update sees %s, %v; want the pending value", v, ok)
			}
			return nil
		})
	}()
	// A writing Update builds on the pending value; its own line is queued behind it.
	writer := make(chan error, 1)
	go func() {
		writer <- db.Update(ctx, func(tx *Tx) error {
			var keys []string
			tx.Scan("t", "", func(k string, _ json.RawMessage) bool { keys = append(keys, k); return true })
			if fmt.Sprint(keys) != "[k]" || tx.Count("t") != 1 {
				return fmt.Errorf("Update scans %v, count %d; want [k], 1", keys, tx.Count("t"))
			}
			return tx.Put("t", "k2", "second")
		})
	}()
	select {
	case err := <-readOnly:
		t.Fatalf("read-only Update returned (%v) before the value it read was durable", err)
	case err := <-writer:
		t.Fatalf("writing Update returned (%v) before its line was durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	gate <- struct{}{} // complete the first fsync
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-readOnly; err != nil {
		t.Fatal(err)
	}
	<-entered
	gate <- struct{}{} // the second
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
	journal.set(func(f *faultyFile) { f.gate, f.entered = nil, nil })
	checkState(t, db, map[string]map[string]string{"t": {"k": `"pending"`, "k2": `"second"`}})
}

// An Update that fails because of a value it read must not answer before
// that value is durable: its answer would be wrong if the value were lost.
func TestFailedUpdateWaitsForWhatItRead(t *testing.T) {
	db, journal := openFaulty(t, t.TempDir(), Options{})
	defer db.Close()
	ctx := context.Background()
	gate, entered := make(chan struct{}), make(chan struct{}, 10)
	journal.set(func(f *faultyFile) { f.gate, f.entered, f.syncErr = gate, entered, syscall.EIO })
	first := make(chan error, 1)
	go func() { first <- db.Update(ctx, func(tx *Tx) error { return tx.Insert("t", "k", 1) }) }()
	<-entered
	second := make(chan error, 1)
	go func() { second <- db.Update(ctx, func(tx *Tx) error { return tx.Insert("t", "k", 2) }) }()
	select {
	case err := <-second:
		t.Fatalf("second Insert returned %v before the first was durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	gate <- struct{}{} // the first write's fsync fails
	if err := <-first; !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("first: %v", err)
	}
	// The second read a value that never became durable: ErrExists would
	// be a lie, so it reports the failure.
	if err := <-second; !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("second: %v, want ErrUnavailable", err)
	}
	close(gate) // the fsyncs of the cut and the repair that follow
}

func TestGroupCommitSharesFsync(t *testing.T) {
	db, journal := openFaulty(t, t.TempDir(), Options{})
	defer db.Close()
	gate := make(chan struct{})
	journal.set(func(f *faultyFile) { f.gate, f.syncs = gate, 0 })
	// Hold each fsync for 2 ms so that writers pile up behind it.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				select {
				case gate <- struct{}{}:
				case <-stop:
					return
				}
			}
		}
	}()
	defer close(stop)
	const writers, each = 32, 5
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				put(t, db, "t", fmt.Sprintf("%d-%d", w, i), i)
			}
		})
	}
	wg.Wait()
	var syncs int
	journal.set(func(f *faultyFile) { syncs, f.gate = f.syncs, nil })
	if syncs > writers*each/4 {
		t.Fatalf("%d fsyncs for %d writes: group commit is not sharing fsyncs", syncs, writers*each)
	}
	if n := len(dump(t, db)["t"]); n != writers*each {
		t.Fatalf("%d records, want %d", n, writers*each)
	}
}

func TestAbortedUpdateWritesNothing(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{})
	defer db.Close()
	put(t, db, "t", "k", 1)
	before := readFile(t, journalPath(dir))
	boom := errors.New("boom")
	err := db.Update(context.Background(), func(tx *Tx) error {
		tx.Put("t", "k", 2)
		tx.Put("t", "other", 3)
		tx.Delete("t", "k")
		return boom
	})
	if err != boom {
		t.Fatalf("Update: %v, want the fn's error", err)
	}
	// An Update that writes nothing writes no line either.
	if err := db.Update(context.Background(), func(tx *Tx) error { tx.Delete("t", "absent"); return nil }); err != nil {
		t.Fatal(err)
	}
	checkState(t, db, map[string]map[string]string{"t": {"k": "1"}})
	if !bytes.Equal(readFile(t, journalPath(dir)), before) {
		t.Fatal("aborted or empty Update wrote to the journal")
	}
}

func TestPanicInUpdateReleasesLock(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		db.Update(context.Background(), func(tx *Tx) error {
			tx.Put("t", "k", 1)
			panic("in fn")
		})
	}()
	put(t, db, "t", "after", 1)
	checkState(t, db, map[string]map[string]string{"t": {"after": "1"}})
}

func TestCanceledContextRunsNothing(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := db.Update(ctx, func(tx *Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("Update: %v (fn ran: %v)", err, ran)
	}
}

func TestClosedStore(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(context.Background(), func(tx *Tx) error { return nil }); !errors.Is(err, record.ErrUnavailable) {
		t.Errorf("Update after Close: %v", err)
	}
	if err := db.View(func(tx *ReadTx) error { return nil }); !errors.Is(err, record.ErrUnavailable) {
		t.Errorf("View after Close: %v", err)
	}
	if err := db.Close(); err == nil {
		t.Error("second Close succeeded")
	}
}

func TestPutRejectsBadInput(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	for _, tc := range []struct {
		table, key string
		v          any
	}{
		{"", "k", 1},
		{"t", "", 1},
		{"t", "\xff", 1},
		{"\xfe", "k", 1},
		{"t", "k", make(chan int)},
		{"t", "k", math.Inf(1)},
		{"t", "k", json.RawMessage(`{"a":`)},
	} {
		err := db.Update(context.Background(), func(tx *Tx) error { return tx.Put(tc.table, tc.key, tc.v) })
		if err == nil {
			t.Errorf("Put(%q, %q, %v) succeeded", tc.table, tc.key, tc.v)
		}
	}
	checkState(t, db, map[string]map[string]string{})
}

func TestTxReadsOwnWrites(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	put(t, db, "t", "a1", 1)
	put(t, db, "t", "a2", 2)
	put(t, db, "t", "b1", 3)
	put(t, db, "u", "x", 4)
	scan := func(r Reader, prefix string) string {
		var out []string
		r.Scan("t", prefix, func(k string, v json.RawMessage) bool {
			out = append(out, k+"="+string(v))
			return true
		})
		return strings.Join(out, " ")
	}
	err := db.Update(context.Background(), func(tx *Tx) error {
		tx.Put("t", "a3", 5)
		tx.Put("t", "a1", 10)
		tx.Delete("t", "a2")
		tx.Put("t", "a0", 0)
		tx.Delete("t", "a0") // put then delete in one Update
		if got := scan(tx, "a"); got != "a1=10 a3=5" {
			t.Errorf("Tx.Scan(a) = %q", got)
		}
		if got := scan(tx, ""); got != "a1=10 a3=5 b1=3" {
			t.Errorf("Tx.Scan() = %q", got)
		}
		if n := tx.Count("t"); n != 3 {
			t.Errorf("Tx.Count = %d, want 3", n)
		}
		if _, ok := tx.Get("t", "a2"); ok {
			t.Error("Tx.Get sees its own deletion's victim")
		}
		if v, ok := tx.Get("t", "a1"); !ok || string(v) != "10" {
			t.Errorf("Tx.Get(a1) = %s, %v", v, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *ReadTx) error {
		if got := scan(tx, ""); got != "a1=10 a3=5 b1=3" {
			t.Errorf("ReadTx.Scan() = %q", got)
		}
		if got := scan(tx, "b"); got != "b1=3" {
			t.Errorf("ReadTx.Scan(b) = %q", got)
		}
		var first []string
		tx.Scan("t", "", func(k string, _ json.RawMessage) bool { first = append(first, k); return false })
		if len(first) != 1 || first[0] != "a1" {
			t.Errorf("Scan did not stop: %v", first)
		}
		if n := tx.Count("t"); n != 3 {
			t.Errorf("ReadTx.Count = %d", n)
		}
		// Get returns a copy.
		v, _ := tx.Get("u", "x")
		v[0] = '9'
		if v, _ := tx.Get("u", "x"); string(v) != "4" {
			t.Errorf("Get result aliases the store: %s", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInsert(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	ctx := context.Background()
	insert := func(v int) error {
		return db.Update(ctx, func(tx *Tx) error { return tx.Insert("t", "k", v) })
	}
	if err := insert(1); err != nil {
		t.Fatal(err)
	}
	if err := insert(2); !errors.Is(err, record.ErrExists) {
		t.Fatalf("second Insert: %v, want ErrExists", err)
	}
	del(t, db, "t", "k")
	if err := insert(3); err != nil {
		t.Fatalf("Insert after Delete: %v", err)
	}
	checkState(t, db, map[string]map[string]string{"t": {"k": "3"}})
}

func TestCompareAndSet(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	type code struct {
		Client string `json:"client"`
		Used   bool   `json:"used"`
	}
	cas := func(old, next code) error {
		return db.Update(context.Background(), func(tx *Tx) error { return tx.CompareAndSet("codes", "c", old, next) })
	}
	unused, used := code{"app_1", false}, code{"app_1", true}
	if err := cas(unused, used); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("CAS on absent key: %v, want ErrNotFound", err)
	}
	put(t, db, "codes", "c", unused)
	if err := cas(unused, used); err != nil {
		t.Fatalf("CAS: %v", err)
	}
	if err := cas(unused, used); !errors.Is(err, ErrConflict) {
		t.Fatalf("second CAS: %v, want ErrConflict", err)
	}
	checkState(t, db, map[string]map[string]string{"codes": {"c": `{"client":"app_1","used":true}`}})

	// Exactly one of many concurrent redemptions wins.
	put(t, db, "codes", "c", unused)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 50 {
		wg.Go(func() {
			err := cas(unused, used)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrConflict):
				t.Errorf("CAS: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d concurrent CAS succeeded, want 1", won)
	}
}

func TestIncrement(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{})
	defer db.Close()
	inc := func(limit int64) (n int64, err error) {
		err = db.Update(context.Background(), func(tx *Tx) error {
			n, err = tx.Increment("n", "k", limit)
			return err
		})
		return n, err
	}
	for want := int64(1); want <= 3; want++ {
		if n, err := inc(3); n != want || err != nil {
			t.Fatalf("Increment = %d, %v; want %d", n, err, want)
		}
	}
	if n, err := inc(3); n != 3 || !errors.Is(err, ErrLimit) {
		t.Fatalf("Increment at limit = %d, %v; want 3, ErrLimit", n, err)
	}
	if n, err := inc(math.MaxInt64); n != 4 || err != nil {
		t.Fatalf("Increment with a higher limit = %d, %v", n, err)
	}
	put(t, db, "n", "k", "text")
	if _, err := inc(10); err == nil {
		t.Fatal("Increment of a non-counter succeeded")
	}

	// Concurrent increments never pass the limit.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, limited := 0, 0
	for range 50 {
		wg.Go(func() {
			err := db.Update(context.Background(), func(tx *Tx) error {
				_, err := tx.Increment("n", "race", 10)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrLimit):
				limited++
			default:
				t.Errorf("Increment: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 10 || limited != 40 {
		t.Fatalf("%d increments succeeded, %d hit the limit; want 10 and 40", ok, limited)
	}
	if v, _ := getRaw(t, db, "n", "race"); string(v) != "10" {
		t.Fatalf("counter = %s, want 10", v)
	}
}

// Concurrent random Updates and Views agree with a sequential model: a
// check of the overlay, publication and compaction under contention.
func TestConcurrentModel(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{CompactAfter: 16})
	const writers, each, keys = 8, 60, 12
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range each {
				k := fmt.Sprint(rng.IntN(keys))
				// Each key holds a counter; deleting it counts as a reset
				// recorded in a second table, so the total is checkable.
				err := db.Update(context.Background(), func(tx *Tx) error {
					if rng.IntN(5) == 0 {
						if v, ok := tx.Get("c", k); ok {
							var n int64
							json.Unmarshal(v, &n)
							tx.Delete("c", k)
							_, err := tx.Increment("reset", k+"-"+fmt.Sprint(n), math.MaxInt64)
							return err
						}
					}
					_, err := tx.Increment("c", k, math.MaxInt64)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				db.View(func(tx *ReadTx) error {
					tx.Scan("c", "", func(string, json.RawMessage) bool { return true })
					return nil
				})
			}
		})
	}
	wg.Wait()
	total := func(db *DB) int64 {
		var sum int64
		db.View(func(tx *ReadTx) error {
			tx.Scan("c", "", func(_ string, v json.RawMessage) bool {
				var n int64
				json.Unmarshal(v, &n)
				sum += n
				return true
			})
			tx.Scan("reset", "", func(k string, v json.RawMessage) bool {
				var n, times int64
				fmt.Sscanf(k[strings.IndexByte(k, '-')+1:], "%d", &n)
				json.Unmarshal(v, &times)
				sum += n * times
				return true
			})
			return nil
		})
		return sum
	}
	// Each of the writers*each Updates either added one or moved a count
	// into "reset"; resets are the only Updates that add nothing.
	resets := int64(0)
	db.View(func(tx *ReadTx) error {
		tx.Scan("reset", "", func(_ string, v json.RawMessage) bool {
			var times int64
			json.Unmarshal(v, &times)
			resets += times
			return true
		})
		return nil
	})
	if got, want := total(db), int64(writers*each)-resets; got != want {
		t.Fatalf("total %d, want %d", got, want)
	}
	want := dump(t, db)
	db.Close()
	db = mustOpen(t, dir, Options{})
	defer db.Close()
	checkState(t, db, want)
}

// writeJSONString's fast path must produce what encoding/json produces.
func TestWriteJSONStringMatchesMarshal(t *testing.T) {
	for _, s := range []string{
		"", "app_0123", "0x" + strings.Repeat("ab", 32), `q"uote`, `back\slash`, "<&>", "tab\t",
		"\x7f", "é", "\u2028", "\xff", "nul\x00", "~ !#$%'()*+,-./:;=?@[]^_`{|}",
	} {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		writeJSONString(w, s)
		w.Flush()
		want, _ := json.Marshal(s)
		if buf.String() != string(want) {
			t.Errorf("writeJSONString(%q) = %s, want %s", s, buf.String(), want)
		}
	}
}

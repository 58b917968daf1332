package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func put(t testing.TB, db *DB, table, key string, v any) {
	t.Helper()
	if err := db.Update(context.Background(), func(tx *Tx) error { return tx.Put(table, key, v) }); err != nil {
		t.Fatalf("Update put %s/%s: %v", table, key, err)
	}
}

func del(t testing.TB, db *DB, table, key string) {
	t.Helper()
	if err := db.Update(context.Background(), func(tx *Tx) error { tx.Delete(table, key); return nil }); err != nil {
		t.Fatalf("Update delete %s/%s: %v", table, key, err)
	}
}

// dump returns the whole visible state as table → key → value.
func dump(t testing.TB, db *DB) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	err := db.View(func(tx *ReadTx) error {
		out = plain(tx.base)
		return nil
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	return out
}

// plain returns st as table → key → value.
func plain(st State) map[string]map[string]string {
	out := map[string]map[string]string{}
	for name, rows := range st.tables {
		out[name] = map[string]string{}
		rows.each(func(k, v string) bool { out[name][k] = v; return true })
	}
	return out
}

// stateOf returns a state holding tables, packed by codecs.
func stateOf(codecs map[string]Codec, tables map[string]map[string]string) State {
	st := newState(codecs)
	for name, rows := range tables {
		for k, v := range rows {
			st.table(name).set(k, v)
		}
	}
	return st
}

func checkState(t testing.TB, db *DB, want map[string]map[string]string) {
	t.Helper()
	sameState(t, "state", dump(t, db), want)
}

func sameState(t testing.TB, what string, got, want map[string]map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has tables %v, want %v", what, got, want)
	}
	for name, rows := range want {
		if len(got[name]) != len(rows) {
			t.Fatalf("%s: table %q = %v, want %v", what, name, got[name], rows)
		}
		for k, v := range rows {
			if got[name][k] != v {
				t.Fatalf("%s: %s/%s = %q, want %q", what, name, k, got[name][k], v)
			}
		}
	}
}

func journalPath(dir string) string  { return filepath.Join(dir, journalName) }
func snapshotPath(dir string) string { return filepath.Join(dir, snapshotName) }

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// journalLines returns the journal's lines, newlines included.
func journalLines(t testing.TB, dir string) [][]byte {
	t.Helper()
	lines := bytes.SplitAfter(readFile(t, journalPath(dir)), []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// openWithFiles opens a store whose files are the given snapshot (nil:
// none) and journal.
func openWithFiles(t testing.TB, snapshot, journal []byte) (*DB, error) {
	t.Helper()
	dir := t.TempDir()
	if snapshot != nil {
		writeFile(t, snapshotPath(dir), snapshot)
	}
	writeFile(t, journalPath(dir), journal)
	db, err := Open(dir, Options{})
	if err == nil {
		t.Cleanup(func() { db.Close() })
	}
	return db, err
}

// encodedLine is encodeLine for tests.
func encodedLine(t testing.TB, lsn uint64, changes ...change) []byte {
	t.Helper()
	line, err := encodeLine(entry{LSN: lsn, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func putChange(table, key, value string) change {
	return change{Op: opPut, Table: table, Key: key, Value: json.RawMessage(value)}
}

func wantErrContains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

// faultyFile wraps the journal (or any file the store writes) so tests can
// make writes and fsyncs fail, block, or count them.
type faultyFile struct {
	file
	mu       sync.Mutex
	writeErr error
	syncErr  error
	syncs    int
	gate     chan struct{} // if set, each Sync waits for a token
	entered  chan struct{} // if set, each Sync announces itself first
}

func (f *faultyFile) Write(b []byte) (int, error) {
	f.mu.Lock()
	err := f.writeErr
	f.mu.Unlock()
	if err != nil {
		// A failing write may still have written part of the data.
		n, _ := f.file.Write(b[:len(b)/2])
		return n, err
	}
	return f.file.Write(b)
}

func (f *faultyFile) Sync() error {
	f.mu.Lock()
	err, gate, entered := f.syncErr, f.gate, f.entered
	f.syncs++
	f.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	if err != nil {
		return err
	}
	return f.file.Sync()
}

func (f *faultyFile) set(fn func(f *faultyFile)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// openFaulty opens dir with its journal wrapped in a faultyFile.
func openFaulty(t testing.TB, dir string, opts Options) (*DB, *faultyFile) {
	t.Helper()
	var journal *faultyFile
	opts.openFile = func(name string, flag int) (file, error) {
		f, err := openOSFile(name, flag)
		if err != nil || filepath.Base(name) != journalName {
			return f, err
		}
		journal = &faultyFile{file: f}
		return journal, nil
	}
	db := mustOpen(t, dir, opts)
	return db, journal
}

// withLineCRC completes covered, the part of a journal line the checksum
// covers, into a line with a valid checksum.
func withLineCRC(covered []byte) []byte {
	line := append(bytes.Clone(covered), crcMember...)
	line = appendCRC(line, covered)
	return append(line, lineSuffix+"\n"...)
}

// eventually polls cond until it holds, and fails the test if it does not
// within timeout; what names the awaited event in the failure.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

func mustOpen(t testing.TB, dir string, opts Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

// testCodecs packs table "packed": keys "<group>/<64 lowercase hex>" with
// values that are JSON numbers below 2^32.
var testCodecs = map[string]Codec{"packed": hexCodec{}}

// hexCodec is the tests' codec: a record is the key's 32 bytes and the
// value as a little-endian uint32, which is its second key.
type hexCodec struct{}

func (hexCodec) Name() string              { return "test-hex/1" }
func (hexCodec) Size() (record, key int)   { return 36, 32 }
func (hexCodec) SecondKey() (from, to int) { return 32, 36 }

func (hexCodec) Split(key string) (group, rest string, ok bool) {
	i := strings.LastIndexByte(key, '/')
	return key[:i+1], key[i+1:], i >= 0
}

func (hexCodec) PackKey(dst []byte, rest string) bool {
	n, err := hex.Decode(dst, []byte(rest))
	return err == nil && n == 32 && len(rest) == 64
}

func (c hexCodec) Pack(dst []byte, rest string, value []byte) bool {
	n, err := strconv.ParseUint(string(value), 10, 32)
	binary.LittleEndian.PutUint32(dst[32:], uint32(n))
	return err == nil && c.PackKey(dst[:32], rest)
}

func (hexCodec) Unpack(rec []byte) (rest string, value []byte) {
	return hex.EncodeToString(rec[:32]), strconv.AppendUint(nil, uint64(binary.LittleEndian.Uint32(rec[32:])), 10)
}

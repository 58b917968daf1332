package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ErrDataLoss marks an Open refused because the files hold less than the
// store had acknowledged: a missing state.json or journal.jsonl, or one
// older than the mark (doc.go, "Never a silent reset"). Options.AcceptLoss
// opens such a store anyway.
var ErrDataLoss = errors.New("acknowledged data is missing")

// The mark (doc.go, "Mark"): one line `{"lsn":N,"crc":"xxxxxxxx"}` with
// the CRC-32C of what precedes `,"crc":"`, like a journal line.

// encodeMark returns the mark file's content for lsn.
func encodeMark(lsn uint64) []byte {
	body := strconv.AppendUint([]byte(`{"lsn":`), lsn, 10)
	line := append(body, crcMember...)
	line = appendCRC(line, body)
	return append(line, lineSuffix+"\n"...)
}

// loadMark reads the mark: the newest LSN the store had acknowledged when
// it was last written. found is false if there is none (a new store, or
// one from before marks).
func loadMark(path string) (lsn uint64, found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: %w", err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return 0, false, fmt.Errorf("store: %s: %w: the mark is incomplete", path, ErrDataLoss)
	}
	covered, err := checkLineCRC(b[:len(b)-1])
	if err != nil {
		return 0, false, fmt.Errorf("store: %s: %w: %w", path, ErrDataLoss, err)
	}
	var m struct {
		LSN *uint64 `json:"lsn"`
	}
	if err := json.Unmarshal(append(covered, '}'), &m); err != nil || m.LSN == nil {
		return 0, false, fmt.Errorf("store: %s: %w: the mark does not parse (%v)", path, ErrDataLoss, err)
	}
	return *m.LSN, true, nil
}

// writeMark records lsn, which must be durable, as the mark: temporary
// file, fsync, rename, directory fsync, so that a crash leaves the old mark
// or the new one.
func (db *DB) writeMark(lsn uint64) error {
	final := filepath.Join(db.dir, markName)
	tmp := final + ".tmp"
	f, err := db.openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("write mark: %w", err)
	}
	_, err = f.Write(encodeMark(lsn))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err == nil {
		err = syncDir(db.dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write mark: %w", err)
	}
	db.marked, db.lastMark = lsn, time.Now()
	return nil
}

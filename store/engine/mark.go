package engine

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// The mark (doc.go, "Mark"): one line `{"lsn":N,"id":"…","crc":"xxxxxxxx"}`
// with the CRC-32C of what precedes `,"crc":"`, like a journal line. A mark
// from before store identities has no id.

// Mark is what the mark records: the store's identity (ID, random, chosen
// when the store got its first mark) and an LSN the store had made durable.
type Mark struct {
	ID  string
	LSN uint64
}

// Witness keeps a second copy of the mark outside the store's files
// (doc.go, "Never a silent reset"), so that deleting or replacing those
// files together with the mark does not go unnoticed.
type Witness interface {
	// Load returns the recorded mark; found is false if there is none yet.
	// An error wrapping ErrDataLoss means the record exists but is damaged.
	Load() (m Mark, found bool, err error)
	// Save records m. The store calls it after each mark it writes, from
	// one goroutine at a time.
	Save(m Mark) error
	// String names the record in errors, e.g. its path.
	String() string
}

// idBytes is the size of a store identity: 128 random bits, so that two
// stores never share one.
const idBytes = 16

// newID returns a random store identity from rand.
func newID(rand io.Reader) (string, error) {
	var b [idBytes]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("store: identity: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// encodeMark returns the mark file's content for m.
func encodeMark(m Mark) []byte {
	body := strconv.AppendUint([]byte(`{"lsn":`), m.LSN, 10)
	if m.ID != "" {
		body = strconv.AppendQuote(append(body, `,"id":`...), m.ID)
	}
	line := append(body, crcMember...)
	line = appendCRC(line, body)
	return append(line, lineSuffix+"\n"...)
}

// loadMark reads the mark: the store's identity and the newest LSN it had
// acknowledged when the mark was last written. found is false if there is
// none (a new store, or one from before marks).
func loadMark(path string) (m Mark, found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Mark{}, false, nil
	}
	if err != nil {
		return Mark{}, false, fmt.Errorf("store: %w", err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return Mark{}, false, fmt.Errorf("store: %s: %w: the mark is incomplete", path, ErrDataLoss)
	}
	covered, err := checkLineCRC(b[:len(b)-1])
	if err != nil {
		return Mark{}, false, fmt.Errorf("store: %s: %w: %w", path, ErrDataLoss, err)
	}
	var v struct {
		LSN *uint64 `json:"lsn"`
		ID  string  `json:"id"`
	}
	if err := json.Unmarshal(append(covered, '}'), &v); err != nil || v.LSN == nil {
		return Mark{}, false, fmt.Errorf("store: %s: %w: the mark does not parse (%v)", path, ErrDataLoss, err)
	}
	return Mark{ID: v.ID, LSN: *v.LSN}, true, nil
}

// writeMark records lsn, which must be durable, and the store's identity
// as the mark: temporary file, fsync, rename, directory fsync, so that a
// crash leaves the old mark or the new one; then in the witness, if any.
func (db *DB) writeMark(lsn uint64) error {
	final := filepath.Join(db.dir, markName)
	tmp := final + ".tmp"
	f, err := db.openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("write mark: %w", err)
	}
	m := Mark{ID: db.id, LSN: lsn}
	_, err = f.Write(encodeMark(m))
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
	if db.witness != nil {
		if err := db.witness.Save(m); err != nil {
			return fmt.Errorf("write mark to %s: %w", db.witness, err)
		}
	}
	return nil
}

package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"worldid/store"
)

// AdminTokenFile is the admin bearer token, mode 0600, inside the data dir.
const AdminTokenFile = "admin.token"

// prepareDataDir creates the data directory (0700) if needed and returns
// the admin token, creating it on first start.
func prepareDataDir(dir string, rand io.Reader) (token string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	// An existing dir may have been created by hand with a looser mode:
	// it holds keys and the admin token.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, AdminTokenFile)
	b, err := os.ReadFile(path)
	if err == nil {
		token = strings.TrimSpace(string(b))
		if len(token) < 32 {
			return "", fmt.Errorf("%s: token is too short; delete the file to create a new one", path)
		}
		return token, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("data dir: %w", err)
	}
	var raw [32]byte
	if _, err := io.ReadFull(rand, raw[:]); err != nil {
		return "", err
	}
	token = hex.EncodeToString(raw[:])
	if err := writeFileAtomic(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	return token, nil
}

// FirstStartFile records that the data dir's first start completed. Every
// first-start step before it (admin token, keys, store) is idempotent, so
// a first start that was interrupted, say during the proving-key setup,
// is simply run again, demo app included.
//
// With the JSON store it is also the store's witness (firstStartRecord):
// it carries the store's identity and the newest LSN the store had
// acknowledged when it last wrote its mark, so that a store whose files
// were deleted or replaced together with store.mark is refused rather than
// started empty or older.
const FirstStartFile = "first-start.done"

// firstStartLine is the record's first line, all a record from before the
// witness holds.
const firstStartLine = "the first start of this data dir completed"

// firstStartDone reports whether FirstStartFile exists.
func firstStartDone(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, FirstStartFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// markFirstStartDone writes FirstStartFile, through rec when the JSON store
// keeps its witness there (nil otherwise); DemoAppFile is then of no use.
func markFirstStartDone(dir string, rec *firstStartRecord) error {
	var err error
	if rec != nil {
		err = rec.markDone()
	} else {
		err = writeFileAtomic(filepath.Join(dir, FirstStartFile), []byte(firstStartLine+"\n"), 0o600)
	}
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, DemoAppFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// firstStartRecord is the JSON store's witness (store.Witness) kept in
// FirstStartFile, a file outside the store's own:
//
//	the first start of this data dir completed
//	store-id 00112233445566778899aabbccddeeff
//	acknowledged-lsn 42
//
// It is written only once the first start is done (before that, a missing
// store is a first start that did not finish), then whenever the store
// writes its mark: at start, at shutdown, and within a second of writes.
type firstStartRecord struct {
	path string
	mu   sync.Mutex
	done bool       // FirstStartFile exists: the first start completed
	last store.Mark // the newest mark the store saved
}

func newFirstStartRecord(dir string) *firstStartRecord {
	return &firstStartRecord{path: filepath.Join(dir, FirstStartFile)}
}

func (r *firstStartRecord) String() string { return r.path }

// Load reads the record. A file from before the witness (its first line
// alone) is a completed first start without a record; anything else that
// does not parse is damaged, an error wrapping store.ErrDataLoss.
func (r *firstStartRecord) Load() (store.Mark, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := os.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return store.Mark{}, false, nil
	}
	if err != nil {
		return store.Mark{}, false, err
	}
	r.done = true
	m, found, ok := parseFirstStartRecord(string(b))
	if !ok {
		return store.Mark{}, false, fmt.Errorf("damaged (want the lines %q, \"store-id ID\" and \"acknowledged-lsn N\"): %w", firstStartLine, store.ErrDataLoss)
	}
	return m, found, nil
}

// parseFirstStartRecord parses the record's content; found is false for a
// record from before the witness.
func parseFirstStartRecord(s string) (m store.Mark, found, ok bool) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if lines[0] != firstStartLine {
		return m, false, false
	}
	if len(lines) == 1 {
		return m, false, true
	}
	id, idOK := strings.CutPrefix(lines[1], "store-id ")
	lsn, lsnOK := "", false
	if len(lines) == 3 {
		lsn, lsnOK = strings.CutPrefix(lines[2], "acknowledged-lsn ")
	}
	n, err := strconv.ParseUint(lsn, 10, 64)
	if !idOK || !lsnOK || err != nil || id == "" || strings.ContainsAny(id, " \t") {
		return m, false, false
	}
	return store.Mark{ID: id, LSN: n}, true, true
}

// Save records m, in the file once the first start is done.
func (r *firstStartRecord) Save(m store.Mark) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = m
	if !r.done {
		return nil
	}
	return r.write()
}

// markDone completes the first start: the record with the newest mark.
func (r *firstStartRecord) markDone() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	return r.write()
}

func (r *firstStartRecord) write() error {
	content := fmt.Sprintf("%s\nstore-id %s\nacknowledged-lsn %d\n", firstStartLine, r.last.ID, r.last.LSN)
	return writeFileAtomic(r.path, []byte(content), 0o600)
}

// forgetStoreRecord drops the store's identity and LSN from a completed
// first start's record: a restore replaced the store, which gets a new
// identity when it is next opened.
func forgetStoreRecord(dir string) error {
	done, err := firstStartDone(dir)
	if err != nil || !done {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, FirstStartFile), []byte(firstStartLine+"\n"), 0o600)
}

// openJSONStore opens the JSON store in the data dir with its witness in
// FirstStartFile. A store whose files hold less than it had acknowledged
// is refused with the recovery command. A done ctx stops the opening
// (store.OpenContext), changing nothing on disk.
func openJSONStore(ctx context.Context, cfg Config, log *slog.Logger) (*store.DB, *firstStartRecord, error) {
	rec := newFirstStartRecord(cfg.DataDir)
	log.Info("store: opening", "dir", cfg.DataDir)
	db, err := store.OpenContext(ctx, cfg.DataDir, store.Options{AcceptLoss: cfg.AcceptDataLoss, Log: log, Witness: rec})
	if errors.Is(err, store.ErrDataLoss) {
		return nil, nil, fmt.Errorf("%w\nRestore the data dir from a backup (worldid restore -force); or, to start with what its files hold and lose the rest, start once with -accept-data-loss:\n  worldid serve -data %s -accept-data-loss", err, cfg.DataDir)
	}
	if err != nil {
		return nil, nil, err
	}
	return db, rec, nil
}

// DemoAppFile holds the id of the demo app a first start is creating,
// until the first start is done (createDemoApp).
const DemoAppFile = "first-start.demo-app"

// pendingDemoApp returns the id in DemoAppFile, or "" if there is none.
func pendingDemoApp(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, DemoAppFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(b)), err
}

// ReadAdminToken reads the token the CLI presents to the admin API.
func ReadAdminToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, AdminTokenFile))
	if err != nil {
		return "", fmt.Errorf("admin token: %w (is -data the server's data directory?)", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeFileAtomic writes via a synced temp file and rename, so a crash
// leaves either the old file or the new one.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

package server

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
const FirstStartFile = "first-start.done"

// firstStartDone reports whether FirstStartFile exists.
func firstStartDone(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, FirstStartFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// markFirstStartDone writes FirstStartFile; DemoAppFile is then of no use.
func markFirstStartDone(dir string) error {
	if err := writeFileAtomic(filepath.Join(dir, FirstStartFile), []byte("the first start of this data dir completed\n"), 0o600); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, DemoAppFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
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

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// memShared is sharedFiles in memory, with PostgreSQL's first-wins rule.
type memShared struct {
	mu    sync.Mutex
	files map[string][]byte
	err   error
}

func (m *memShared) SharedFile(_ context.Context, name string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	return b, ok, m.err
}

func (m *memShared) StoreSharedFile(_ context.Context, name string, content []byte, _ time.Time) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; !ok {
		m.files[name] = content
	}
	return m.files[name], m.err
}

func TestKeyFileLoad(t *testing.T) {
	creates := 0
	file := func(cached bool) keyFile {
		return keyFile{name: "k", cached: cached, create: func() ([]byte, error) {
			creates++
			return []byte("created"), nil
		}}
	}
	local := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "k"))
		if errors.Is(err, os.ErrNotExist) {
			return "<none>"
		}
		return string(b)
	}
	for _, tc := range []struct {
		name       string
		cached     bool
		db, file   string // "" for none
		want       string
		wantErr    string
		wantCreate int
		wantDB     string
		wantFile   string
	}{
		{name: "JSON store, first start", want: "created", wantCreate: 1, wantFile: "created"},
		{name: "JSON store, later start", file: "mine", want: "mine", wantFile: "mine"},
		{name: "first replica creates", cached: true, want: "created", wantCreate: 1, wantDB: "created", wantFile: "created"},
		{name: "secret stays in the store", want: "created", wantCreate: 1, wantDB: "created", wantFile: "<none>"},
		{name: "first replica adopts its file", file: "mine", want: "mine", wantDB: "mine", wantFile: "mine"},
		{name: "later replica adopts the store's", cached: true, db: "theirs", want: "theirs", wantDB: "theirs", wantFile: "theirs"},
		{name: "same file as the store", db: "theirs", file: "theirs", want: "theirs", wantDB: "theirs", wantFile: "theirs"},
		{name: "different file", db: "theirs", file: "mine", wantErr: "differs from the one in the store", wantDB: "theirs", wantFile: "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creates = 0
			dir := t.TempDir()
			if tc.file != "" {
				os.WriteFile(filepath.Join(dir, "k"), []byte(tc.file), 0o600)
			}
			var shared sharedFiles // nil: the JSON store
			mem := &memShared{files: map[string][]byte{}}
			if tc.wantDB != "" {
				shared = mem
				if tc.db != "" {
					mem.files["k"] = []byte(tc.db)
				}
			}
			got, err := file(tc.cached).load(context.Background(), dir, shared, time.Now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if creates != tc.wantCreate {
				t.Errorf("create ran %d times, want %d", creates, tc.wantCreate)
			}
			if string(mem.files["k"]) != tc.wantDB {
				t.Errorf("store holds %q, want %q", mem.files["k"], tc.wantDB)
			}
			if f := local(dir); f != tc.wantFile {
				t.Errorf("data dir holds %q, want %q", f, tc.wantFile)
			}
		})
	}
}

func TestKeyFileStoreErrors(t *testing.T) {
	shared := &memShared{files: map[string][]byte{}, err: errors.New("store down")}
	k := keyFile{name: "k", create: func() ([]byte, error) { return []byte("x"), nil }}
	if _, err := k.load(context.Background(), t.TempDir(), shared, time.Now); err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("err = %v", err)
	}
	k.create = func() ([]byte, error) { return nil, errors.New("no entropy") }
	if _, err := k.load(context.Background(), t.TempDir(), &memShared{files: map[string][]byte{}}, time.Now); err == nil || !strings.Contains(err.Error(), "no entropy") {
		t.Fatalf("err = %v", err)
	}
}

// TestLocalKeyStart: a start reads the verifying key file, never the
// proving key; a data dir or store from before that file gets it derived
// from the proving key; a verifying key without its proving key stops the
// start rather than run a setup that would not match it.
func TestLocalKeyStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the depth-30 setup")
	}
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	log := slog.New(slog.DiscardHandler)
	pk, vk, err := runLocalSetup(log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(t *testing.T, dir string, shared sharedFiles, wantVK []byte) {
		t.Helper()
		got, pkPath, err := loadOrCreateLocalKey(ctx, dir, shared, log)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(got); !bytes.Equal(b, wantVK) {
			t.Error("returned a different verifying key")
		}
		if pkPath != filepath.Join(dir, ProvingKeyFile) {
			t.Errorf("proving key path %s", pkPath)
		}
		if !bytes.Equal(read(dir, VerifyingKeyFile), wantVK) {
			t.Error("data dir holds a different verifying key")
		}
	}

	t.Run("later start reads only the verifying key", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ProvingKeyFile), []byte("not a proving key"), 0o600)
		os.WriteFile(filepath.Join(dir, VerifyingKeyFile), vk, 0o600)
		check(t, dir, nil, vk)
	})
	t.Run("data dir from before the verifying key", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ProvingKeyFile), pk, 0o600)
		check(t, dir, nil, vk)
	})
	t.Run("store from before the verifying key", func(t *testing.T) {
		dir := t.TempDir()
		mem := &memShared{files: map[string][]byte{ProvingKeyFile: pk}}
		check(t, dir, mem, vk)
		if !bytes.Equal(mem.files[VerifyingKeyFile], vk) || !bytes.Equal(read(dir, ProvingKeyFile), pk) {
			t.Error("the derived key is not shared, or the proving key not cached")
		}
	})
	t.Run("replica adopts both", func(t *testing.T) {
		dir := t.TempDir()
		check(t, dir, &memShared{files: map[string][]byte{ProvingKeyFile: pk, VerifyingKeyFile: vk}}, vk)
	})
	t.Run("verifying key without proving key", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, VerifyingKeyFile), vk, 0o600)
		if _, _, err := loadOrCreateLocalKey(ctx, dir, nil, log); err == nil || !strings.Contains(err.Error(), "restore the proving key") {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ProvingKeyFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a proving key was made: %v", err)
		}
	})
	t.Run("setup that loses the race to another replica", func(t *testing.T) {
		// The store looks empty, but another replica's key is stored
		// first: this replica's setup runs, and the verifying key must be
		// the winner's, derived from the proving key in use.
		dir := t.TempDir()
		check(t, dir, &lateShared{memShared{files: map[string][]byte{}}, pk}, vk)
		if !bytes.Equal(read(dir, ProvingKeyFile), pk) {
			t.Error("data dir caches a proving key other than the store's")
		}
	})
}

// lateShared is memShared where another replica stores the proving key
// between this replica's look-up and its own store.
type lateShared struct {
	memShared
	theirs []byte
}

func (l *lateShared) StoreSharedFile(ctx context.Context, name string, content []byte, now time.Time) ([]byte, error) {
	if name == ProvingKeyFile {
		l.memShared.StoreSharedFile(ctx, name, l.theirs, now)
	}
	return l.memShared.StoreSharedFile(ctx, name, content, now)
}

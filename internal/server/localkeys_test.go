package server

import (
	"context"
	"errors"
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

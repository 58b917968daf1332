package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"worldid/backup"
	"worldid/record"
	"worldid/store"
	"worldid/store/postgres"
	"worldid/store/postgres/pgtest"
)

func writeBackup(t *testing.T, files ...backup.File) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := backup.NewWriter(&buf, "json", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	app := record.App{ID: "app_00000000000000000000000000000001", RPID: "rp_0000000000000001", Name: "a", RedirectURIs: []string{}}
	if err := w.Row(backup.TableApps, app); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := w.Row(backup.TableFiles, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A restore refused by the store leaves no key file behind; an accepted
// one writes them 0600 next to the store.
func TestRestoreDataDir(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	seed := backup.File{Name: IssuerKeyFile, Content: []byte("00\n")}
	file := writeBackup(t, seed)

	busy := t.TempDir()
	db, err := store.Open(busy, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateApp(ctx, record.App{ID: "app_x", RPID: "rp_x"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	checkpoint := dirCheckpoints{filepath.Join(busy, TreeCheckpointDir)}
	if err := checkpoint.WriteCheckpoint(ctx, "orb/production", []byte("the tree of the replaced store")); err != nil {
		t.Fatal(err)
	}
	_, err = Restore(ctx, RestoreOptions{File: file, DataDir: busy}, log)
	if !errors.Is(err, store.ErrNotEmpty) || !strings.Contains(err.Error(), "nothing restored") {
		t.Fatalf("restore into a store with records: %v", err)
	}
	entries, _ := os.ReadDir(busy)
	for _, e := range entries {
		if strings.Contains(e.Name(), IssuerKeyFile) {
			t.Errorf("a refused restore left %s", e.Name())
		}
	}

	// Forced, the restore replaces the store and drops the old store's
	// tree checkpoints with it.
	if _, err := Restore(ctx, RestoreOptions{File: file, DataDir: busy, Force: true}, log); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.ReadCheckpoint(ctx, "orb/production"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("a forced restore kept the replaced store's tree checkpoint: %v", err)
	}

	fresh := filepath.Join(t.TempDir(), "new")
	if _, err := Restore(ctx, RestoreOptions{File: file, DataDir: fresh}, log); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(fresh, IssuerKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("restored seed: %v, %v", fi, err)
	}
	if _, err := Restore(ctx, RestoreOptions{File: file, DataDir: fresh}, log); err == nil {
		t.Error("a second restore into the same dir succeeded")
	}
	if _, err := Restore(ctx, RestoreOptions{File: writeBackup(t, backup.File{Name: "../escape", Content: nil}), DataDir: t.TempDir()}, log); err == nil ||
		!strings.Contains(err.Error(), "unexpected file") {
		t.Errorf("a backup naming another file: %v", err)
	}
}

// Migrate verifies the copy before it commits: when the database stores
// something else than it was sent (here a trigger alters every app's
// name), the migration fails and the database keeps nothing.
func TestMigrateRefusesAnAlteredCopy(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dsn := pgtest.FreshSchema(t)
	target, err := postgres.Open(ctx, dsn) // creates the schema
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE FUNCTION alter_name() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.name := NEW.name || '!'; RETURN NEW; END $$;
		CREATE TRIGGER alter_name BEFORE INSERT ON apps FOR EACH ROW EXECUTE FUNCTION alter_name()`); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	src, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := record.App{ID: "app_00000000000000000000000000000001", RPID: "rp_0000000000000001", Name: "a", RedirectURIs: []string{}}
	if err := src.CreateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	src.Close()
	if err := os.WriteFile(filepath.Join(dir, IssuerKeyFile), []byte("00\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	_, err = Migrate(ctx, dir, dsn, log)
	if err == nil || !strings.Contains(err.Error(), "table apps: digest") || !strings.Contains(err.Error(), "nothing copied") {
		t.Fatalf("migrate into a database that alters rows: %v", err)
	}
	if apps, err := target.Apps(ctx); err != nil || len(apps) != 0 {
		t.Errorf("after a refused migration the database holds apps %+v, %v", apps, err)
	}
	if _, found, err := target.SharedFile(ctx, IssuerKeyFile); err != nil || found {
		t.Errorf("after a refused migration the database holds the issuer seed: %v, %v", found, err)
	}

	if _, err := conn.Exec(ctx, "DROP TRIGGER alter_name ON apps"); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, dir, dsn, log); err != nil {
		t.Fatalf("migrate once the database stores what it is sent: %v", err)
	}
	if apps, err := target.Apps(ctx); err != nil || len(apps) != 1 || apps[0].Name != "a" {
		t.Errorf("migrated apps %+v, %v", apps, err)
	}
}

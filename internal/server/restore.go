package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"worldid/backup"
	"worldid/store"
	"worldid/store/postgres"
)

// RestoreOptions says what `worldid restore` restores where.
type RestoreOptions struct {
	File    string // the backup
	DataDir string // the data dir (JSON store and key files) of the restored server
	Store   string // "" for the JSON store in DataDir, or a postgres:// URL
	Force   bool   // replace a non-empty target
}

// Restore checks the whole backup (checksum, structure, counts) before
// writing anything, then loads it into an empty store: the JSON store in
// the data dir (one atomic snapshot, then the key files) or PostgreSQL
// (one transaction, key files included as shared files). A target that
// holds data is refused unless Force. The audit line names "cli".
func Restore(ctx context.Context, o RestoreOptions, log *slog.Logger) (backup.Summary, error) {
	f, err := os.Open(o.File)
	if err != nil {
		return backup.Summary{}, err
	}
	defer f.Close()
	hdr, sum, err := backup.Read(f, nil)
	if err != nil {
		return sum, fmt.Errorf("%s: %w; nothing restored", o.File, err)
	}
	load := func(emit backup.Emit) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, _, err := backup.Read(f, emit)
		return err
	}
	if o.Store != "" {
		db, err := postgres.Open(ctx, o.Store)
		if err != nil {
			return sum, err
		}
		defer db.Close()
		if err := db.Restore(ctx, o.Force, load); err != nil {
			return sum, restoreError(err)
		}
	} else if err := restoreDataDir(o, load); err != nil {
		return sum, err
	}
	log.Info("admin change", "who", "cli", "what", "backup restored", "id", o.File, "taken", hdr.CreatedAt, "source", hdr.Source)
	return sum, nil
}

// restoreDataDir restores into the JSON store of the data dir, then writes
// the key files the backup carries. Key files already there are refused
// unless forced, before anything is written.
func restoreDataDir(o RestoreOptions, load func(backup.Emit) error) error {
	if !o.Force {
		for _, name := range backupFileNames {
			if _, err := os.Stat(filepath.Join(o.DataDir, name)); !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s already holds %s (a server's data dir?): restore into an empty data dir, or use -force; nothing restored: %w",
					o.DataDir, name, store.ErrNotEmpty)
			}
		}
	}
	var files []backup.File
	err := store.Restore(o.DataDir, o.Force, func(emit backup.Emit) error {
		files = files[:0]
		return load(func(table string, row any) error {
			if f, ok := row.(backup.File); ok {
				files = append(files, f)
			}
			return emit(table, row)
		})
	})
	if err != nil {
		return restoreError(err)
	}
	for _, f := range files {
		if !slices.Contains(backupFileNames, f.Name) {
			return fmt.Errorf("the backup holds an unexpected file %q", f.Name)
		}
		if err := writeFileAtomic(filepath.Join(o.DataDir, f.Name), f.Content, 0o600); err != nil {
			return fmt.Errorf("the store was restored but writing %s failed: %w", f.Name, err)
		}
	}
	return nil
}

func restoreError(err error) error {
	if errors.Is(err, store.ErrNotEmpty) || errors.Is(err, postgres.ErrNotEmpty) {
		return fmt.Errorf("%w; use -force to replace it; nothing restored", err)
	}
	return fmt.Errorf("%w; nothing restored", err)
}

// Migrate copies the JSON store and key files of a data dir into an empty
// PostgreSQL database in one transaction, then verifies the copy: every
// table's row count and digest (package backup) must equal the source's.
// It reads the data dir without changing it, and needs the server stopped
// (it takes the store's lock).
func Migrate(ctx context.Context, from, to string, log *slog.Logger) (backup.Summary, error) {
	files, err := dataFiles(ctx, from, nil)
	if err != nil {
		return backup.Summary{}, err
	}
	db, err := postgres.Open(ctx, to)
	if err != nil {
		return backup.Summary{}, err
	}
	defer db.Close()
	var source backup.Digester
	err = db.Restore(ctx, false, func(emit backup.Emit) error {
		source = backup.Digester{}
		copyRow := func(table string, row any) error {
			if err := source.Collect()(table, row); err != nil {
				return err
			}
			return emit(table, row)
		}
		if err := store.ExportDir(ctx, from, copyRow); err != nil {
			return err
		}
		for _, f := range files {
			if err := copyRow(backup.TableFiles, f); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, postgres.ErrNotEmpty) {
		return backup.Summary{}, fmt.Errorf("%w: migrate needs an empty database; nothing copied", err)
	}
	if err != nil {
		return backup.Summary{}, fmt.Errorf("%w; nothing copied", err)
	}
	var copied backup.Digester
	if err := db.Export(ctx, copied.Collect()); err != nil {
		return backup.Summary{}, err
	}
	sharedCopies, err := dataFiles(ctx, "", db)
	if err != nil {
		return backup.Summary{}, err
	}
	for _, f := range sharedCopies {
		copied.Collect()(backup.TableFiles, f)
	}
	want := source.Summary()
	if err := want.Diff(copied.Summary()); err != nil {
		return want, fmt.Errorf("the copy in PostgreSQL differs from the JSON store (the database now holds it; drop it before retrying): %w", err)
	}
	log.Info("admin change", "who", "cli", "what", "JSON store migrated to PostgreSQL", "id", from)
	return want, nil
}

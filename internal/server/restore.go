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
	// The first pass checks the whole file and keeps its key files.
	var files []backup.File
	hdr, sum, err := backup.Read(f, func(table string, row any) error {
		if file, ok := row.(backup.File); ok {
			if !slices.Contains(backupFileNames, file.Name) {
				return fmt.Errorf("unexpected file %q", file.Name)
			}
			files = append(files, file)
		}
		return nil
	})
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
		if err := db.Restore(ctx, o.Force, load, func(readBack func(backup.Emit) error) error {
			return checkCopy(readBack, sum, nil)
		}); err != nil {
			return sum, restoreError(err)
		}
	} else if err := restoreDataDir(o, files, load, sum); err != nil {
		return sum, err
	}
	log.Info("admin change", "who", "cli", "what", "backup restored", "id", o.File, "taken", hdr.CreatedAt, "source", hdr.Source)
	return sum, nil
}

// restoreDataDir restores into the JSON store of the data dir and writes
// the key files the backup carries. Key files already there are refused
// unless forced. The files are staged under temporary names first and
// renamed into place only once the store is restored, so a failure leaves
// neither.
func restoreDataDir(o RestoreOptions, files []backup.File, load func(backup.Emit) error, want backup.Summary) error {
	if !o.Force {
		for _, name := range backupFileNames {
			if _, err := os.Stat(filepath.Join(o.DataDir, name)); !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s already holds %s (a server's data dir?): restore into an empty data dir, or use -force; nothing restored: %w",
					o.DataDir, name, store.ErrNotEmpty)
			}
		}
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return err
	}
	staged := make([]string, len(files))
	defer func() {
		for _, tmp := range staged {
			if tmp != "" {
				os.Remove(tmp)
			}
		}
	}()
	for i, f := range files {
		tmp, err := stageFile(o.DataDir, f.Name, f.Content)
		if err != nil {
			return fmt.Errorf("%w; nothing restored", err)
		}
		staged[i] = tmp
	}
	if err := store.Restore(o.DataDir, o.Force, load, func(readBack func(backup.Emit) error) error {
		return checkCopy(readBack, want, files)
	}); err != nil {
		return restoreError(err)
	}
	// Checkpoints of the trees the store held before are of no use now.
	if err := os.RemoveAll(filepath.Join(o.DataDir, TreeCheckpointDir)); err != nil {
		return fmt.Errorf("the store was restored but removing the old tree checkpoints failed: %w", err)
	}
	for i, f := range files {
		if err := os.Rename(staged[i], filepath.Join(o.DataDir, f.Name)); err != nil {
			return fmt.Errorf("the store was restored but moving %s into place failed: %w", f.Name, err)
		}
		staged[i] = ""
	}
	return syncDir(o.DataDir)
}

// stageFile writes content (0600, fsynced) to a new temporary file next to
// name in dir and returns its path.
func stageFile(dir, name string, content []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, "."+name+".restore*")
	if err != nil {
		return "", err
	}
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(content)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// syncDir makes renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// checkCopy reads a restored copy back, with the files restored beside it,
// and compares every table's row count and digest with want; it runs
// before the restore commits, so a copy that differs is never kept.
func checkCopy(readBack func(backup.Emit) error, want backup.Summary, files []backup.File) error {
	var copied backup.Digester
	if err := readBack(copied.Collect()); err != nil {
		return err
	}
	for _, f := range files {
		if err := copied.Collect()(backup.TableFiles, f); err != nil {
			return err
		}
	}
	if err := want.Diff(copied.Summary()); err != nil {
		return fmt.Errorf("the copy read back differs from its source: %w", err)
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
// PostgreSQL database in one transaction and, before it commits, verifies
// the copy: every table's row count and digest (package backup) must equal
// the source's, or nothing is copied. It reads the data dir without
// changing it, and needs the server stopped (it takes the store's lock).
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
	}, func(readBack func(backup.Emit) error) error {
		return checkCopy(readBack, source.Summary(), nil)
	})
	if errors.Is(err, postgres.ErrNotEmpty) {
		return backup.Summary{}, fmt.Errorf("%w: migrate needs an empty database; nothing copied", err)
	}
	if err != nil {
		return backup.Summary{}, fmt.Errorf("%w; nothing copied", err)
	}
	log.Info("admin change", "who", "cli", "what", "JSON store migrated to PostgreSQL", "id", from)
	return source.Summary(), nil
}

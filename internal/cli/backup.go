package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"worldid/backup"
	"worldid/internal/server"
)

// secretWarning follows every backup: it holds what the data dir holds.
const secretWarning = "worldid: %s holds secrets (the issuer's EdDSA seed, the OIDC signing keys, client secret hashes): " +
	"it was written with mode 0600; keep it as safe as the data directory and encrypt it before it leaves the machine\n"

// Backup runs `worldid backup -o FILE`: it downloads a backup of the
// running server, checks it (checksum and counts), and only then moves it
// to FILE, which must not exist.
func Backup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var af AdminFlags
	var out string
	fs := NewFlagSet("backup", stderr)
	af.Register(fs)
	fs.StringVar(&out, "o", "", "file to write the backup to (must not exist)")
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	if out == "" {
		return UsageError{Err: errors.New("backup: -o FILE is required")}
	}
	c, err := af.Client()
	if err != nil {
		return err
	}
	tmp, err := os.OpenFile(out+".partial", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := os.Lstat(out); err == nil {
		tmp.Close()
		return fmt.Errorf("backup: %s exists; choose a new file", out)
	}
	err = c.Backup(ctx, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	sum, err := checkBackup(tmp.Name())
	if err != nil {
		return fmt.Errorf("backup: the downloaded file is not a complete backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, secretWarning, out)
	return printSummary(stdout, af.JSON, out, sum)
}

func checkBackup(path string) (backup.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return backup.Summary{}, err
	}
	defer f.Close()
	_, sum, err := backup.Read(f, nil)
	return sum, err
}

func printSummary(w io.Writer, asJSON bool, what string, sum backup.Summary) error {
	if asJSON {
		return jsonOut(w, sum)
	}
	var parts []string
	for _, t := range backup.Tables {
		if n := sum.Counts[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	_, err := fmt.Fprintf(w, "%s: %s\n", what, strings.Join(parts, ", "))
	return err
}

// Restore runs `worldid restore -data DIR [-store URL] [-force] FILE`.
func Restore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o server.RestoreOptions
	var asJSON bool
	fs := NewFlagSet("restore", stderr)
	fs.StringVar(&o.DataDir, "data", "./worldid-data", "data directory of the restored server")
	fs.StringVar(&o.Store, "store", "", "restore into this PostgreSQL database (postgres://…) instead of the data dir's JSON store")
	fs.BoolVar(&o.Force, "force", false, "replace what the target holds")
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	if err := parseFlagsWithArgs(fs, args, 1); err != nil {
		return err
	}
	o.File = fs.Arg(0)
	sum, err := server.Restore(ctx, o, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	target := filepath.Clean(o.DataDir)
	if o.Store != "" {
		target = "the PostgreSQL database"
	}
	return printSummary(stdout, asJSON, "restored into "+target, sum)
}

// Migrate runs `worldid migrate -from DATA_DIR -to postgres://…`.
func Migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var from, to string
	var asJSON bool
	fs := NewFlagSet("migrate", stderr)
	fs.StringVar(&from, "from", "./worldid-data", "data directory of the JSON store (the server must be stopped)")
	fs.StringVar(&to, "to", "", "empty PostgreSQL database (postgres://…)")
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	if !strings.HasPrefix(to, "postgres://") && !strings.HasPrefix(to, "postgresql://") {
		return UsageError{Err: errors.New("migrate: -to must be a postgres:// URL")}
	}
	sum, err := server.Migrate(ctx, from, to, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return printSummary(stdout, asJSON, "copied and verified (row counts and digests of every table)", sum)
}

func jsonOut(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

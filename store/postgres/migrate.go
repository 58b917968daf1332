package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrationFiles holds the schema migrations, NNNN_name.sql, applied in
// version order. A migration is never edited once released: Open refuses a
// database whose applied migration differs from the embedded one.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the pg_advisory_lock key that serializes the migrations
// of replicas starting at once ("worldid" in ASCII).
const migrationLock int64 = 0x776f726c646964

type migration struct {
	version int
	name    string
	sql     string
	sum     string // hex SHA-256 of sql
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || version < 1 {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", e.Name())
		}
		if len(ms) > 0 && ms[len(ms)-1].version >= version {
			return nil, fmt.Errorf("migration %s: version %d is not above %d", e.Name(), version, ms[len(ms)-1].version)
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		ms = append(ms, migration{version, e.Name(), string(b), hex.EncodeToString(sum[:])})
	}
	return ms, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	sha256     text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// migrate applies the migrations the database lacks, each in its own
// transaction, on a connection of its own that holds migrationLock: a
// replica starting meanwhile waits, then finds the work done. Closing the
// connection releases the lock, whatever happened.
func migrate(ctx context.Context, cfg *pgx.ConnConfig) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	if _, err := conn.Exec(ctx, createMigrationsTable); err != nil {
		return fmt.Errorf("schema_migrations: %w", err)
	}
	applied, err := appliedMigrations(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range ms {
		sum, ok := applied[m.version]
		delete(applied, m.version)
		switch {
		case ok && sum != m.sum:
			return fmt.Errorf("migration %s was applied with different contents (sha256 %s, embedded %s)", m.name, sum, m.sum)
		case ok:
			continue
		}
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, sha256) VALUES ($1, $2, $3)", m.version, m.name, m.sum)
			return err
		}); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	if len(applied) > 0 {
		return fmt.Errorf("the database has schema migrations %v that this binary does not know (newest known: %d); refusing to run an older binary",
			slices.Sorted(maps.Keys(applied)), ms[len(ms)-1].version)
	}
	return nil
}

// appliedMigrations returns the version → sha256 of every applied migration.
func appliedMigrations(ctx context.Context, conn *pgx.Conn) (map[int]string, error) {
	rows, err := conn.Query(ctx, "SELECT version, sha256 FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("schema_migrations: %w", err)
	}
	applied := map[int]string{}
	var version int
	var sum string
	_, err = pgx.ForEachRow(rows, []any{&version, &sum}, func() error {
		applied[version] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema_migrations: %w", err)
	}
	return applied, nil
}

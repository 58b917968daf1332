package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"

	"worldid/store/postgres/pgtest"

	"github.com/jackc/pgx/v5"
)

func TestMigrationsEmbedded(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.version != i+1 || m.sql == "" || len(m.sum) != 64 {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}

// checkMigrated asserts that the schema records every embedded migration
// once, with its checksum.
func checkMigrated(t *testing.T, dsn string) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
	rows, _ := conn.Query(context.Background(), "SELECT version, name, sha256 FROM schema_migrations ORDER BY version")
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (m migration, err error) {
		err = row.Scan(&m.version, &m.name, &m.sum)
		return m, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ms) {
		t.Fatalf("schema_migrations has %d rows, want %d", len(got), len(ms))
	}
	for i, m := range ms {
		if got[i].version != m.version || got[i].name != m.name || got[i].sum != m.sum {
			t.Errorf("schema_migrations row %+v, want %d %s %s", got[i], m.version, m.name, m.sum)
		}
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestMigrateIdempotent(t *testing.T) {
	dsn := pgtest.FreshSchema(t)
	for range 3 {
		mustOpen(t, dsn).Close()
	}
	checkMigrated(t, dsn)
}

// Replicas starting at once: the advisory lock lets one migrate, the
// others then find the migrations applied.
func TestMigrateConcurrentOpen(t *testing.T) {
	dsn := pgtest.FreshSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(context.Background(), dsn)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	checkMigrated(t, dsn)
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	dsn := pgtest.FreshSchema(t)
	mustOpen(t, dsn).Close()
	conn := connect(t, dsn)
	if _, err := conn.Exec(context.Background(), "INSERT INTO schema_migrations (version, name, sha256) VALUES (9999, '9999_future.sql', '')"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), dsn); err == nil || !strings.Contains(err.Error(), "[9999]") {
		t.Fatalf("Open of a newer database: %v", err)
	}
}

func TestMigrateRefusesEditedMigration(t *testing.T) {
	dsn := pgtest.FreshSchema(t)
	mustOpen(t, dsn).Close()
	conn := connect(t, dsn)
	if _, err := conn.Exec(context.Background(), "UPDATE schema_migrations SET sha256 = 'edited' WHERE version = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), dsn); err == nil || !strings.Contains(err.Error(), "different contents") {
		t.Fatalf("Open with an edited migration: %v", err)
	}
}

// A migration that fails leaves nothing behind: it runs in a transaction.
func TestMigrationIsAtomic(t *testing.T) {
	dsn := pgtest.FreshSchema(t)
	conn := connect(t, dsn)
	// A table the migration is about to create makes it fail midway.
	if _, err := conn.Exec(context.Background(), "CREATE TABLE refreshes (x int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), dsn); err == nil || !strings.Contains(err.Error(), "0001_schema.sql") {
		t.Fatalf("Open with a conflicting table: %v", err)
	}
	var tables int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 2 { // refreshes and schema_migrations
		t.Errorf("%d tables after a failed migration, want 2", tables)
	}
}

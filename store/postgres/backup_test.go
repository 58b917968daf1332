package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestEveryTableIsBackedUp lists the tables the migrations create: each is
// exported, derived or shared_files (storeTables), or declared ephemeral,
// so that a new table cannot silently be missing from backups and
// migrations.
func TestEveryTableIsBackedUp(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	rows, _ := db.pool.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name`)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	restored := strings.Split(storeTables, ", ")
	for _, table := range tables {
		if !slices.Contains(restored, table) && !slices.Contains(ephemeralTables, table) {
			t.Errorf("table %s is neither exported, derived, shared_files nor ephemeral: backups would miss it", table)
		}
	}
	for _, table := range restored {
		if !slices.Contains(tables, table) {
			t.Errorf("storeTables names %s, which the migrations do not create", table)
		}
	}
}

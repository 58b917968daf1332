package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// testDSNEnv names the database the tests may use; each test works in a
// schema of its own, created and dropped by the test.
const testDSNEnv = "WORLDID_TEST_POSTGRES"

// testDSN returns the test database's connection string, or skips t.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(testDSNEnv)
	if dsn == "" {
		t.Skip(testDSNEnv + " not set: set it to a PostgreSQL connection string (store/postgres/testdb.sh starts a server and prints one) to run the PostgreSQL tests")
	}
	return dsn
}

// freshSchema creates an empty schema for t, dropped when t ends, and
// returns a connection string whose search_path selects it.
func freshSchema(t testing.TB) string {
	t.Helper()
	dsn := testDSN(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", testDSNEnv, err)
	}
	defer admin.Close(ctx)
	schema := "worldid_test_" + randomHex(t)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("connect to drop schema %s: %v", schema, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withParam(t, dsn, "search_path", schema)
}

// withParam adds a setting to a connection string in either syntax.
func withParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	if !strings.Contains(dsn, "://") {
		return dsn + " " + key + "=" + value
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", testDSNEnv, err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func mustOpen(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

// openFresh opens a store on a fresh schema, closed when t ends. reopen
// closes the pool and opens a new one on the same schema.
func openFresh(t testing.TB) (db *DB, reopen func() *DB) {
	t.Helper()
	dsn := freshSchema(t)
	db = mustOpen(t, dsn)
	t.Cleanup(func() { db.Close() })
	return db, func() *DB {
		db.Close()
		db = mustOpen(t, dsn)
		return db
	}
}

// Package pgtest gives tests a PostgreSQL database to work in: the server
// named by $WORLDID_TEST_POSTGRES (store/postgres/testdb.sh starts one and
// prints its connection string), with a fresh schema per test. Without the
// variable the calling test is skipped with a message saying how to run it.
package pgtest

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

// EnvVar names the database the tests may use; each test works in a
// schema of its own, created and dropped by the test.
const EnvVar = "WORLDID_TEST_POSTGRES"

// DSN returns the test database's connection string, or skips t.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		t.Skip(EnvVar + " not set: set it to a PostgreSQL connection string (store/postgres/testdb.sh starts a server and prints one) to run the PostgreSQL tests")
	}
	return dsn
}

// FreshSchema creates an empty schema for t, dropped when t ends, and
// returns a connection string whose search_path selects it.
func FreshSchema(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvVar, err)
	}
	defer admin.Close(ctx)
	schema := "worldid_test_" + RandomHex(t)
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
	return WithParam(t, dsn, "search_path", schema)
}

// WithParam adds a setting to a connection string in either syntax.
func WithParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	if !strings.Contains(dsn, "://") {
		return dsn + " " + key + "=" + value
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvVar, err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func RandomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

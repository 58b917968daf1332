package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// SharedFile returns the content stored under name, and false if there is
// none. A backup request reads them: the deadline stays below the HTTP
// write timeout.
func (db *DB) SharedFile(ctx context.Context, name string) ([]byte, bool, error) {
	ctx, cancel := db.deadline(ctx, maxRequestTimeout)
	defer cancel()
	var content []byte
	err := db.pool.QueryRow(ctx, "SELECT content FROM shared_files WHERE name = $1", name).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, db.fail(ctx, err)
	}
	return content, true, nil
}

// StoreSharedFile stores content under name unless a file of that name
// exists, and returns the content stored: content if this call stored it,
// the earlier content otherwise. Replicas starting together therefore all
// end up with the first one's file.
func (db *DB) StoreSharedFile(ctx context.Context, name string, content []byte, now time.Time) ([]byte, error) {
	ctx, cancel := db.deadline(ctx, bulkTimeout)
	defer cancel()
	if content == nil {
		content = []byte{} // pgx sends nil as NULL
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO shared_files (name, content, created_ns) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, content, unixNano(now)); err != nil {
		return nil, db.fail(ctx, err)
	}
	stored, ok, err := db.SharedFile(ctx, name)
	if err == nil && !ok {
		err = errors.New("store: shared file " + name + " vanished after insert")
	}
	return stored, err
}

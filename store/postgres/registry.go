package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

// maxTreeLeaves bounds a tree at depth 30 (2^30 leaves), as the JSON store.
const maxTreeLeaves = 1 << 30

// appendLeavesSQL appends $2 in one statement, hence one transaction. It
// takes the next $5 indexes from the tree's size, whose row lock the upsert
// holds until commit: appends of one tree are serialized, so indexes are
// consecutive and become visible in order. A commitment already in the tree
// or repeated in $2 violates unique (tree, commitment) and the whole
// statement, size included, is undone. A full tree updates no row, so the
// statement returns none.
const appendLeavesSQL = `WITH n AS (
		INSERT INTO trees AS t (tree, size) VALUES ($1, $5::bigint)
		ON CONFLICT (tree) DO UPDATE SET size = t.size + $5::bigint WHERE t.size <= $4::bigint - $5::bigint
		RETURNING size - $5::bigint AS first),
	added AS (
		INSERT INTO leaves (tree, idx, commitment, at_ns)
		SELECT $1, n.first + c.ord - 1, c.commitment, $3 FROM n, unnest($2::text[]) WITH ORDINALITY AS c(commitment, ord))
	SELECT first FROM n`

// AppendLeaf appends commitment to tree and returns its index. A
// commitment already in the tree returns an error wrapping record.ErrExists
// and writes nothing.
func (db *DB) AppendLeaf(ctx context.Context, tree, commitment string, at time.Time) (int, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	return db.AppendLeaves(ctx, tree, []string{commitment}, at)
}

// AppendLeaves appends commitments to tree atomically, at consecutive
// indexes from first. A commitment already in the tree or repeated in the
// batch returns an error wrapping record.ErrExists and writes nothing.
func (db *DB) AppendLeaves(ctx context.Context, tree string, commitments []string, at time.Time) (first int, err error) {
	ctx, cancel := db.deadline(ctx, batchTimeout(len(commitments)))
	defer cancel()
	if len(commitments) == 0 {
		return 0, errors.New("store: no commitments to append")
	}
	err = db.pool.QueryRow(ctx, appendLeavesSQL, tree, commitments, unixNano(at), maxTreeLeaves, len(commitments)).Scan(&first)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("store: tree %q has no room for %d leaves (%d at most)", tree, len(commitments), maxTreeLeaves)
	}
	if err != nil {
		return 0, db.fail(ctx, err)
	}
	return first, nil
}

// Leaves returns the leaves of tree in index order, starting at index from
// (so a replica can catch up on what others appended). A whole tree, read
// at start, may take long: the deadline is per row (stepDeadline).
func (db *DB) Leaves(ctx context.Context, tree string, from int) ([]record.Leaf, error) {
	ctx, d, cancel := db.withStepDeadline(ctx)
	defer cancel()
	rows := db.query(ctx, "SELECT idx, commitment, at_ns FROM leaves WHERE tree = $1 AND idx >= $2 ORDER BY idx", tree, from)
	defer rows.Close()
	var leaves []record.Leaf
	for rows.Next() {
		d.waiting()
		var l record.Leaf
		if err := rows.Scan(&l.Index, &l.Commitment, (*unixNano)(&l.At)); err != nil {
			return nil, db.fail(ctx, err)
		}
		leaves = append(leaves, l)
	}
	return leaves, db.fail(ctx, rows.Err())
}

// AddExternalRoot records r; re-adding a root of the tree returns an error
// wrapping record.ErrExists (primary key).
func (db *DB) AddExternalRoot(ctx context.Context, r record.ExternalRoot) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, "INSERT INTO external_roots (tree, root, depth, at_ns) VALUES ($1, $2, $3, $4)",
		r.Tree, r.Root, r.Depth, unixNano(r.At))
	return db.fail(ctx, err)
}

// ExternalRoots returns every external root, ordered by tree and root.
func (db *DB) ExternalRoots(ctx context.Context) ([]record.ExternalRoot, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, "SELECT tree, root, depth, at_ns FROM external_roots ORDER BY tree, root")
	roots, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (r record.ExternalRoot, err error) {
		err = row.Scan(&r.Tree, &r.Root, &r.Depth, (*unixNano)(&r.At))
		return r, err
	})
	return roots, db.fail(ctx, err)
}

// AddTrustAnchor stores a, replacing the anchor of the same kind and id.
func (db *DB) AddTrustAnchor(ctx context.Context, a record.TrustAnchor) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, `INSERT INTO trust_anchors (kind, id, x, y, at_ns) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (kind, id) DO UPDATE SET x = EXCLUDED.x, y = EXCLUDED.y, at_ns = EXCLUDED.at_ns`,
		a.Kind, a.ID, a.X, a.Y, unixNano(a.At))
	return db.fail(ctx, err)
}

// TrustAnchors returns every anchor, ordered by kind and id.
func (db *DB) TrustAnchors(ctx context.Context) ([]record.TrustAnchor, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, selectTrustAnchors)
	anchors, err := pgx.CollectRows(rows, scanTrustAnchor)
	return anchors, db.fail(ctx, err)
}

const selectTrustAnchors = "SELECT kind, id, x, y, at_ns FROM trust_anchors ORDER BY kind, id"

func scanTrustAnchor(row pgx.CollectableRow) (a record.TrustAnchor, err error) {
	err = row.Scan(&a.Kind, &a.ID, &a.X, &a.Y, (*unixNano)(&a.At))
	return a, err
}

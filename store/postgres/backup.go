package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"worldid/backup"
	"worldid/record"
)

// Backup and restore in the logical format of package backup.

// exportQueries read each logical table, in backup.StoreTables order, from
// the database table named by from.
var exportQueries = []struct {
	table, from string
	sql         string
	scan        func(pgx.CollectableRow) (any, error)
}{
	{backup.TableApps, "apps", "SELECT " + appColumns + " FROM apps ORDER BY id", func(r pgx.CollectableRow) (any, error) { return scanApp(r) }},
	{backup.TableActions, "actions", "SELECT rp_id, action, environment, max_verifications, created_ns FROM actions ORDER BY id", func(r pgx.CollectableRow) (any, error) {
		var a record.Action
		var action []byte
		err := r.Scan(&a.RPID, &action, &a.Environment, &a.MaxVerifications, (*unixNano)(&a.CreatedAt))
		a.Action = string(action)
		return a, err
	}},
	{backup.TableNullifiers, "nullifiers", `SELECT a.rp_id, a.environment, a.action, n.nullifier, n.created_ns, n.count
		FROM nullifiers n JOIN actions a ON a.id = n.action_id ORDER BY n.action_id, n.nullifier`, func(r pgx.CollectableRow) (any, error) {
		var n backup.Nullifier
		var action []byte
		err := r.Scan(&n.RPID, &n.Environment, &action, &n.Nullifier, (*unixNano)(&n.CreatedAt), &n.Count)
		n.Action = string(action)
		return n, err
	}},
	{backup.TableSigningKeys, "signing_keys", "SELECT id, private_key, created_ns, activate_ns FROM signing_keys ORDER BY id", func(r pgx.CollectableRow) (any, error) {
		var k record.SigningKey
		err := r.Scan(&k.ID, &k.PrivateKey, (*unixNano)(&k.CreatedAt), (*unixNano)(&k.ActivateAt))
		return k, err
	}},
	{backup.TableRevokedKeys, "revoked_keys", "SELECT id, revoked_ns FROM revoked_keys ORDER BY id", func(r pgx.CollectableRow) (any, error) {
		return scanRevokedKey(r)
	}},
	{backup.TableSigninProgress, "signin_progress", "SELECT " + progressColumns + " FROM signin_progress ORDER BY id", func(r pgx.CollectableRow) (any, error) {
		return scanProgress(r)
	}},
	{backup.TableSpentProofs, "spent_proofs", "SELECT key, expires_ns FROM spent_proofs ORDER BY key", func(r pgx.CollectableRow) (any, error) {
		var p backup.SpentProof
		err := r.Scan(&p.Key, (*unixNano)(&p.ExpiresAt))
		return p, err
	}},
	{backup.TableAuthCodes, "auth_codes", "SELECT " + codeColumns + ", redeemed FROM auth_codes ORDER BY id", func(r pgx.CollectableRow) (any, error) {
		var b backup.AuthCode
		c := &b.Code
		err := r.Scan(&c.ID, &c.GrantID, &c.ClientID, &c.RedirectURI, &c.Scope, &c.Nonce, &c.CodeChallenge, &c.Subject,
			&c.VerificationLevel, (*unixNano)(&c.AuthTime), (*unixNano)(&c.ExpiresAt), (*unixNano)(&c.RetainUntil), &b.Redeemed)
		return b, err
	}},
	{backup.TableRevokedGrants, "revoked_grants", "SELECT grant_id, retain_ns FROM revoked_grants ORDER BY grant_id", func(r pgx.CollectableRow) (any, error) {
		var g backup.RevokedGrant
		err := r.Scan(&g.GrantID, (*unixNano)(&g.RetainUntil))
		return g, err
	}},
	{backup.TableDeviceGrants, "device_grants", "SELECT " + deviceColumns + " FROM device_grants ORDER BY id", func(r pgx.CollectableRow) (any, error) {
		return scanDevice(r)
	}},
	{backup.TableLeaves, "leaves", "SELECT tree, idx, commitment, at_ns FROM leaves ORDER BY tree, idx", func(r pgx.CollectableRow) (any, error) {
		var l backup.Leaf
		err := r.Scan(&l.Tree, &l.Leaf.Index, &l.Leaf.Commitment, (*unixNano)(&l.Leaf.At))
		return l, err
	}},
	{backup.TableExternalRoots, "external_roots", "SELECT tree, root, depth, at_ns FROM external_roots ORDER BY tree, root", func(r pgx.CollectableRow) (any, error) {
		var e record.ExternalRoot
		err := r.Scan(&e.Tree, &e.Root, &e.Depth, (*unixNano)(&e.At))
		return e, err
	}},
	{backup.TableTrustAnchors, "trust_anchors", selectTrustAnchors, func(r pgx.CollectableRow) (any, error) {
		return scanTrustAnchor(r)
	}},
	{backup.TableSettings, "switches", "SELECT name, enabled FROM switches ORDER BY name", func(r pgx.CollectableRow) (any, error) {
		var s backup.Setting
		err := r.Scan(&s.Name, &s.Enabled)
		return s, err
	}},
	{backup.TableSignups, "signups", "SELECT id_commitment, signup_id, verified_ns FROM signups ORDER BY id_commitment", func(r pgx.CollectableRow) (any, error) {
		var s record.Signup
		err := r.Scan(&s.IDCommitment, &s.SignupID, (*unixNano)(&s.VerifiedAt))
		return s, err
	}},
	{backup.TableOrbKeys, "orb_keys", `SELECT orb_id, pem, row_number() OVER (PARTITION BY orb_id ORDER BY added) - 1
		FROM orb_keys ORDER BY orb_id, added`, func(r pgx.CollectableRow) (any, error) {
		var k backup.OrbKey
		err := r.Scan(&k.OrbID, &k.PEM, &k.Position)
		return k, err
	}},
	{backup.TablePinnedSubs, "pinned_subs", "SELECT id_commitment, sub FROM pinned_subs ORDER BY id_commitment", func(r pgx.CollectableRow) (any, error) {
		var p backup.PinnedSub
		err := r.Scan(&p.IDCommitment, &p.Sub)
		return p, err
	}},
	{backup.TablePCPBindings, "pcp_bindings", "SELECT pcp_digest, id_commitment FROM pcp_bindings ORDER BY pcp_digest", func(r pgx.CollectableRow) (any, error) {
		var b backup.PCPBinding
		err := r.Scan(&b.PCPDigest, &b.IDCommitment)
		return b, err
	}},
	{backup.TableRefreshes, "refreshes", "SELECT " + refreshColumns + " FROM refreshes ORDER BY id_commitment, at_s, credential_id", func(r pgx.CollectableRow) (any, error) {
		return scanRefresh(r)
	}},
}

// Export emits every record in the logical format from one REPEATABLE
// READ, read-only transaction: a consistent snapshot that does not block
// writers. Shared files are not exported here (the caller adds them). Each
// wait for the database has a deadline, the time emit takes does not
// (stepDeadline), so a backup of any size streams to a client of any
// speed, and a database that stops answering fails it within callTimeout.
func (db *DB) Export(ctx context.Context, emit backup.Emit) error {
	ctx, d, cancel := db.withStepDeadline(ctx)
	defer cancel()
	return db.fail(ctx, pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return exportTx(ctx, tx, d, emit)
	}))
}

// exportTx emits the rows of every exported table as tx sees them.
func exportTx(ctx context.Context, tx pgx.Tx, d *stepDeadline, emit backup.Emit) error {
	for _, q := range exportQueries {
		if err := emitRows(ctx, tx, d, q.table, q.sql, q.scan, emit); err != nil {
			return err
		}
	}
	return nil
}

// emitRows emits what scan makes of each row of sql as a row of table. d
// is waiting whenever the database is asked, and when emitRows returns.
func emitRows(ctx context.Context, tx pgx.Tx, d *stepDeadline, table, sql string, scan func(pgx.CollectableRow) (any, error), emit backup.Emit) error {
	d.waiting()
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		d.idle()
		row, err := scan(rows)
		if err == nil {
			err = emit(table, row)
		}
		d.waiting()
		if err != nil {
			return fmt.Errorf("store: export %s: %w", table, err)
		}
	}
	return rows.Err()
}

// derivedTables are rebuilt by Restore from exported rows: trees (their
// sizes) from leaves.
var derivedTables = []string{"trees"}

// ephemeralTables hold nothing a backup keeps: signin_scans, the wallet's
// best-effort scan marks. Restore empties them with the rest, but rows in
// them do not make a target non-empty.
var ephemeralTables = []string{"signin_scans", "bridge_requests"}

// storeTables are every table Restore fills or empties: those exported,
// those derived, and shared_files, which holds the backup's files. They
// are all the tables the migrations create (TestEveryTableIsBackedUp).
var storeTables = func() string {
	names := slices.Clone(derivedTables)
	for _, q := range exportQueries {
		if !slices.Contains(names, q.from) {
			names = append(names, q.from)
		}
	}
	return strings.Join(append(names, "shared_files"), ", ")
}()

// ErrNotEmpty: a restore target already holds data.
var ErrNotEmpty = errors.New("the target database is not empty")

// Restore loads the rows that load calls its argument with, files (into
// shared_files) included, in one transaction: a failure anywhere writes
// nothing. The database must hold no data unless force is set; then
// everything in it is replaced. verify, if not nil, runs before the commit
// with a function that reads the loaded rows back as Export would, files
// included; an error it returns undoes the restore. As in Export, each wait
// for the database has a deadline, the time load takes to emit rows does
// not.
func (db *DB) Restore(ctx context.Context, force bool, load func(backup.Emit) error, verify func(readBack func(backup.Emit) error) error) error {
	ctx, d, cancel := db.withStepDeadline(ctx)
	defer cancel()
	return db.fail(ctx, pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		defer d.waiting() // for the commit or rollback
		if _, err := tx.Exec(ctx, "LOCK TABLE "+storeTables+" IN EXCLUSIVE MODE"); err != nil {
			return err
		}
		if force {
			if _, err := tx.Exec(ctx, "TRUNCATE "+storeTables+" RESTART IDENTITY"); err != nil {
				return err
			}
		} else if table, err := nonEmptyTable(ctx, tx); err != nil || table != "" {
			if err == nil {
				err = fmt.Errorf("store: table %s has rows: %w", table, ErrNotEmpty)
			}
			return err
		}
		if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(ephemeralTables, ", ")); err != nil {
			return err
		}
		l := &loader{ctx: ctx, tx: tx, d: d, trees: map[string]int{}, orbKeys: map[string]int{}}
		d.idle()
		if err := load(l.add); err != nil {
			return err
		}
		if err := l.flush(ctx); err != nil {
			return err
		}
		for tree, size := range l.trees {
			l.batch.Queue("UPDATE trees SET size = $2 WHERE tree = $1", tree, size)
		}
		if err := l.flush(ctx); err != nil || verify == nil {
			return err
		}
		return verify(func(emit backup.Emit) error {
			if err := exportTx(ctx, tx, d, emit); err != nil {
				return err
			}
			return emitRows(ctx, tx, d, backup.TableFiles, "SELECT name, content FROM shared_files ORDER BY name", func(r pgx.CollectableRow) (any, error) {
				var f backup.File
				err := r.Scan(&f.Name, &f.Content)
				return f, err
			}, emit)
		})
	}))
}

// nonEmptyTable names a table of storeTables that has a row, or is "".
func nonEmptyTable(ctx context.Context, tx pgx.Tx) (string, error) {
	var parts []string
	for _, t := range strings.Split(storeTables, ", ") {
		parts = append(parts, "SELECT '"+t+"' WHERE EXISTS (SELECT 1 FROM "+t+")")
	}
	var table string
	err := tx.QueryRow(ctx, strings.Join(parts, " UNION ALL ")+" LIMIT 1").Scan(&table)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return table, err
}

// loader queues the INSERTs of a restore and sends them in batches.
type loader struct {
	ctx     context.Context
	tx      pgx.Tx
	d       *stepDeadline // waiting while a batch is sent
	batch   pgx.Batch
	trees   map[string]int // tree → size, from the leaves
	orbKeys map[string]int // orb → keys so far
}

const loadBatch = 1000

func (l *loader) add(table string, row any) error {
	q := func(sql string, args ...any) { l.batch.Queue(sql, args...) }
	switch r := row.(type) {
	case record.App:
		q(insertApp, appArgs(r)...)
	case record.Action:
		q(`INSERT INTO actions (rp_id, environment, action, max_verifications, created_ns) VALUES ($1, $2, $3, $4, $5)`,
			r.RPID, r.Environment, []byte(r.Action), r.MaxVerifications, unixNano(r.CreatedAt))
	case backup.Nullifier:
		// An action row exists for every nullifier (RecordVerification
		// creates both); a missing one fails the INSERT (NOT NULL).
		q(`INSERT INTO nullifiers (action_id, nullifier, count, created_ns)
			VALUES ((SELECT id FROM actions WHERE rp_id = $1 AND environment = $2 AND action = $3), $4, $5, $6)`,
			r.RPID, r.Environment, []byte(r.Action), r.Nullifier, r.Count, unixNano(r.CreatedAt))
	case record.SigningKey:
		q("INSERT INTO signing_keys (id, private_key, created_ns, activate_ns) VALUES ($1, $2, $3, $4)",
			r.ID, r.PrivateKey, unixNano(r.CreatedAt), unixNano(r.ActivateAt))
	case record.RevokedKey:
		q("INSERT INTO revoked_keys (id, revoked_ns) VALUES ($1, $2)", r.ID, unixNano(r.RevokedAt))
	case record.SigninProgress:
		q("INSERT INTO signin_progress ("+progressColumns+") VALUES ($1, $2, $3, $4, $5, $6)",
			r.ID, r.State, r.Subject, r.VerificationLevel, unixNano(r.AuthTime), unixNano(r.ExpiresAt))
	case backup.SpentProof:
		q("INSERT INTO spent_proofs (key, expires_ns) VALUES ($1, $2)", r.Key, unixNano(r.ExpiresAt))
	case backup.AuthCode:
		c := r.Code
		q("INSERT INTO auth_codes ("+codeColumns+", redeemed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
			c.ID, c.GrantID, c.ClientID, c.RedirectURI, c.Scope, c.Nonce, c.CodeChallenge, c.Subject, c.VerificationLevel,
			unixNano(c.AuthTime), unixNano(c.ExpiresAt), unixNano(c.RetainUntil), r.Redeemed)
	case backup.RevokedGrant:
		q("INSERT INTO revoked_grants (grant_id, retain_ns) VALUES ($1, $2)", r.GrantID, unixNano(r.RetainUntil))
	case record.DeviceGrant:
		q(insertDevice, deviceArgs(r)...)
	case backup.Leaf:
		if r.Leaf.Index != l.trees[r.Tree] {
			return fmt.Errorf("store: tree %q: leaf %d follows %d leaves", r.Tree, r.Leaf.Index, l.trees[r.Tree])
		}
		l.trees[r.Tree]++
		if l.trees[r.Tree] == 1 {
			// leaves references trees: the size is set at the end.
			q("INSERT INTO trees (tree, size) VALUES ($1, 0)", r.Tree)
		}
		q("INSERT INTO leaves (tree, idx, commitment, at_ns) VALUES ($1, $2, $3, $4)", r.Tree, r.Leaf.Index, r.Leaf.Commitment, unixNano(r.Leaf.At))
	case record.ExternalRoot:
		q("INSERT INTO external_roots (tree, root, depth, at_ns) VALUES ($1, $2, $3, $4)", r.Tree, r.Root, r.Depth, unixNano(r.At))
	case record.TrustAnchor:
		q("INSERT INTO trust_anchors (kind, id, x, y, at_ns) VALUES ($1, $2, $3, $4, $5)", r.Kind, r.ID, r.X, r.Y, unixNano(r.At))
	case backup.Setting:
		q("INSERT INTO switches (name, enabled) VALUES ($1, $2)", r.Name, r.Enabled)
	case record.Signup:
		q("INSERT INTO signups (id_commitment, signup_id, verified_ns) VALUES ($1, $2, $3)", r.IDCommitment, r.SignupID, unixNano(r.VerifiedAt))
	case backup.OrbKey:
		// Rows must come in position order per orb, so "added" keeps it.
		if r.Position != l.orbKeys[r.OrbID] {
			return fmt.Errorf("store: orb %q: key %d follows %d keys", r.OrbID, r.Position, l.orbKeys[r.OrbID])
		}
		l.orbKeys[r.OrbID]++
		q("INSERT INTO orb_keys (orb_id, pem) VALUES ($1, $2)", r.OrbID, r.PEM)
	case backup.PinnedSub:
		q("INSERT INTO pinned_subs (id_commitment, sub) VALUES ($1, $2)", r.IDCommitment, r.Sub)
	case backup.PCPBinding:
		q("INSERT INTO pcp_bindings (pcp_digest, id_commitment) VALUES ($1, $2)", r.PCPDigest, r.IDCommitment)
	case record.Refresh:
		q(insertRefresh, refreshArgs(r)...)
	case backup.File:
		q("INSERT INTO shared_files (name, content, created_ns) VALUES ($1, $2, $3)", r.Name, r.Content, unixNano(time.Now()))
	default:
		return fmt.Errorf("store: no table for %s rows (%T)", table, row)
	}
	if l.batch.Len() >= loadBatch {
		return l.flush(l.ctx)
	}
	return nil
}

func (l *loader) flush(ctx context.Context) error {
	if l.batch.Len() == 0 {
		return nil
	}
	l.d.waiting()
	defer l.d.idle()
	err := l.tx.SendBatch(ctx, &l.batch).Close()
	l.batch = pgx.Batch{}
	return err
}

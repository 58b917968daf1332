package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

// switchRefresh is the switches row of the refresh endpoint; absent means
// enabled.
const switchRefresh = "refresh_enabled"

// SetRefreshEnabled turns the refresh endpoint on or off.
func (db *DB) SetRefreshEnabled(ctx context.Context, on bool) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, `INSERT INTO switches (name, enabled) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET enabled = EXCLUDED.enabled`, switchRefresh, on)
	return db.fail(ctx, err)
}

// RefreshEnabled reports whether refresh is on; it is until turned off.
func (db *DB) RefreshEnabled(ctx context.Context) (bool, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	on := true
	err := db.pool.QueryRow(ctx, "SELECT enabled FROM switches WHERE name = $1", switchRefresh).Scan(&on)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	return on, db.fail(ctx, err)
}

// PutSignup stores one signup record (see PutSignups).
func (db *DB) PutSignup(ctx context.Context, s record.Signup) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	return db.PutSignups(ctx, []record.Signup{s})
}

// PutSignups stores every record in one statement, or none if one fails
// record.Signup.Validate. A record replaces the one of the same identity
// commitment, so that re-importing a file is idempotent; of two records of
// one commitment in ss the later wins.
func (db *DB) PutSignups(ctx context.Context, ss []record.Signup) error {
	ctx, cancel := db.deadline(ctx, batchTimeout(len(ss)))
	defer cancel()
	for i, s := range ss {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("store: signup %d: %w", i, err)
		}
	}
	last := make(map[string]int, len(ss))
	for i, s := range ss {
		last[s.IDCommitment] = i
	}
	var (
		comms    = make([]string, 0, len(last))
		ids      = make([]string, 0, len(last))
		verified = make([]unixNano, 0, len(last))
	)
	for i, s := range ss {
		if last[s.IDCommitment] == i {
			comms, ids, verified = append(comms, s.IDCommitment), append(ids, s.SignupID), append(verified, unixNano(s.VerifiedAt))
		}
	}
	// ON CONFLICT DO UPDATE may touch a row once per statement, hence the
	// deduplication above.
	_, err := db.pool.Exec(ctx, `INSERT INTO signups (id_commitment, signup_id, verified_ns)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
		ON CONFLICT (id_commitment) DO UPDATE SET signup_id = EXCLUDED.signup_id, verified_ns = EXCLUDED.verified_ns`,
		comms, ids, verified)
	return db.fail(ctx, err)
}

// Signup returns the signup record of idComm or an error wrapping
// record.ErrNotFound.
func (db *DB) Signup(ctx context.Context, idComm string) (record.Signup, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	s := record.Signup{IDCommitment: idComm}
	err := db.pool.QueryRow(ctx, "SELECT signup_id, verified_ns FROM signups WHERE id_commitment = $1", idComm).
		Scan(&s.SignupID, (*unixNano)(&s.VerifiedAt))
	if err != nil {
		return record.Signup{}, db.failRead(ctx, fmt.Sprintf("signup %q", idComm), err)
	}
	return s, nil
}

// AddOrbKey trusts pem for orbID. The PEM is stored as given; the caller
// validates it (refresh.ParseOrbKeyPEM). Adding a key the orb already has
// returns an error wrapping record.ErrExists (primary key).
func (db *DB) AddOrbKey(ctx context.Context, orbID, pem string) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	if orbID == "" || pem == "" {
		return errors.New("store: orb_id and key must not be empty")
	}
	_, err := db.pool.Exec(ctx, "INSERT INTO orb_keys (orb_id, pem) VALUES ($1, $2)", orbID, pem)
	return db.fail(ctx, err)
}

// OrbKeys returns the PEM keys trusted for orbID, in the order added; an
// unknown orb has none.
func (db *DB) OrbKeys(ctx context.Context, orbID string) ([]string, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	keys, err := pgx.CollectRows(db.query(ctx, "SELECT pem FROM orb_keys WHERE orb_id = $1 ORDER BY added", orbID), pgx.RowTo[string])
	return keys, db.fail(ctx, err)
}

// PinnedSub returns the sub the first refresh of idComm pinned, or an
// error wrapping record.ErrNotFound.
func (db *DB) PinnedSub(ctx context.Context, idComm string) (string, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var sub string
	err := db.pool.QueryRow(ctx, "SELECT sub FROM pinned_subs WHERE id_commitment = $1", idComm).Scan(&sub)
	if err != nil {
		return "", db.failRead(ctx, fmt.Sprintf("pinned sub of %q", idComm), err)
	}
	return sub, nil
}

// A binding is a key bound once to a value: the sub pinned to an identity
// commitment, the commitment a PCP digest serves.
type binding struct {
	insert, lookup string // SQL: insert (key, value) unless bound; the bound value
	conflict       error
}

var (
	pinSub = binding{
		insert:   "INSERT INTO pinned_subs (id_commitment, sub) VALUES ($1, $2) ON CONFLICT DO NOTHING",
		lookup:   "SELECT sub FROM pinned_subs WHERE id_commitment = $1",
		conflict: record.ErrSubMismatch,
	}
	bindPCP = binding{
		insert:   "INSERT INTO pcp_bindings (pcp_digest, id_commitment) VALUES ($1, $2) ON CONFLICT DO NOTHING",
		lookup:   "SELECT id_commitment FROM pcp_bindings WHERE pcp_digest = $1",
		conflict: record.ErrPCPReused,
	}
)

// bind binds key to value unless it is bound; a different bound value is
// an error wrapping b.conflict. The INSERT waits for a concurrent binder of
// the key to finish; the lookup, a new statement, then sees its row.
func (b binding) bind(ctx context.Context, tx pgx.Tx, key, value string) error {
	if _, err := tx.Exec(ctx, b.insert, key, value); err != nil {
		return err
	}
	var bound string
	if err := tx.QueryRow(ctx, b.lookup, key).Scan(&bound); err != nil {
		return err
	}
	if bound != value {
		return fmt.Errorf("store: %q is bound to %q: %w", key, bound, b.conflict)
	}
	return nil
}

// RecordRefresh stores r in one transaction: it pins r.Sub to
// r.IDCommitment if nothing is pinned (else the pinned sub must equal
// r.Sub, or the error wraps record.ErrSubMismatch), binds r.PCPDigest, when
// set, to r.IDCommitment (bound to another: record.ErrPCPReused),
// remembers r.ProofKey, when set, as UseProofOnce does (used before:
// record.ErrExists), and appends r to the commitment's refreshes (the same
// commitment, second and credential ID twice: record.ErrExists). A failure
// writes nothing.
func (db *DB) RecordRefresh(ctx context.Context, r record.Refresh) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	if err := r.Validate(); err != nil {
		return err
	}
	return db.fail(ctx, pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if r.ProofKey != "" {
			if _, err := tx.Exec(ctx, "INSERT INTO spent_proofs (key, expires_ns) VALUES ($1, $2)", r.ProofKey, unixNano(r.ProofExpiresAt)); err != nil {
				return err
			}
		}
		if err := pinSub.bind(ctx, tx, r.IDCommitment, r.Sub); err != nil {
			return err
		}
		if r.PCPDigest != "" {
			if err := bindPCP.bind(ctx, tx, r.PCPDigest, r.IDCommitment); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, insertRefresh, refreshArgs(r)...)
		return err
	}))
}

// insertRefresh stores a refresh, its values in refreshArgs order; backups
// load refreshes with it too, so that both keep the same columns.
const insertRefresh = `INSERT INTO refreshes (id_commitment, sub, at_ns, pcp_digest, credential_id, credential)
	VALUES ($1, $2, $3, NULLIF($4, ''), $5::text::numeric, NULLIF($6, ''))`

func refreshArgs(r record.Refresh) []any {
	return []any{r.IDCommitment, r.Sub, unixNano(r.At), r.PCPDigest, strconv.FormatUint(r.CredentialID, 10), r.Credential}
}

// refreshColumns are the columns scanRefresh reads.
const refreshColumns = "id_commitment, sub, at_ns, coalesce(pcp_digest, ''), credential_id::text, coalesce(credential, '')"

func scanRefresh(row pgx.CollectableRow) (r record.Refresh, err error) {
	var id string
	if err := row.Scan(&r.IDCommitment, &r.Sub, (*unixNano)(&r.At), &r.PCPDigest, &id, &r.Credential); err != nil {
		return r, err
	}
	r.CredentialID, err = strconv.ParseUint(id, 10, 64)
	return r, err
}

// Refreshes returns the refreshes of idComm, oldest first (by second, then
// credential ID, as the JSON store).
func (db *DB) Refreshes(ctx context.Context, idComm string) ([]record.Refresh, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, "SELECT "+refreshColumns+" FROM refreshes WHERE id_commitment = $1 ORDER BY at_s, credential_id", idComm)
	rs, err := pgx.CollectRows(rows, scanRefresh)
	return rs, db.fail(ctx, err)
}

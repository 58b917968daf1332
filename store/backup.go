package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"worldid/backup"
	"worldid/record"
)

// Backup and restore in the logical format of package backup.

// Export emits every record in the logical format, table by table. It
// copies the durable state under the read lock (writers wait only for the
// copy, not for the emitting) and so reflects exactly the writes
// acknowledged before it began. Derived tables are not exported: Restore
// rebuilds them.
func (db *DB) Export(ctx context.Context, emit backup.Emit) error {
	var st tables
	if err := db.View(func(tx *ReadTx) error {
		st = make(tables, len(tx.base))
		for name, rows := range tx.base {
			st[name] = cloneRows(rows)
		}
		return nil
	}); err != nil {
		return err
	}
	return exportState(ctx, st, emit)
}

// cloneRows copies a table; the values are immutable strings, so this is
// all Export does under the read lock.
func cloneRows(rows map[string]string) map[string]string { return maps.Clone(rows) }

// ExportDir is Export of the store in dir without opening it: it takes the
// directory's lock (so no server may be running on it), reads the snapshot
// and the journal, and changes no file (Open would compact).
func ExportDir(ctx context.Context, dir string, emit backup.Emit) error {
	if _, err := os.Stat(filepath.Join(dir, snapshotName)); err != nil {
		return fmt.Errorf("store: %s holds no JSON store: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	st, _, err := recoverState(dir)
	if err != nil {
		return err
	}
	return exportState(ctx, st, emit)
}

// exportState emits the logical rows of st.
func exportState(ctx context.Context, st tables, emit backup.Emit) error {
	for _, t := range exportTables {
		rows := st[t.kv]
		for _, key := range slices.Sorted(maps.Keys(rows)) {
			if err := ctx.Err(); err != nil {
				return err
			}
			rowsOut, err := t.toRows(key, json.RawMessage(rows[key]))
			if err != nil {
				return fmt.Errorf("store: export %s %q: %w", t.kv, key, err)
			}
			for _, row := range rowsOut {
				if err := emit(t.logical, row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// exportTable maps one store table to a logical table and back.
type exportTable struct {
	kv, logical string
	toRows      func(key string, v json.RawMessage) ([]any, error)
	put         func(st tables, row any) error
}

// as decodes v into a T, as the only row of a key.
func as[T any](normalize func(*T, string) error) func(string, json.RawMessage) ([]any, error) {
	return func(key string, v json.RawMessage) ([]any, error) {
		var row T
		if err := json.Unmarshal(v, &row); err != nil {
			return nil, err
		}
		if normalize != nil {
			if err := normalize(&row, key); err != nil {
				return nil, err
			}
		}
		return []any{row}, nil
	}
}

// set stores v at table/key in st.
func set(st tables, table, key string, v any) error {
	if err := checkName(table, key); err != nil {
		return fmt.Errorf("%s %q: %w", table, key, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	rows := st[table]
	if rows == nil {
		rows = map[string]string{}
		st[table] = rows
	}
	if _, dup := rows[key]; dup {
		return fmt.Errorf("%s %q: %w", table, key, record.ErrExists)
	}
	rows[key] = string(b)
	return nil
}

// recoverState reads the state and record count of the store in dir as
// Open would recover them, without changing anything. Files that hold less
// than the mark says was acknowledged are an error wrapping ErrDataLoss, as
// in Open: a copy must not carry a silent reset along.
func recoverState(dir string) (tables, int, error) {
	markPath := filepath.Join(dir, markName)
	mark, marked, err := loadMark(markPath)
	if err != nil {
		return nil, 0, err
	}
	snap, _, err := loadSnapshot(filepath.Join(dir, snapshotName))
	if err != nil {
		return nil, 0, err
	}
	n := snap.records
	last := snap.lsn
	path := filepath.Join(dir, journalName)
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, 0, fmt.Errorf("store: %w", err)
	default:
		defer f.Close()
		rep, err := replayJournal(f, path, snap.lsn, func(e entry) {
			for _, c := range e.Changes {
				n += snap.tables.apply(c)
			}
		})
		if err != nil {
			return nil, 0, err
		}
		last = rep.last
	}
	if marked && last < mark {
		return nil, 0, fmt.Errorf("store: %s ends at lsn %d, but %s says lsn %d was acknowledged: %w", dir, last, markPath, mark, ErrDataLoss)
	}
	return snap.tables, n, nil
}

// exportTables holds every table but those Restore derives from them
// (TestEveryTableIsBackedUp lists those).
var exportTables = []exportTable{
	{tableApps, backup.TableApps, as(func(a *record.App, _ string) error {
		if a.RedirectURIs == nil {
			a.RedirectURIs = []string{}
		}
		return nil
	}), func(st tables, row any) error {
		a := row.(record.App)
		return errors.Join(set(st, tableApps, a.ID, a), set(st, tableRPs, a.RPID, a.ID))
	}},
	{tableActions, backup.TableActions, as[record.Action](nil), func(st tables, row any) error {
		a := row.(record.Action)
		key, err := verifyKey(a.RPID, a.Environment, a.Action)
		if err != nil {
			return err
		}
		return set(st, tableActions, key, a)
	}},
	{tableNullifiers, backup.TableNullifiers, func(key string, v json.RawMessage) ([]any, error) {
		var parts []string
		var n nullifierRecord
		if err := errors.Join(json.Unmarshal([]byte(key), &parts), json.Unmarshal(v, &n)); err != nil || len(parts) != 4 {
			return nil, fmt.Errorf("malformed nullifier record: %v", err)
		}
		return []any{backup.Nullifier{RPID: parts[0], Environment: parts[1], Action: parts[2], Nullifier: parts[3], CreatedAt: n.CreatedAt, Count: n.Count}}, nil
	}, func(st tables, row any) error {
		n := row.(backup.Nullifier)
		key, err := verifyKey(n.RPID, n.Environment, n.Action, n.Nullifier)
		if err != nil {
			return err
		}
		return set(st, tableNullifiers, key, nullifierRecord{CreatedAt: n.CreatedAt, Count: n.Count})
	}},
	{tableSigningKeys, backup.TableSigningKeys, as[record.SigningKey](nil), func(st tables, row any) error {
		k := row.(record.SigningKey)
		return set(st, tableSigningKeys, k.ID, k)
	}},
	{tableSignins, backup.TableSigninProgress, as[record.SigninProgress](nil), func(st tables, row any) error {
		r := row.(record.SigninProgress)
		return set(st, tableSignins, r.ID, r)
	}},
	{tableProofs, backup.TableSpentProofs, func(key string, v json.RawMessage) ([]any, error) {
		t, err := decodeTime(v)
		return []any{backup.SpentProof{Key: key, ExpiresAt: t}}, err
	}, func(st tables, row any) error {
		p := row.(backup.SpentProof)
		return set(st, tableProofs, p.Key, p.ExpiresAt)
	}},
	{tableCodes, backup.TableAuthCodes, func(_ string, v json.RawMessage) ([]any, error) {
		var c storedCode
		err := json.Unmarshal(v, &c)
		return []any{backup.AuthCode{Code: c.Code, Redeemed: c.Redeemed}}, err
	}, func(st tables, row any) error {
		c := row.(backup.AuthCode)
		return set(st, tableCodes, c.Code.ID, storedCode{Code: c.Code, Redeemed: c.Redeemed})
	}},
	{tableRevoked, backup.TableRevokedGrants, func(key string, v json.RawMessage) ([]any, error) {
		t, err := decodeTime(v)
		return []any{backup.RevokedGrant{GrantID: key, RetainUntil: t}}, err
	}, func(st tables, row any) error {
		g := row.(backup.RevokedGrant)
		return set(st, tableRevoked, g.GrantID, g.RetainUntil)
	}},
	{tableLeaves, backup.TableLeaves, func(key string, v json.RawMessage) ([]any, error) {
		var l record.Leaf
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, err
		}
		tree := key[:max(strings.LastIndexByte(key, '/'), 0)]
		return []any{backup.Leaf{Tree: tree, Leaf: l}}, nil
	}, func(st tables, row any) error {
		l := row.(backup.Leaf)
		var size int64
		if raw, ok := st[tableTreeSizes][l.Tree]; ok {
			json.Unmarshal([]byte(raw), &size)
			delete(st[tableTreeSizes], l.Tree)
		}
		if int64(l.Leaf.Index) != size {
			return fmt.Errorf("tree %q: leaf %d follows %d leaves", l.Tree, l.Leaf.Index, size)
		}
		return errors.Join(set(st, tableLeaves, leafKey(l.Tree, size), l.Leaf),
			set(st, tableLeafIndex, l.Tree+"/"+l.Leaf.Commitment, l.Leaf.Index),
			set(st, tableTreeSizes, l.Tree, size+1))
	}},
	{tableExternalRoots, backup.TableExternalRoots, as[record.ExternalRoot](nil), func(st tables, row any) error {
		r := row.(record.ExternalRoot)
		return set(st, tableExternalRoots, r.Tree+"/"+r.Root, r)
	}},
	{tableTrustAnchors, backup.TableTrustAnchors, as[record.TrustAnchor](nil), func(st tables, row any) error {
		a := row.(record.TrustAnchor)
		return set(st, tableTrustAnchors, a.Kind+"/"+a.ID, a)
	}},
	{tableSettings, backup.TableSettings, func(key string, v json.RawMessage) ([]any, error) {
		var on bool
		err := json.Unmarshal(v, &on)
		return []any{backup.Setting{Name: key, Enabled: on}}, err
	}, func(st tables, row any) error {
		s := row.(backup.Setting)
		return set(st, tableSettings, s.Name, s.Enabled)
	}},
	{tableSignups, backup.TableSignups, as[record.Signup](nil), func(st tables, row any) error {
		s := row.(record.Signup)
		return set(st, tableSignups, s.IDCommitment, s)
	}},
	{tableOrbKeys, backup.TableOrbKeys, func(key string, v json.RawMessage) ([]any, error) {
		var pems []string
		if err := json.Unmarshal(v, &pems); err != nil {
			return nil, err
		}
		rows := make([]any, len(pems))
		for i, pem := range pems {
			rows[i] = backup.OrbKey{OrbID: key, PEM: pem, Position: i}
		}
		return rows, nil
	}, func(st tables, row any) error {
		k := row.(backup.OrbKey)
		var pems []string
		if raw, ok := st[tableOrbKeys][k.OrbID]; ok {
			json.Unmarshal([]byte(raw), &pems)
			delete(st[tableOrbKeys], k.OrbID)
		}
		if k.Position != len(pems) {
			return fmt.Errorf("orb %q: key %d follows %d keys", k.OrbID, k.Position, len(pems))
		}
		return set(st, tableOrbKeys, k.OrbID, append(pems, k.PEM))
	}},
	{tablePinnedSubs, backup.TablePinnedSubs, func(key string, v json.RawMessage) ([]any, error) {
		var sub string
		err := json.Unmarshal(v, &sub)
		return []any{backup.PinnedSub{IDCommitment: key, Sub: sub}}, err
	}, func(st tables, row any) error {
		p := row.(backup.PinnedSub)
		return set(st, tablePinnedSubs, p.IDCommitment, p.Sub)
	}},
	{tablePCPs, backup.TablePCPBindings, func(key string, v json.RawMessage) ([]any, error) {
		var idComm string
		err := json.Unmarshal(v, &idComm)
		return []any{backup.PCPBinding{PCPDigest: key, IDCommitment: idComm}}, err
	}, func(st tables, row any) error {
		b := row.(backup.PCPBinding)
		return set(st, tablePCPs, b.PCPDigest, b.IDCommitment)
	}},
	{tableRefreshes, backup.TableRefreshes, as[record.Refresh](nil), func(st tables, row any) error {
		r := row.(record.Refresh)
		return set(st, tableRefreshes, refreshKey(r), r)
	}},
}

// ErrNotEmpty: a restore target already holds data.
var ErrNotEmpty = errors.New("the target store is not empty")

// Restore writes the rows that load calls its argument with as the store
// of dir, which must hold no store (or force must be set: then the store
// there is replaced). The rows are checked and the new snapshot written
// to a temporary file first; only a complete snapshot replaces the old
// state (rename), so a failed restore leaves dir as it was. Rows of the
// files table are ignored: they belong to the data directory. verify, if
// not nil, runs before anything is written with a function that reads the
// new state back as Export would; an error it returns stops the restore.
func Restore(dir string, force bool, load func(backup.Emit) error, verify func(readBack func(backup.Emit) error) error) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	if !force {
		_, n, err := recoverState(dir)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("store: %s holds %d records: %w", dir, n, ErrNotEmpty)
		}
	}
	st := tables{}
	byLogical := map[string]exportTable{}
	for _, t := range exportTables {
		byLogical[t.logical] = t
	}
	if err := load(func(table string, row any) error {
		if table == backup.TableFiles {
			return nil
		}
		t, ok := byLogical[table]
		if !ok {
			return fmt.Errorf("store: unknown table %q", table)
		}
		return t.put(st, row)
	}); err != nil {
		return err
	}
	if verify != nil {
		if err := verify(func(emit backup.Emit) error { return exportState(context.Background(), st, emit) }); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, snapshotName)
	f, err := os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := errors.Join(writeSnapshot(f, 0, st), f.Sync(), f.Close()); err != nil {
		os.Remove(path + ".tmp")
		return fmt.Errorf("store: write snapshot: %w", err)
	}
	// The journal goes first: its LSNs would continue the old snapshot's.
	// Until the new mark is written a crash leaves a store Open refuses
	// (the old mark names a journal that is gone).
	if err := os.Remove(filepath.Join(dir, journalName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: %w", err)
	}
	if err := (&DB{dir: dir, openFile: openOSFile}).writeMark(0); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return syncDir(dir)
}

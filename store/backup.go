package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"worldid/backup"
	"worldid/record"
	"worldid/store/engine"
)

// Backup and restore in the logical format of package backup.

// Export emits every record in the logical format, table by table, from a
// copy of the durable state (engine.DB.Copy), so it reflects exactly the
// writes acknowledged before it began. Derived tables are not exported:
// Restore rebuilds them.
func (db *DB) Export(ctx context.Context, emit backup.Emit) error {
	st, err := db.Copy()
	if err != nil {
		return err
	}
	return exportState(ctx, st, emit)
}

// ExportDir is Export of the stopped store in dir (engine.ReadDir: under
// the directory's lock, changing no file).
func ExportDir(ctx context.Context, dir string, emit backup.Emit) error {
	st, err := engine.ReadDir(dir, codecs)
	if err != nil {
		return err
	}
	return exportState(ctx, st, emit)
}

// exportState emits the logical rows of st.
func exportState(ctx context.Context, st engine.State, emit backup.Emit) error {
	for _, t := range exportTables {
		for _, key := range st.Keys(t.kv) {
			if err := ctx.Err(); err != nil {
				return err
			}
			v, _ := st.Get(t.kv, key)
			rowsOut, err := t.toRows(key, v)
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
	put         func(st engine.State, row any) error
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

// exportTables holds every table but those Restore derives from them
// (TestEveryTableIsBackedUp lists those).
var exportTables = []exportTable{
	{tableApps, backup.TableApps, as(func(a *record.App, _ string) error {
		if a.RedirectURIs == nil {
			a.RedirectURIs = []string{}
		}
		return nil
	}), func(st engine.State, row any) error {
		a := row.(record.App)
		return errors.Join(st.Insert(tableApps, a.ID, a), st.Insert(tableRPs, a.RPID, a.ID))
	}},
	{tableActions, backup.TableActions, as[record.Action](nil), func(st engine.State, row any) error {
		a := row.(record.Action)
		key, err := verifyKey(a.RPID, a.Environment, a.Action)
		if err != nil {
			return err
		}
		return st.Insert(tableActions, key, a)
	}},
	{tableNullifiers, backup.TableNullifiers, func(key string, v json.RawMessage) ([]any, error) {
		var parts []string
		var n nullifierRecord
		if err := errors.Join(json.Unmarshal([]byte(key), &parts), json.Unmarshal(v, &n)); err != nil || len(parts) != 4 {
			return nil, fmt.Errorf("malformed nullifier record: %v", err)
		}
		return []any{backup.Nullifier{RPID: parts[0], Environment: parts[1], Action: parts[2], Nullifier: parts[3], CreatedAt: n.CreatedAt, Count: n.Count}}, nil
	}, func(st engine.State, row any) error {
		n := row.(backup.Nullifier)
		key, err := verifyKey(n.RPID, n.Environment, n.Action, n.Nullifier)
		if err != nil {
			return err
		}
		return st.Insert(tableNullifiers, key, nullifierRecord{CreatedAt: n.CreatedAt, Count: n.Count})
	}},
	{tableSigningKeys, backup.TableSigningKeys, as[record.SigningKey](nil), func(st engine.State, row any) error {
		k := row.(record.SigningKey)
		return st.Insert(tableSigningKeys, k.ID, k)
	}},
	{tableRevokedKeys, backup.TableRevokedKeys, as[record.RevokedKey](nil), func(st engine.State, row any) error {
		k := row.(record.RevokedKey)
		return st.Insert(tableRevokedKeys, k.ID, k)
	}},
	{tableSignins, backup.TableSigninProgress, as[record.SigninProgress](nil), func(st engine.State, row any) error {
		r := row.(record.SigninProgress)
		return st.Insert(tableSignins, r.ID, r)
	}},
	{tableProofs, backup.TableSpentProofs, func(key string, v json.RawMessage) ([]any, error) {
		t, err := decodeTime(v)
		return []any{backup.SpentProof{Key: key, ExpiresAt: t}}, err
	}, func(st engine.State, row any) error {
		p := row.(backup.SpentProof)
		return st.Insert(tableProofs, p.Key, p.ExpiresAt)
	}},
	{tableCodes, backup.TableAuthCodes, func(_ string, v json.RawMessage) ([]any, error) {
		var c storedCode
		err := json.Unmarshal(v, &c)
		return []any{backup.AuthCode{Code: c.Code, Redeemed: c.Redeemed}}, err
	}, func(st engine.State, row any) error {
		c := row.(backup.AuthCode)
		return st.Insert(tableCodes, c.Code.ID, storedCode{Code: c.Code, Redeemed: c.Redeemed})
	}},
	{tableRevoked, backup.TableRevokedGrants, func(key string, v json.RawMessage) ([]any, error) {
		t, err := decodeTime(v)
		return []any{backup.RevokedGrant{GrantID: key, RetainUntil: t}}, err
	}, func(st engine.State, row any) error {
		g := row.(backup.RevokedGrant)
		return st.Insert(tableRevoked, g.GrantID, g.RetainUntil)
	}},
	{tableDeviceGrants, backup.TableDeviceGrants, as[record.DeviceGrant](nil), func(st engine.State, row any) error {
		return insertDeviceGrant(st, row.(record.DeviceGrant))
	}},
	{tableLeaves, backup.TableLeaves, func(key string, v json.RawMessage) ([]any, error) {
		var l record.Leaf
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, err
		}
		tree := key[:max(strings.LastIndexByte(key, '/'), 0)]
		return []any{backup.Leaf{Tree: tree, Leaf: l}}, nil
	}, func(st engine.State, row any) error {
		l := row.(backup.Leaf)
		var size int64
		if raw, ok := st.Get(tableTreeSizes, l.Tree); ok {
			json.Unmarshal(raw, &size)
		}
		if int64(l.Leaf.Index) != size {
			return fmt.Errorf("tree %q: leaf %d follows %d leaves", l.Tree, l.Leaf.Index, size)
		}
		return errors.Join(addLeaf(st, st.Set, l.Tree, l.Leaf), st.Set(tableTreeSizes, l.Tree, size+1))
	}},
	{tableExternalRoots, backup.TableExternalRoots, as[record.ExternalRoot](nil), func(st engine.State, row any) error {
		r := row.(record.ExternalRoot)
		return st.Insert(tableExternalRoots, r.Tree+"/"+r.Root, r)
	}},
	{tableTrustAnchors, backup.TableTrustAnchors, as[record.TrustAnchor](nil), func(st engine.State, row any) error {
		a := row.(record.TrustAnchor)
		return st.Insert(tableTrustAnchors, a.Kind+"/"+a.ID, a)
	}},
	{tableSettings, backup.TableSettings, func(key string, v json.RawMessage) ([]any, error) {
		var on bool
		err := json.Unmarshal(v, &on)
		return []any{backup.Setting{Name: key, Enabled: on}}, err
	}, func(st engine.State, row any) error {
		s := row.(backup.Setting)
		return st.Insert(tableSettings, s.Name, s.Enabled)
	}},
	{tableSignups, backup.TableSignups, as[record.Signup](nil), func(st engine.State, row any) error {
		s := row.(record.Signup)
		return st.Insert(tableSignups, s.IDCommitment, s)
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
	}, func(st engine.State, row any) error {
		k := row.(backup.OrbKey)
		var pems []string
		if raw, ok := st.Get(tableOrbKeys, k.OrbID); ok {
			json.Unmarshal(raw, &pems)
		}
		if k.Position != len(pems) {
			return fmt.Errorf("orb %q: key %d follows %d keys", k.OrbID, k.Position, len(pems))
		}
		return st.Set(tableOrbKeys, k.OrbID, append(pems, k.PEM))
	}},
	{tablePinnedSubs, backup.TablePinnedSubs, func(key string, v json.RawMessage) ([]any, error) {
		var sub string
		err := json.Unmarshal(v, &sub)
		return []any{backup.PinnedSub{IDCommitment: key, Sub: sub}}, err
	}, func(st engine.State, row any) error {
		p := row.(backup.PinnedSub)
		return st.Insert(tablePinnedSubs, p.IDCommitment, p.Sub)
	}},
	{tablePCPs, backup.TablePCPBindings, func(key string, v json.RawMessage) ([]any, error) {
		var idComm string
		err := json.Unmarshal(v, &idComm)
		return []any{backup.PCPBinding{PCPDigest: key, IDCommitment: idComm}}, err
	}, func(st engine.State, row any) error {
		b := row.(backup.PCPBinding)
		return st.Insert(tablePCPs, b.PCPDigest, b.IDCommitment)
	}},
	{tableRefreshes, backup.TableRefreshes, as[record.Refresh](nil), func(st engine.State, row any) error {
		r := row.(record.Refresh)
		return st.Insert(tableRefreshes, refreshKey(r), r)
	}},
}

// Restore writes the rows that load calls its argument with as the store
// of dir, which must hold no store (or force must be set: then the store
// there is replaced). The rows are checked and the new snapshot written
// to a temporary file first; only a complete snapshot replaces the old
// state (rename), so a failed restore leaves dir as it was. Rows of the
// files table are ignored: they belong to the data directory. verify, if
// not nil, runs before anything is written with a function that reads the
// new state back as Export would; an error it returns stops the restore.
func Restore(dir string, force bool, load func(backup.Emit) error, verify func(readBack func(backup.Emit) error) error) error {
	byLogical := map[string]exportTable{}
	for _, t := range exportTables {
		byLogical[t.logical] = t
	}
	return engine.WriteDir(dir, force, codecs, func(st engine.State) error {
		if err := load(func(table string, row any) error {
			if table == backup.TableFiles {
				return nil
			}
			t, ok := byLogical[table]
			if !ok {
				return fmt.Errorf("store: unknown table %q", table)
			}
			return t.put(st, row)
		}); err != nil || verify == nil {
			return err
		}
		return verify(func(emit backup.Emit) error { return exportState(context.Background(), st, emit) })
	})
}

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"worldid/record"
	"worldid/store/engine"
)

// Device authorization grants (package oidc's Store, RFC 8628). Both keys
// arrive hashed: the device code's and the user code's SHA-256.
const (
	tableDeviceGrants    = "oidc_device_grants"     // device code hash → record.DeviceGrant
	tableDeviceUserCodes = "oidc_device_user_codes" // user code hash → device code hash (derived)
)

// SaveDeviceGrant stores a new device grant; an ID or UserCode already
// stored wraps record.ErrExists and stores nothing.
// SQL: INSERT INTO device_grants … (both columns unique).
func (db *DB) SaveDeviceGrant(ctx context.Context, g record.DeviceGrant) error {
	return db.Update(ctx, func(tx *engine.Tx) error { return insertDeviceGrant(tx, g) })
}

// insertDeviceGrant writes g and its user code index entry.
func insertDeviceGrant(st interface {
	Insert(table, key string, v any) error
}, g record.DeviceGrant) error {
	if err := st.Insert(tableDeviceUserCodes, g.UserCode, g.ID); err != nil {
		return err
	}
	return st.Insert(tableDeviceGrants, g.ID, g)
}

// DeviceGrantByUserCode returns the grant whose user code hashes to
// userCode, in whatever state, or an error wrapping record.ErrNotFound.
// SQL: SELECT … FROM device_grants WHERE user_code = $1.
func (db *DB) DeviceGrantByUserCode(_ context.Context, userCode string) (g record.DeviceGrant, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		var id string
		if err := getJSON(tx, tableDeviceUserCodes, userCode, &id); err != nil {
			return err
		}
		return getJSON(tx, tableDeviceGrants, id, &g)
	})
	return g, err
}

// UpdateDeviceGrant calls update with the grant id and, if it reports a
// change, stores the changed grant, in one Update; it returns the grant as
// update left it. An unknown id wraps record.ErrNotFound.
// SQL: SELECT … FOR UPDATE, then UPDATE, in one transaction.
func (db *DB) UpdateDeviceGrant(ctx context.Context, id string, update func(*record.DeviceGrant) bool) (g record.DeviceGrant, err error) {
	err = db.Update(ctx, func(tx *engine.Tx) error {
		g = record.DeviceGrant{}
		if err := getJSON(tx, tableDeviceGrants, id, &g); err != nil {
			return err
		}
		if write, err := g.Apply(update); !write {
			return err
		}
		return tx.Put(tableDeviceGrants, id, g)
	})
	return g, err
}

// pruneDeviceGrants deletes the grants whose retention ended at now, with
// their user code index entries.
func pruneDeviceGrants(tx *engine.Tx, now time.Time) error {
	var gone []record.DeviceGrant
	var err error
	tx.Scan(tableDeviceGrants, "", func(key string, v json.RawMessage) bool {
		var g record.DeviceGrant
		if err = json.Unmarshal(v, &g); err != nil {
			err = fmt.Errorf("store: %s %q: %w", tableDeviceGrants, key, err)
			return false
		}
		if !g.RetainUntil.After(now) {
			gone = append(gone, g)
		}
		return true
	})
	for _, g := range gone {
		tx.Delete(tableDeviceGrants, g.ID)
		tx.Delete(tableDeviceUserCodes, g.UserCode)
	}
	return err
}

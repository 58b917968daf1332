package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Reader is what reads need from ReadTx and Tx, so the same code serves
// View and Update.
type Reader interface {
	Get(table, key string) (json.RawMessage, bool)
	Scan(table, prefix string, fn func(key string, v json.RawMessage) bool)
}

// ReadTx is a read-only view of the durable state, valid during View's fn.
type ReadTx struct {
	base State
	lsn  uint64
}

// LSN returns the LSN of the newest write this view holds: the store's
// generation, which a file derived from the state can record to tell
// whether it is current. It starts at 0 for a new or restored store.
func (r *ReadTx) LSN() uint64 { return r.lsn }

// Get returns a copy of the value at table/key.
func (r *ReadTx) Get(table, key string) (json.RawMessage, bool) {
	return r.base.Get(table, key)
}

// Scan calls fn for each key of table that starts with prefix, in ascending
// byte order, until fn returns false. It costs time proportional to the
// table's size.
func (r *ReadTx) Scan(table, prefix string, fn func(key string, v json.RawMessage) bool) {
	rows := r.base.tables[table]
	if rows == nil {
		return
	}
	for _, k := range rows.sortedKeys(prefix) {
		v, _ := rows.get(k)
		if !fn(k, json.RawMessage(v)) {
			return
		}
	}
}

// Count returns the number of keys in table.
func (r *ReadTx) Count(table string) int { return r.base.count(table) }

// Records calls fn with every packed record of table whose key is in
// group (Codec.Split), without the group, in no particular order. fn
// must not keep rec. Rows of the group that are not packed are not
// included: Get finds those.
func (r *ReadTx) Records(table, group string, fn func(rec []byte)) {
	if rows := r.base.tables[table]; rows != nil && rows.packed != nil {
		rows.packed.records(group, fn)
	}
}

// Tx is a read-write transaction, valid during Update's fn. Its reads see,
// newest first: its own writes, the writes of earlier Updates still waiting
// for their fsync, and the durable state. It is not safe for concurrent use.
type Tx struct {
	db      *DB
	changes []change            // one per key, in first-write order
	index   map[rowID]int       // position of each key's change
	seen    uint64              // newest queued LSN this Tx has read
	seconds map[secondID]string // second key → key of the rows it wrote (Lookup)
}

type rowID struct{ table, key string }

// Get returns a copy of the value at table/key.
func (tx *Tx) Get(table, key string) (json.RawMessage, bool) {
	if i, ok := tx.index[rowID{table, key}]; ok {
		c := tx.changes[i]
		return bytes.Clone(c.Value), c.Op == opPut
	}
	tx.db.mu.RLock()
	defer tx.db.mu.RUnlock()
	v, ok := tx.committed(table, key)
	if !ok {
		return nil, false
	}
	return json.RawMessage(v), true
}

// committed returns table/key as left by earlier Updates, durable or not,
// and records the queued LSN it depends on. The caller holds db.mu.
func (tx *Tx) committed(table, key string) (string, bool) {
	if p, ok := tx.db.overlay[table][key]; ok {
		tx.seen = max(tx.seen, p.lsn)
		return p.value, p.present
	}
	return tx.db.base.get(table, key)
}

// Scan is ReadTx.Scan over what this Tx sees.
func (tx *Tx) Scan(table, prefix string, fn func(key string, v json.RawMessage) bool) {
	rows := tx.committedRows(table, prefix)
	for _, c := range tx.changes {
		if c.Table != table || !strings.HasPrefix(c.Key, prefix) {
			continue
		}
		if c.Op == opPut {
			rows[c.Key] = string(c.Value)
		} else {
			delete(rows, c.Key)
		}
	}
	for _, k := range sortedWithPrefix(rows, prefix) {
		if !fn(k, json.RawMessage(rows[k])) {
			return
		}
	}
}

// committedRows copies the rows of table with the prefix as left by earlier
// Updates.
func (tx *Tx) committedRows(table, prefix string) map[string]string {
	tx.db.mu.RLock()
	defer tx.db.mu.RUnlock()
	rows := map[string]string{}
	if base := tx.db.base.tables[table]; base != nil {
		base.each(func(k, v string) bool {
			if strings.HasPrefix(k, prefix) {
				rows[k] = v
			}
			return true
		})
	}
	for k, p := range tx.db.overlay[table] {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		tx.seen = max(tx.seen, p.lsn)
		if p.present {
			rows[k] = p.value
		} else {
			delete(rows, k)
		}
	}
	return rows
}

// Count returns the number of keys in table as this Tx sees it.
func (tx *Tx) Count(table string) int {
	tx.db.mu.RLock()
	defer tx.db.mu.RUnlock()
	n := tx.db.base.count(table)
	for k, p := range tx.db.overlay[table] {
		tx.seen = max(tx.seen, p.lsn)
		_, inBase := tx.db.base.get(table, k)
		n += presence(p.present) - presence(inBase)
	}
	for _, c := range tx.changes {
		if c.Table == table {
			_, before := tx.committed(table, c.Key)
			n += presence(c.Op == opPut) - presence(before)
		}
	}
	return n
}

func presence(present bool) int {
	if present {
		return 1
	}
	return 0
}

// Put stores the JSON encoding of v at table/key. Table and key must be
// non-empty, valid UTF-8.
func (tx *Tx) Put(table, key string, v any) error {
	if err := checkName(table, key); err != nil {
		return fmt.Errorf("store: put %q/%q: %w", table, key, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: put %s/%s: %w", table, key, err)
	}
	tx.record(change{Op: opPut, Table: table, Key: key, Value: b})
	return nil
}

// Delete removes table/key; deleting an absent key writes nothing.
func (tx *Tx) Delete(table, key string) {
	if _, ok := tx.Get(table, key); ok {
		tx.record(change{Op: opDel, Table: table, Key: key})
	}
}

// record adds c, replacing an earlier change of the same key.
func (tx *Tx) record(c change) {
	id := rowID{c.Table, c.Key}
	if i, ok := tx.index[id]; ok {
		tx.changes[i] = c
		noteSecond(tx.seconds, tx.db.codecs[c.Table], c.Table, c.Key, c.Value)
		return
	}
	if tx.index == nil {
		tx.index, tx.seconds = map[rowID]int{}, map[secondID]string{}
	}
	noteSecond(tx.seconds, tx.db.codecs[c.Table], c.Table, c.Key, c.Value)
	tx.index[id] = len(tx.changes)
	tx.changes = append(tx.changes, c)
}

func sortedWithPrefix(rows map[string]string, prefix string) []string {
	keys := slices.Collect(maps.Keys(rows))
	if prefix != "" {
		keys = slices.DeleteFunc(keys, func(k string) bool { return !strings.HasPrefix(k, prefix) })
	}
	slices.Sort(keys)
	return keys
}

package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"worldid/record"
)

// State is the committed state, or a copy of it: table → key → compact
// JSON value. Values are kept as strings, not decoded data, and the rows
// of tables with a codec as fixed-width records, to keep a million small
// records cheap.
type State struct {
	tables map[string]*rows
	codecs map[string]Codec
}

// newState returns an empty state whose tables use codecs.
func newState(codecs map[string]Codec) State {
	return State{tables: map[string]*rows{}, codecs: codecs}
}

// table returns the rows of name, created if absent.
func (s State) table(name string) *rows {
	r := s.tables[name]
	if r == nil {
		r = newRows(s.codecs[name])
		s.tables[name] = r
	}
	return r
}

func (s State) get(table, key string) (string, bool) {
	r := s.tables[table]
	if r == nil {
		return "", false
	}
	return r.get(key)
}

// count returns the number of rows of table.
func (s State) count(table string) int {
	if r := s.tables[table]; r != nil {
		return r.len()
	}
	return 0
}

// apply performs one change and returns how the record count changed.
func (s State) apply(c change) int {
	if c.Op == opDel {
		r := s.tables[c.Table]
		if r == nil || !r.del(c.Key) {
			return 0
		}
		if r.len() == 0 {
			delete(s.tables, c.Table)
		}
		return -1
	}
	return presence(s.table(c.Table).set(c.Key, string(c.Value)))
}

func (s State) clone() State {
	c := State{tables: make(map[string]*rows, len(s.tables)), codecs: s.codecs}
	for name, r := range s.tables {
		c.tables[name] = r.clone()
	}
	return c
}

// Tables returns the names of the tables that hold rows, sorted.
func (s State) Tables() []string { return slices.Sorted(maps.Keys(s.tables)) }

// Keys returns the keys of table in ascending byte order.
func (s State) Keys(table string) []string {
	if r := s.tables[table]; r != nil {
		return r.sortedKeys("")
	}
	return nil
}

// Get returns the value at table/key.
func (s State) Get(table, key string) (json.RawMessage, bool) {
	v, ok := s.get(table, key)
	if !ok {
		return nil, false
	}
	return json.RawMessage(v), true
}

// Set stores v at table/key, replacing what is there. It checks names and
// encodes v as Tx.Put does.
func (s State) Set(table, key string, v any) error {
	if err := checkName(table, key); err != nil {
		return fmt.Errorf("%s %q: %w", table, key, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.table(table).set(key, string(b))
	return nil
}

// Insert stores v at table/key; a key present already is an error
// wrapping record.ErrExists. It checks names and encodes v as Tx.Put does.
func (s State) Insert(table, key string, v any) error {
	if _, dup := s.get(table, key); dup {
		return fmt.Errorf("%s %q: %w", table, key, record.ErrExists)
	}
	return s.Set(table, key, v)
}

package store

import (
	"encoding/json"
	"fmt"

	"worldid/record"
	"worldid/store/engine"
)

// getJSON decodes the value at table/key into v, or returns an error
// wrapping record.ErrNotFound.
func getJSON(r engine.Reader, table, key string, v any) error {
	raw, ok := r.Get(table, key)
	if !ok {
		return fmt.Errorf("store: %s %q: %w", table, key, record.ErrNotFound)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("store: %s %q: %w", table, key, err)
	}
	return nil
}

// scanJSON decodes every value of table whose key has the prefix, in key
// order. The result is empty, not nil, when nothing matches.
func scanJSON[T any](r engine.Reader, table, prefix string) ([]T, error) {
	out := []T{}
	var err error
	r.Scan(table, prefix, func(key string, raw json.RawMessage) bool {
		var v T
		if err = json.Unmarshal(raw, &v); err != nil {
			err = fmt.Errorf("store: %s %q: %w", table, key, err)
			return false
		}
		out = append(out, v)
		return true
	})
	return out, err
}

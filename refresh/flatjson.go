package refresh

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// readFlatObject decodes exactly one JSON object whose values are scalars
// (string, json.Number, bool or nil). It rejects invalid UTF-8 (which
// encoding/json would silently replace), duplicate member names (which it
// would silently overwrite), nested values and trailing data.
func readFlatObject(b []byte) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	obj := map[string]any{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := key.(string) // inside an object, Token returns member names as strings
		val, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if _, nested := val.(json.Delim); nested {
			return nil, errors.New("member " + name + " is not a scalar")
		}
		if _, dup := obj[name]; dup {
			return nil, errors.New("duplicate member " + name)
		}
		obj[name] = val
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return obj, nil
}

package refresh

import (
	"errors"

	"worldid/internal/leaf/strictjson"
)

// readFlatObject reads exactly one JSON object whose values are scalars
// (string, number, true, false or null), under internal/leaf/strictjson: no
// invalid UTF-8 (which encoding/json would silently replace), no duplicate
// member names (which it would silently overwrite), nothing after it.
func readFlatObject(b []byte) (map[string]strictjson.Value, error) {
	root, err := strictjson.Parse(b)
	if err != nil {
		return nil, err
	}
	if root.Kind() != strictjson.Object {
		return nil, errors.New("not a JSON object")
	}
	obj := map[string]strictjson.Value{}
	for name, v := range root.Members() {
		if k := v.Kind(); k == strictjson.Object || k == strictjson.Array {
			return nil, errors.New("member " + name + " is not a scalar")
		}
		obj[name] = v
	}
	return obj, nil
}

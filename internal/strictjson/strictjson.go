package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Decode checks data against v's type and then decodes it into v, which
// must be a non-nil pointer.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := walk(dec, reflect.TypeOf(v), "$"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return json.Unmarshal(data, v)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// walk reads one value at path. t is the Go type it will be decoded into,
// or nil when member names are not checked.
func walk(dec *json.Decoder, t reflect.Type, path string) error {
	t = schemaType(t)
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, t, path)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walk(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

func walkObject(dec *json.Decoder, t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	var values reflect.Type
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
	case t != nil && t.Kind() == reflect.Map:
		values = t.Elem()
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string) // inside an object, Token returns member names
		if seen[name] {
			return fmt.Errorf("%s: duplicate member %q", path, name)
		}
		seen[name] = true
		next := values
		if fields != nil {
			ft, ok := fields[name]
			if !ok {
				return fmt.Errorf("%s: unknown member %q (names are case-sensitive)", path, name)
			}
			next = ft
		}
		if err := walk(dec, next, path+"."+name); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// schemaType strips pointers and returns nil for types whose JSON form is
// not checked here: custom unmarshalers and interfaces.
func schemaType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// fieldsOf maps the JSON names of t's fields to their types, promoting the
// fields of embedded structs without a name as encoding/json does.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || (!f.IsExported() && !f.Anonymous):
		case f.Anonymous && tag == "" && schemaType(f.Type) != nil && schemaType(f.Type).Kind() == reflect.Struct:
			for name, ft := range fieldsOf(schemaType(f.Type)) {
				if _, shadowed := fields[name]; !shadowed {
					fields[name] = ft
				}
			}
		case tag != "":
			fields[tag] = f.Type
		case f.IsExported():
			fields[f.Name] = f.Type
		}
	}
	return fields
}

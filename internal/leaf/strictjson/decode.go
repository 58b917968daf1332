package strictjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Decode parses data and decodes it into v, a non-nil pointer, as
// encoding/json does after rejecting, besides what Parse rejects, every
// member name that matches no field of the destination struct exactly:
// encoding/json would fold case ("Name" fills `json:"name"`) or ignore it.
// Names are checked at every depth, through pointers, slices, arrays, maps
// and embedded structs; values of types with their own UnmarshalJSON
// (time.Time, for example) and of interface types are not.
func Decode(data []byte, v any) error {
	root, err := Parse(data)
	if err != nil {
		return err
	}
	c := nameChecker{fields: map[reflect.Type]map[string]reflect.Type{}}
	if err := c.check(root, reflect.TypeOf(v)); err != nil {
		return err
	}
	return json.Unmarshal(root.Bytes(), v)
}

// nameChecker walks a parsed value beside the Go type it will fill.
type nameChecker struct {
	fields map[reflect.Type]map[string]reflect.Type // fieldsOf, per struct type met
	path   []step                                   // per level, formatted only for an error
}

// step is an element index, or a member name when index is -1.
type step struct {
	name  string
	index int
}

func (c *nameChecker) check(v Value, t reflect.Type) error {
	t = schemaType(t)
	switch {
	case t == nil:
		return nil
	case v.Kind() == Array && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		i := 0
		for elem := range v.Elements() {
			if err := c.descend(step{index: i}, elem, t.Elem()); err != nil {
				return err
			}
			i++
		}
	case v.Kind() == Object && t.Kind() == reflect.Map:
		for name, m := range v.Members() {
			if err := c.descend(step{name: name, index: -1}, m, t.Elem()); err != nil {
				return err
			}
		}
	case v.Kind() == Object && t.Kind() == reflect.Struct:
		fields := c.fieldsOf(t)
		for name, m := range v.Members() {
			ft, ok := fields[name]
			if !ok {
				return fmt.Errorf("%s: unknown member %q (names are case-sensitive)", c.pathString(), name)
			}
			if err := c.descend(step{name: name, index: -1}, m, ft); err != nil {
				return err
			}
		}
	}
	return nil // other mismatches are encoding/json's to report
}

func (c *nameChecker) descend(s step, v Value, t reflect.Type) error {
	c.path = append(c.path, s)
	err := c.check(v, t)
	c.path = c.path[:len(c.path)-1]
	return err
}

func (c *nameChecker) pathString() string {
	b := []byte{'$'}
	for _, s := range c.path {
		if s.index < 0 {
			b = append(append(b, '.'), s.name...)
		} else {
			b = append(strconv.AppendInt(append(b, '['), int64(s.index), 10), ']')
		}
	}
	return string(b)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

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
func (c *nameChecker) fieldsOf(t reflect.Type) map[string]reflect.Type {
	if fields, ok := c.fields[t]; ok {
		return fields
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || (!f.IsExported() && !f.Anonymous):
		case f.Anonymous && tag == "" && schemaType(f.Type) != nil && schemaType(f.Type).Kind() == reflect.Struct:
			for name, ft := range c.fieldsOf(schemaType(f.Type)) {
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
	c.fields[t] = fields
	return fields
}

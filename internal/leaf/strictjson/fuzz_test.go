package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; what it accepts, encoding/json accepts
// and the Value API reads as encoding/json does; what it rejects as
// ErrSyntax, encoding/json rejects too.
func FuzzParse(f *testing.F) {
	for _, c := range acceptCases {
		f.Add([]byte(c))
	}
	for _, c := range []string{`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, "\"\xff\"", `"\ud800"`, `[1,]`, `01`,
		`{"a":[1,{"b":"\u00e9"}],"c":-0.5e+2}`, strings.Repeat("[", 70) + strings.Repeat("]", 70)} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(data) || !strings.HasPrefix(e.Path, "$") {
				t.Fatalf("error %#v", err)
			}
			if errors.Is(err, ErrSyntax) && json.Valid(data) {
				t.Fatalf("syntax error %v on what encoding/json accepts", err)
			}
			return
		}
		want, err := stdDecode(data)
		if err != nil || !json.Valid(data) {
			t.Fatalf("accepted what encoding/json rejects: %v", err)
		}
		if got := toAny(t, v); !reflect.DeepEqual(got, want) {
			t.Fatalf("Value reads %#v, encoding/json %#v", got, want)
		}
	})
}

// FuzzDecode checks that whatever Decode accepts, encoding/json with
// DisallowUnknownFields decodes to the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"name":"n","items":[{"id":"a"}]}`, `{"name":"a","name":"b"}`, `{"Name":"a"}`,
		`{"labels":{"x":{"id":"l"}},"any":[1,{"a":null}]}`, `{"untag":1}`, `[]`, `null`, `{"raw":{"a":1,"a":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got outer
		if Decode(data, &got) != nil {
			return
		}
		var want outer
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("Decode accepted what encoding/json rejects: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("values differ: %+v vs %+v", got, want)
		}
	})
}

package strictjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

type Embedded struct {
	Extra string `json:"extra"`
}

type outer struct {
	Embedded
	Name    string           `json:"name"`
	Items   []inner          `json:"items,omitempty"`
	Ptr     *inner           `json:"ptr"`
	Labels  map[string]inner `json:"labels"`
	Any     any              `json:"any"`
	Untag   int              // matched by its Go name, exactly
	Skipped string           `json:"-"`
	//lint:ignore U1000 read by reflection: an unexported field is never decoded
	private string
	Raw     json.RawMessage   `json:"raw"`
	Fixed   [2]inner          `json:"fixed"`
	Nested  map[string][]byte `json:"nested"`
}

func TestDecodeAccepts(t *testing.T) {
	body := `{"extra":"e","name":"n","items":[{"id":"a","at":"2026-01-02T03:04:05Z"}],
		"ptr":{"id":"p"},"labels":{"x":{"id":"l"}},"any":{"Free":1,"free":2},"Untag":3,
		"raw":{"k":1},"fixed":[{"id":"f"},{}],"nested":{"a":"AQ=="}}`
	var got outer
	if err := Decode([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	var want outer
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"name":"a","name":"b"}`, `$.name: duplicate member name (offset 12)`},
		{`{"items":[{"id":"a","id":"b"}]}`, `$.items[0].id: duplicate member name`},
		{`{"any":{"k":1,"k":2}}`, `$.any.k: duplicate member name`},
		{`{"labels":{"x":{},"x":{}}}`, `$.labels.x: duplicate member name`},
		{`{"raw":{"a":1,"\u0061":2}}`, `$.raw.a: duplicate member name`},
		{`{"Name":"a"}`, `$: unknown member "Name"`},
		{`{"untag":1}`, `$: unknown member "untag"`},
		{`{"ptr":{"ID":"p"}}`, `$.ptr: unknown member "ID"`},
		{`{"labels":{"x":{"Id":"l"}}}`, `$.labels.x: unknown member "Id"`},
		{`{"fixed":[{},{"iD":"f"}]}`, `$.fixed[1]: unknown member "iD"`},
		{`{"Skipped":"s"}`, `$: unknown member "Skipped"`},
		{`{"private":"s"}`, `$: unknown member "private"`},
		{`{"Embedded":{}}`, `$: unknown member "Embedded"`},
		{`{"labels":{"":{"x":1}}}`, `$.labels.: unknown member "x"`},
		{`{"name":"a"} {}`, `$: not JSON: '{', data after the value (offset 13)`},
		{`{"name":"a"`, `$: not JSON: unexpected end of input (offset 11)`},
		{"{\"name\":\"\xff\"}", `$.name: not valid UTF-8 (offset 9)`},
		{`{"name":1}`, `cannot unmarshal number`},
	} {
		var v outer
		err := Decode([]byte(c.body), &v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
	}
}

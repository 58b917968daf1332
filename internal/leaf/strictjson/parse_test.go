package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// toAny rebuilds v through the Value API in encoding/json's UseNumber form.
func toAny(t testing.TB, v Value) any {
	switch v.Kind() {
	case Null:
		return nil
	case Bool:
		return string(v.Bytes()) == "true"
	case Number:
		return json.Number(v.Bytes())
	case String:
		s, _ := v.Unquote()
		return s
	case Array:
		list := []any{}
		for e := range v.Elements() {
			list = append(list, toAny(t, e))
		}
		return list
	case Object:
		m := map[string]any{}
		for name, e := range v.Members() {
			m[name] = toAny(t, e)
		}
		return m
	}
	t.Fatalf("kind %d of %q", v.Kind(), v.Bytes())
	return nil
}

// stdDecode is what encoding/json reads from data.
func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var acceptCases = []string{
	`null`, `true`, `false`, `0`, `-0`, `-0.0e-0`, `123.456E+78`, `1e999`, `""`, `[]`, `{}`,
	" \t\r\n[ 1 , {\"a\" : [ ] } , \"x\" ] \n",
	`"\" \\ \/ \b \f \n \r \t \u0000 \u00e9 \uD83D\uDE00 \uFFFF"`,
	"\"é ☃ 😀 \uFFFD\"", // literal U+FFFD is a character, not a replacement
	`{"a":1,"A":2,"b":{"a":1},"c":[{"a":1},{"a":1}]}`,
	`{"":1,"\u0000":2," ":3}`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat(`{"a":`, MaxDepth) + `1` + strings.Repeat("}", MaxDepth),
}

func TestParseAccepts(t *testing.T) {
	for _, c := range acceptCases {
		v, err := Parse([]byte(c))
		if err != nil {
			t.Errorf("%.40q: %v", c, err)
			continue
		}
		want, err := stdDecode([]byte(c))
		if err != nil {
			t.Fatalf("%.40q: encoding/json: %v", c, err)
		}
		if got := toAny(t, v); !reflect.DeepEqual(got, want) {
			t.Errorf("%.40q: got %#v, want %#v", c, got, want)
		}
		if trimmed := strings.Trim(c, " \t\r\n"); string(v.Bytes()) != trimmed {
			t.Errorf("%.40q: Bytes %q", c, v.Bytes())
		}
	}
}

func TestParseRejects(t *testing.T) {
	deepArrays := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	deepObjects := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	for _, c := range []struct {
		in     string
		kind   error
		offset int
		path   string
	}{
		{``, ErrSyntax, 0, "$"},
		{` `, ErrSyntax, 1, "$"},
		{"\ufeff{}", ErrSyntax, 0, "$"}, // a byte order mark is not whitespace (§8.1)
		{"\f1", ErrSyntax, 0, "$"},
		{`{`, ErrSyntax, 1, "$"},
		{`[1,]`, ErrSyntax, 3, "$[1]"},
		{`[,1]`, ErrSyntax, 1, "$[0]"},
		{`[1 2]`, ErrSyntax, 3, "$[0]"},
		{`{,}`, ErrSyntax, 1, "$"},
		{`{"a":1,}`, ErrSyntax, 7, "$"},
		{`{"a" 1}`, ErrSyntax, 5, "$.a"},
		{`{"a":}`, ErrSyntax, 5, "$.a"},
		{`{"a":1 "b":2}`, ErrSyntax, 7, "$"},
		{`{a:1}`, ErrSyntax, 1, "$"},
		{`{'a':1}`, ErrSyntax, 1, "$"},
		{`{1:1}`, ErrSyntax, 1, "$"},
		{`[1]]`, ErrSyntax, 3, "$"},
		{`1 2`, ErrSyntax, 2, "$"},
		{"{}\x00", ErrSyntax, 2, "$"},
		{`01`, ErrSyntax, 1, "$"},
		{`-01`, ErrSyntax, 2, "$"},
		{`+1`, ErrSyntax, 0, "$"},
		{`.5`, ErrSyntax, 0, "$"},
		{`1.`, ErrSyntax, 2, "$"},
		{`1.e5`, ErrSyntax, 2, "$"},
		{`1e`, ErrSyntax, 2, "$"},
		{`1e+`, ErrSyntax, 3, "$"},
		{`-`, ErrSyntax, 1, "$"},
		{`- 1`, ErrSyntax, 1, "$"},
		{`0x10`, ErrSyntax, 1, "$"},
		{`NaN`, ErrSyntax, 0, "$"},
		{`-Infinity`, ErrSyntax, 1, "$"},
		{`tru`, ErrSyntax, 0, "$"},
		{`True`, ErrSyntax, 0, "$"},
		{`nulll`, ErrSyntax, 4, "$"},
		{`"abc`, ErrSyntax, 4, "$"},
		{`"\`, ErrSyntax, 2, "$"},
		{"\"a\tb\"", ErrSyntax, 2, "$"},
		{"\"\x7f\x00\"", ErrSyntax, 2, "$"},
		{`"\a"`, ErrSyntax, 1, "$"},
		{`"\x41"`, ErrSyntax, 1, "$"},
		{`"\u12"`, ErrSyntax, 1, "$"},
		{`"\u12G4"`, ErrSyntax, 1, "$"},
		{`"\U0041"`, ErrSyntax, 1, "$"},

		{"\"\xff\"", ErrUTF8, 1, "$"},
		{"\"ok\xc3\"", ErrUTF8, 3, "$"},
		{"\"\xc0\xaf\"", ErrUTF8, 1, "$"},         // overlong '/'
		{"\"\xed\xa0\x80\"", ErrUTF8, 1, "$"},     // U+D800 encoded
		{"\"\xf4\x90\x80\x80\"", ErrUTF8, 1, "$"}, // above U+10FFFF
		{"[\"a\",\"\xe2\x82\"]", ErrUTF8, 6, "$[1]"},
		{"{\"\xff\":1}", ErrUTF8, 2, "$"},
		{`"\ud800"`, ErrUTF8, 1, "$"},
		{`"\uDBFFx"`, ErrUTF8, 1, "$"},
		{`"\ud800\u0041"`, ErrUTF8, 1, "$"},
		{`"\ud800\ud800"`, ErrUTF8, 1, "$"},
		{`"\udc00"`, ErrUTF8, 1, "$"},
		{`"\udc00\ud800"`, ErrUTF8, 1, "$"},
		{`{"a":["x","\uDFFF"]}`, ErrUTF8, 11, "$.a[1]"},

		{deepArrays, ErrDepth, MaxDepth, "$" + strings.Repeat("[0]", MaxDepth)},
		{deepObjects, ErrDepth, 5 * MaxDepth, "$" + strings.Repeat(".a", MaxDepth)},

		{`{"a":1,"a":2}`, ErrDuplicate, 7, "$.a"},
		{`{"a":1,"\u0061":2}`, ErrDuplicate, 7, "$.a"},
		{`{"\/":1,"/":2}`, ErrDuplicate, 8, "$./"},
		{`{"b":1,"a":1,"a":2,"b":2}`, ErrDuplicate, 13, "$.a"},
		{`{"x":[{"k":{},"k":[]}]}`, ErrDuplicate, 14, "$.x[0].k"},
		{`[{},{"a":{"b":1,"c":{"b":2}},"a":3}]`, ErrDuplicate, 29, "$[1].a"},
	} {
		_, err := Parse([]byte(c.in))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, c.kind) || e.Offset != c.offset || e.Path != c.path {
			t.Errorf("%.40q: got %v, want %v at offset %d, %s", c.in, err, c.kind, c.offset, c.path)
		}
	}
}

// TestParseAgreesWithEncodingJSON: on the grammar, Parse rejects exactly
// what encoding/json rejects; beyond it, only what the package comment
// lists.
func TestParseAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range acceptCases {
		if !json.Valid([]byte(c)) {
			t.Errorf("%.40q: Parse accepts what encoding/json rejects", c)
		}
	}
	// encoding/json accepts these and reads them differently from how
	// they were written, or lets two readers disagree.
	for _, c := range []string{"\"\xff\"", `"\ud800"`, `{"a":1,"a":2}`, strings.Repeat("[", 100) + strings.Repeat("]", 100)} {
		if !json.Valid([]byte(c)) {
			t.Fatalf("%.40q: not a case encoding/json accepts", c)
		}
		if _, err := Parse([]byte(c)); err == nil {
			t.Errorf("%.40q accepted", c)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":[1,}`:           `$.a[1]: not JSON: '}', want a value (offset 8)`,
		`{"a":[1`:             `$.a[0]: not JSON: unexpected end of input (offset 7)`,
		"[\"\x01\"]":          `$[0]: not JSON: byte 0x01, control character in a string (offset 2)`,
		`{"a\nb":1,"a\nb":2}`: `$.a` + "\n" + `b: duplicate member name (offset 10)`,
		`{"k":"\udc00"}`:      `$.k: not valid UTF-8: unpaired surrogate escape (offset 6)`,
	} {
		_, err := Parse([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

func TestValue(t *testing.T) {
	var zero Value
	if zero.Kind() != Invalid || zero.Bytes() != nil {
		t.Fatal("zero Value is not Invalid")
	}
	if _, ok := zero.Unquote(); ok {
		t.Fatal("zero Value unquotes")
	}
	v, err := Parse([]byte(`{"s":"a\"b\u00e9\ud83d\ude00","n":-1.5e3,"o":{"x":[1,"]",{"}":"{"}]},"t":true,"z":null}`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	m := map[string]Value{}
	for name, e := range v.Members() {
		names = append(names, name)
		m[name] = e
	}
	if strings.Join(names, ",") != "s,n,o,t,z" {
		t.Fatalf("members %v", names)
	}
	if s, ok := m["s"].Unquote(); !ok || s != "a\"bé😀" {
		t.Errorf("s = %q", s)
	}
	if _, ok := m["n"].Unquote(); ok || m["n"].Kind() != Number || string(m["n"].Bytes()) != "-1.5e3" {
		t.Errorf("n = %q", m["n"].Bytes())
	}
	if string(m["o"].Bytes()) != `{"x":[1,"]",{"}":"{"}]}` || m["t"].Kind() != Bool || m["z"].Kind() != Null {
		t.Errorf("o, t, z = %q %q %q", m["o"].Bytes(), m["t"].Bytes(), m["z"].Bytes())
	}
	for range m["s"].Members() {
		t.Error("a string has members")
	}
	for range v.Elements() {
		t.Error("an object has elements")
	}
	n := 0
	for range v.Members() {
		n++
		break
	}
	if n != 1 {
		t.Error("Members does not stop")
	}
}

// TestDeepNestingRefusedEarly is the 64 KiB admin body that took 7 s and
// 2.3 GiB when every level built its path string: it is refused at the
// 65th bracket, having read 64 bytes, in constant memory.
func TestDeepNestingRefusedEarly(t *testing.T) {
	const depth = 32000
	for _, body := range [][]byte{
		[]byte(strings.Repeat("[", depth) + strings.Repeat("]", depth)),
		[]byte(strings.Repeat(`{"a":`, depth/5) + "1" + strings.Repeat("}", depth/5)),
	} {
		_, err := Parse(body)
		var e *Error
		if !errors.As(err, &e) || e.Err != ErrDepth || e.Offset > 5*MaxDepth {
			t.Fatalf("got %v, want ErrDepth within the first %d levels", err, MaxDepth)
		}
		if err := Decode(body, new(any)); !errors.Is(err, ErrDepth) {
			t.Fatalf("Decode: %v", err)
		}
		b := bytesPerRun(func() { Parse(body) })
		if b > 8<<10 {
			t.Errorf("%d bytes allocated to refuse %.10q…", b, body)
		}
	}
}

// bytesPerRun is testing.AllocsPerRun for bytes.
func bytesPerRun(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const runs = 10
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// worstShapes build documents of about n bytes that stress each part of
// Parse's memory: names of open objects, open frames, and the path a
// failure names.
var worstShapes = map[string]func(n int) string{
	"wide object": func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, `"%x":0,`, i)
		}
		return b.String() + `"":0}`
	},
	"deep long names": func(n int) string {
		name := strings.Repeat("n", 200)
		level := strings.Repeat(`{"`+name+`":`, MaxDepth-2) + "[]" + strings.Repeat("}", MaxDepth-2)
		items := make([]string, max(1, n/len(level)))
		for i := range items {
			items[i] = level
		}
		return "[" + strings.Join(items, ",") + "]"
	},
	"nested arrays": func(n int) string {
		level := strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1)
		return "[" + strings.Repeat(level+",", n/(len(level)+1)) + "0]"
	},
	"objects of objects": func(n int) string {
		return "[" + strings.Repeat(`{"a":{"b":{},"c":{"d":[{"e":1}]}},"f":{}},`, n/42) + "0]"
	},
}

// TestMemoryLinear: the bytes Parse and Decode's name check allocate per
// input byte stay bounded as documents grow 32-fold.
func TestMemoryLinear(t *testing.T) {
	type tree map[string]tree
	for name, shape := range worstShapes {
		var perByte [2]float64
		for i, n := range []int{8 << 10, 256 << 10} {
			data := []byte(shape(n))
			v, err := Parse(data)
			if err != nil {
				t.Fatalf("%s: %.200v", name, err)
			}
			b := bytesPerRun(func() {
				Parse(data)
				c := nameChecker{fields: map[reflect.Type]map[string]reflect.Type{}}
				c.check(v, reflect.TypeFor[[]tree]())
			})
			perByte[i] = float64(b) / float64(len(data))
		}
		if perByte[1] > 24 || perByte[1] > 1.5*perByte[0]+1 {
			t.Errorf("%s: %.2f bytes per input byte at 8 KiB, %.2f at 256 KiB", name, perByte[0], perByte[1])
		}
	}
}

func BenchmarkParse(b *testing.B) {
	verifyBody := []byte(`{"protocol_version":"3.0","nonce":"n","action":"vote","responses":[` +
		strings.Repeat(`{"identifier":"orb","merkle_root":"0x0936d98c83151035b528d1631df5c3607a740bd296b4c79c627130a96645dcc7","nullifier":"0x0a0a","proof":"0x`+strings.Repeat("0", 512)+`"},`, 15) +
		`{"identifier":"orb","merkle_root":"0x1","nullifier":"0x0a0a","proof":"p"}]}`)
	cases := map[string][]byte{"verify body": verifyBody, "deep 32000": []byte(strings.Repeat("[", 32000) + strings.Repeat("]", 32000))}
	for name, shape := range worstShapes {
		cases[name] = []byte(shape(64 << 10))
	}
	for name, data := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				Parse(data)
			}
		})
	}
}

package strictjson

import (
	"bytes"
	"iter"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a JSON value (RFC 8259 §3).
type Kind uint8

// The kinds of [Value]. The zero Value, a member that is absent, is Invalid.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// Value is a JSON value that [Parse] has checked. Its methods read the
// checked bytes without checking them again; they allocate only the
// strings they return.
type Value struct{ raw []byte }

// Kind returns v's type.
func (v Value) Kind() Kind {
	if len(v.raw) == 0 {
		return Invalid
	}
	switch v.raw[0] {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	}
	return Number
}

// Bytes returns v's text as it appears in the document: a number's digits
// exactly as written, a string with its quotes and escapes.
func (v Value) Bytes() []byte { return v.raw }

// Unquote returns the string v holds, escapes decoded, or false when v is
// not a string.
func (v Value) Unquote() (string, bool) {
	if v.Kind() != String {
		return "", false
	}
	return unquote(v.raw), true
}

// Members yields the name and value of each member of v in document order,
// or nothing when v is not an object. Names are unique (Parse checked).
func (v Value) Members() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		if v.Kind() != Object {
			return
		}
		s := v.raw
		for i := skipSpace(s, 1); s[i] != '}'; {
			nameEnd := stringEnd(s, i)
			name := unquote(s[i:nameEnd])
			start := skipSpace(s, skipSpace(s, nameEnd)+1) // past the ':'
			end := valueEnd(s, start)
			if !yield(name, Value{s[start:end]}) {
				return
			}
			i = skipSeparator(s, end)
		}
	}
}

// Elements yields the elements of v in order, or nothing when v is not an
// array.
func (v Value) Elements() iter.Seq[Value] {
	return func(yield func(Value) bool) {
		if v.Kind() != Array {
			return
		}
		s := v.raw
		for i := skipSpace(s, 1); s[i] != ']'; {
			end := valueEnd(s, i)
			if !yield(Value{s[i:end]}) {
				return
			}
			i = skipSeparator(s, end)
		}
	}
}

// The helpers below read text Parse has checked: they trust its grammar.

func skipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipSeparator moves from the end of a member or element to the start of
// the next one, or to the closing bracket.
func skipSeparator(s []byte, i int) int {
	i = skipSpace(s, i)
	if s[i] == ',' {
		i = skipSpace(s, i+1)
	}
	return i
}

// stringEnd returns the offset just past the string starting at s[i].
func stringEnd(s []byte, i int) int {
	for i++; ; i++ {
		switch s[i] {
		case '\\':
			i++ // the escaped byte; \u's digits are not quotes
		case '"':
			return i + 1
		}
	}
}

// valueEnd returns the offset just past the value starting at s[i].
func valueEnd(s []byte, i int) int {
	depth := 0
	for {
		switch c := s[i]; {
		case c == '"':
			i = stringEnd(s, i)
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			depth--
			i++
		case depth == 0: // a number or literal
			for i < len(s) && isScalarByte(s[i]) {
				i++
			}
			return i
		default: // inside a container: scalars, separators, whitespace
			i++
		}
		if depth == 0 {
			return i
		}
	}
}

// isScalarByte reports whether c can occur in a number or literal.
func isScalarByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// unquote returns the content of the checked string q (with its quotes).
func unquote(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	return string(appendUnquoted(nil, q))
}

// appendUnquoted appends the content of the checked string q (with its
// quotes) to dst, escapes decoded (RFC 8259 §7).
func appendUnquoted(dst, q []byte) []byte {
	s := q[1 : len(q)-1]
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		c := s[i+1]
		s = s[i+2:]
		if c != 'u' {
			dst = append(dst, unescape[c])
			continue
		}
		r, _ := hex4(s)
		s = s[4:]
		if isHighSurrogate(r) {
			low, _ := hex4(s[2:])
			r = utf16.DecodeRune(r, low)
			s = s[6:]
		}
		dst = utf8.AppendRune(dst, r)
	}
}

// unescape maps the byte after a backslash to the byte it stands for.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

package strictjson

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is the most arrays and objects Parse lets be open at once. The
// documents read here nest at most four deep (a verify body: object,
// responses, item, and an unknown member an IDKit client forwards);
// 64 leaves room for such members while keeping the walk's stack small.
const MaxDepth = 64

// The kinds of [Error]; test with errors.Is.
var (
	ErrSyntax    = errors.New("not JSON")
	ErrUTF8      = errors.New("not valid UTF-8")
	ErrDepth     = errors.New("nested more than " + strconv.Itoa(MaxDepth) + " deep")
	ErrDuplicate = errors.New("duplicate member name")
)

// Error reports why Parse rejected a document.
type Error struct {
	Err    error  // ErrSyntax, ErrUTF8, ErrDepth or ErrDuplicate
	Offset int    // of the first byte at fault
	Path   string // of the value at fault, as "$", "$.responses[0].proof"
	detail string
}

func (e *Error) Error() string {
	msg := e.Path + ": " + e.Err.Error()
	if e.detail != "" {
		msg += ": " + e.detail
	}
	return fmt.Sprintf("%s (offset %d)", msg, e.Offset)
}

func (e *Error) Unwrap() error { return e.Err }

// Parse checks that data is exactly one JSON value under the rules of the
// package comment and returns it.
func Parse(data []byte) (Value, error) {
	p := parser{data: data}
	p.skipSpace()
	start := p.pos
	if err := p.value(); err != nil {
		return Value{}, err
	}
	end := p.pos
	p.skipSpace()
	if p.pos != len(data) {
		return Value{}, p.fail(ErrSyntax, "data after the value")
	}
	return Value{data[start:end]}, nil
}

type parser struct {
	data  []byte
	pos   int
	open  []frame // the containers open at pos, outermost first
	keys  []byte  // the unescaped names of the members of the open objects
	names []name  // one per member read so far in the open objects
}

// frame is an open container, kept only to name the path of a failure.
type frame struct {
	object bool
	index  int // arrays: of the current element; objects: offset of the current member's name; -1 before the first
}

// name is a member name: its offset in data and its unescaped bytes in keys.
type name struct{ off, start, end int }

const eof = -1

func (p *parser) peek() int {
	if p.pos == len(p.data) {
		return eof
	}
	return int(p.data[p.pos])
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r': // RFC 8259 §2
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() error {
	switch c := p.peek(); {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || isDigit(c):
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return p.fail(ErrSyntax, "want a value")
}

func (p *parser) push(object bool) error {
	if len(p.open) == MaxDepth {
		return p.fail(ErrDepth, "")
	}
	p.open = append(p.open, frame{object: object, index: -1})
	p.pos++ // the bracket
	p.skipSpace()
	return nil
}

func (p *parser) top() *frame { return &p.open[len(p.open)-1] }

func (p *parser) array() error {
	if err := p.push(false); err != nil {
		return err
	}
	if p.peek() == ']' {
		p.pos++
		p.open = p.open[:len(p.open)-1]
		return nil
	}
	for {
		p.top().index++
		if err := p.value(); err != nil {
			return err
		}
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			p.open = p.open[:len(p.open)-1]
			return nil
		default:
			return p.fail(ErrSyntax, "want , or ]")
		}
	}
}

func (p *parser) object() error {
	if err := p.push(true); err != nil {
		return err
	}
	first, keys := len(p.names), len(p.keys)
	for p.peek() != '}' {
		if len(p.names) > first {
			if p.peek() != ',' {
				return p.fail(ErrSyntax, "want , or }")
			}
			p.pos++
			p.skipSpace()
		}
		if err := p.member(); err != nil {
			return err
		}
		p.skipSpace()
	}
	if err := p.checkDuplicates(first); err != nil {
		return err
	}
	p.pos++
	p.names, p.keys = p.names[:first], p.keys[:keys]
	p.open = p.open[:len(p.open)-1]
	return nil
}

// member reads one "name": value pair and records the name.
func (p *parser) member() error {
	off := p.pos
	if p.peek() != '"' {
		return p.fail(ErrSyntax, "want a member name")
	}
	if err := p.string(); err != nil {
		return err
	}
	start := len(p.keys)
	p.keys = appendUnquoted(p.keys, p.data[off:p.pos])
	p.names = append(p.names, name{off, start, len(p.keys)})
	p.top().index = off
	p.skipSpace()
	if p.peek() != ':' {
		return p.fail(ErrSyntax, "want :")
	}
	p.pos++
	p.skipSpace()
	if err := p.value(); err != nil {
		return err
	}
	p.top().index = -1
	return nil
}

// checkDuplicates sorts the names of the object being closed, whose first
// member is names[first], and reports the earliest repeated one.
func (p *parser) checkDuplicates(first int) error {
	names := p.names[first:]
	key := func(n name) []byte { return p.keys[n.start:n.end] }
	slices.SortFunc(names, func(a, b name) int {
		return cmp.Or(bytes.Compare(key(a), key(b)), cmp.Compare(a.off, b.off))
	})
	dup := -1
	for i := 1; i < len(names); i++ {
		if bytes.Equal(key(names[i-1]), key(names[i])) && (dup < 0 || names[i].off < dup) {
			dup = names[i].off
		}
	}
	if dup < 0 {
		return nil
	}
	p.top().index = dup
	p.pos = dup
	return p.fail(ErrDuplicate, "")
}

// string checks the string at pos (RFC 8259 §7, §8.1, §8.2) and moves past it.
func (p *parser) string() error {
	p.pos++ // the opening quote
	for {
		switch c := p.peek(); {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			if err := p.escape(); err != nil {
				return err
			}
		case c == eof:
			return p.fail(ErrSyntax, "")
		case c < 0x20:
			return p.fail(ErrSyntax, "control character in a string")
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return p.fail(ErrUTF8, "")
			}
			p.pos += size
		}
	}
}

// escape checks the escape at pos. A \u escape of a UTF-16 high surrogate
// must be followed by one of a low surrogate, and a low one must not come
// alone: neither names a character.
func (p *parser) escape() error {
	if p.pos+1 == len(p.data) {
		p.pos++
		return p.fail(ErrSyntax, "")
	}
	switch p.data[p.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.pos += 2
		return nil
	case 'u':
	default:
		return p.fail(ErrSyntax, "invalid escape")
	}
	r, ok := hex4(p.data[p.pos+2:])
	if !ok {
		return p.fail(ErrSyntax, `invalid \u escape`)
	}
	if isLowSurrogate(r) {
		return p.fail(ErrUTF8, "unpaired surrogate escape")
	}
	if !isHighSurrogate(r) {
		p.pos += 6
		return nil
	}
	rest := p.data[p.pos+6:]
	if len(rest) < 2 || rest[0] != '\\' || rest[1] != 'u' {
		return p.fail(ErrUTF8, "unpaired surrogate escape")
	}
	low, ok := hex4(rest[2:])
	if !ok || !isLowSurrogate(low) {
		return p.fail(ErrUTF8, "unpaired surrogate escape")
	}
	p.pos += 12
	return nil
}

// number checks the number at pos (RFC 8259 §6) and moves past it.
func (p *parser) number() error {
	if p.peek() == '-' {
		p.pos++
	}
	switch c := p.peek(); {
	case c == '0':
		p.pos++
	case isDigit(c):
		p.digits()
	default:
		return p.fail(ErrSyntax, "want a digit")
	}
	if p.peek() == '.' {
		p.pos++
		if !isDigit(p.peek()) {
			return p.fail(ErrSyntax, "want a digit")
		}
		p.digits()
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.pos++
		if c := p.peek(); c == '+' || c == '-' {
			p.pos++
		}
		if !isDigit(p.peek()) {
			return p.fail(ErrSyntax, "want a digit")
		}
		p.digits()
	}
	return nil
}

func (p *parser) digits() {
	for isDigit(p.peek()) {
		p.pos++
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail(ErrSyntax, "want "+word)
	}
	p.pos += len(word)
	return nil
}

// fail reports kind at pos, naming the path only now.
func (p *parser) fail(kind error, detail string) *Error {
	switch {
	case kind == ErrSyntax && p.pos == len(p.data):
		detail = "unexpected end of input"
	case kind == ErrSyntax && detail != "":
		detail = describe(p.data[p.pos]) + ", " + detail
	}
	return &Error{Err: kind, Offset: p.pos, Path: p.path(), detail: detail}
}

// path names the innermost value open at pos. Every name it quotes was
// checked before its frame recorded it.
func (p *parser) path() string {
	b := []byte{'$'}
	for _, f := range p.open {
		switch {
		case f.index < 0:
		case f.object:
			b = append(b, '.')
			b = appendUnquoted(b, p.data[f.index:stringEnd(p.data, f.index)])
		default:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

func describe(c byte) string {
	if 0x20 <= c && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func isDigit(c int) bool { return '0' <= c && c <= '9' }

func isHighSurrogate(r rune) bool { return 0xd800 <= r && r < 0xdc00 }

func isLowSurrogate(r rune) bool { return 0xdc00 <= r && r < 0xe000 }

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

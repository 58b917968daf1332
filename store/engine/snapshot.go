package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"slices"
)

// Snapshot (doc.go, "Snapshot"): one indented JSON object, one record per
// line, ending with a "crc" member that holds the CRC-32C of every byte
// before snapshotCRC.
const (
	snapshotFormat = "worldid-store/1"
	snapshotCRC    = ",\n  \"crc\": \""
	// snapshotTrailer is the length of `,\n  "crc": "xxxxxxxx"\n}\n`.
	snapshotTrailer = len(snapshotCRC) + 8 + len("\"\n}\n")
)

// State is the committed state, or a copy of it: table → key → compact
// JSON value. Values are strings, not decoded data, to keep a million small
// records cheap.
type State map[string]map[string]string

// apply performs one change and returns how the record count changed.
func (t State) apply(c change) int {
	rows := t[c.Table]
	_, had := rows[c.Key]
	if c.Op == opDel {
		if !had {
			return 0
		}
		delete(rows, c.Key)
		if len(rows) == 0 {
			delete(t, c.Table)
		}
		return -1
	}
	if rows == nil {
		rows = map[string]string{}
		t[c.Table] = rows
	}
	rows[c.Key] = string(c.Value)
	if had {
		return 0
	}
	return 1
}

// writeSnapshot writes st, which reflects every journal entry up to lsn, to w.
// Tables and keys are sorted so equal states give equal files.
func writeSnapshot(w io.Writer, lsn uint64, st State) error {
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16)
	fmt.Fprintf(bw, "{\n  \"format\": %q,\n  \"lsn\": %d,\n  \"tables\": {", snapshotFormat, lsn)
	names := slices.Sorted(maps.Keys(st))
	for i, name := range names {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		writeJSONString(bw, name)
		bw.WriteString(": {")
		rows := st[name]
		for j, key := range slices.Sorted(maps.Keys(rows)) {
			if j > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n      ")
			writeJSONString(bw, key)
			bw.WriteString(": ")
			bw.WriteString(rows[key])
		}
		bw.WriteString("\n    }")
	}
	if len(names) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteByte('}')
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(append(appendSum([]byte(snapshotCRC), h.Sum32()), "\"\n}\n"...))
	return err
}

// writeJSONString writes s as encoding/json encodes it. Keys are mostly
// identifiers and hex, which need no escaping; quoting them directly keeps
// compaction of a million records from marshalling a million strings.
func writeJSONString(w *bufio.Writer, s string) {
	if !needsEscape(s) {
		w.WriteByte('"')
		w.WriteString(s)
		w.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s) // a string always marshals
	w.Write(b)
}

// needsEscape reports whether encoding/json would escape any byte of s:
// anything outside printable ASCII, the quote and backslash, and the HTML
// characters <, > and &.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return true
		}
	}
	return false
}

// snapshot is a parsed snapshot file.
type snapshot struct {
	lsn     uint64
	tables  State
	records int
}

// offsetError is a parse error at a byte offset, turned into a line number by
// loadSnapshot. The offset is the decoder's position: just after the last
// good token, on the line of the bad one (values start on their key's line).
type offsetError struct {
	offset int64
	err    error
}

func (e *offsetError) Error() string { return fmt.Sprintf("offset %d: %v", e.offset, e.err) }
func (e *offsetError) Unwrap() error { return e.err }

// loadSnapshot reads the snapshot at path. A missing file is an empty state
// (found false); any other problem is an error naming the file and, where the
// parser can tell, the line.
func loadSnapshot(path string) (s snapshot, found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return snapshot{tables: State{}}, false, nil
	}
	if err != nil {
		return snapshot{}, false, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return snapshot{}, false, fmt.Errorf("store: %w", err)
	}
	s, err = parseSnapshot(f, fi.Size())
	var oe *offsetError
	if errors.As(err, &oe) {
		line, lerr := lineAt(f, oe.offset)
		if lerr != nil {
			return snapshot{}, false, fmt.Errorf("store: %s: offset %d: %w", path, oe.offset, oe.err)
		}
		return snapshot{}, false, fmt.Errorf("store: %s:%d: %w", path, line, oe.err)
	}
	if err != nil {
		return snapshot{}, false, fmt.Errorf("store: %s: %w", path, err)
	}
	return s, true, nil
}

// lineAt returns the 1-based line number of byte offset off in f.
func lineAt(f *os.File, off int64) (int, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	br := bufio.NewReader(io.LimitReader(f, off))
	line := 1
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return line, nil
		}
		if err != nil {
			return 0, err
		}
		if b == '\n' {
			line++
		}
	}
}

// parseSnapshot decodes a snapshot of size bytes from r, streaming, so the
// file is never held in memory twice. The structure is fixed: members format,
// lsn, tables, crc in this order, no duplicate tables or keys, no empty
// tables. Errors in the structure are *offsetError.
func parseSnapshot(r io.Reader, size int64) (snapshot, error) {
	h := crc32.New(castagnoli)
	covered := max(size-int64(snapshotTrailer), 0)
	p := snapshotParser{dec: json.NewDecoder(&prefixHasher{r: r, h: h, left: covered})}
	s := snapshot{tables: State{}}
	var format, crc string
	p.delim('{')
	p.member("format", &format)
	if p.err == nil && format != snapshotFormat {
		p.fail(fmt.Errorf("unsupported format %q (want %q)", format, snapshotFormat))
	}
	p.member("lsn", &s.lsn)
	p.key("tables")
	p.delim('{')
	for p.more() {
		s.records += p.table(s.tables)
	}
	p.delim('}')
	p.member("crc", &crc)
	p.delim('}')
	p.end()
	if p.err != nil {
		return snapshot{}, p.err
	}
	if computed := string(appendSum(nil, h.Sum32())); crc != computed {
		return snapshot{}, fmt.Errorf("%w: file says %q, content has %s", errChecksum, crc, computed)
	}
	return s, nil
}

// snapshotParser walks the snapshot's tokens; after the first error every
// step is a no-op, so parseSnapshot reads as the format it checks.
type snapshotParser struct {
	dec *json.Decoder
	err error
	raw json.RawMessage // reused value buffer
}

func (p *snapshotParser) fail(err error) {
	if p.err != nil {
		return
	}
	// Not SyntaxError.Offset: inside Decode it counts from the value's start.
	off := p.dec.InputOffset()
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	p.err = &offsetError{offset: off, err: err}
}

func (p *snapshotParser) token() json.Token {
	if p.err != nil {
		return nil
	}
	tok, err := p.dec.Token()
	if err != nil {
		p.fail(err)
	}
	return tok
}

func (p *snapshotParser) delim(want json.Delim) {
	if tok := p.token(); p.err == nil && tok != want {
		p.fail(fmt.Errorf("found %v, want %q", tok, want))
	}
}

func (p *snapshotParser) str() string {
	tok := p.token()
	s, ok := tok.(string)
	if p.err == nil && !ok {
		p.fail(fmt.Errorf("found %v, want a string", tok))
	}
	return s
}

func (p *snapshotParser) key(want string) {
	if k := p.str(); p.err == nil && k != want {
		p.fail(fmt.Errorf("found member %q, want %q", k, want))
	}
}

func (p *snapshotParser) member(name string, v any) {
	p.key(name)
	if p.err == nil {
		if err := p.dec.Decode(v); err != nil {
			p.fail(fmt.Errorf("member %q: %w", name, err))
		}
	}
}

func (p *snapshotParser) more() bool { return p.err == nil && p.dec.More() }

// table parses one "name": {rows} member into st and returns its row count.
func (p *snapshotParser) table(st State) int {
	name := p.str()
	if _, dup := st[name]; p.err == nil && dup {
		p.fail(fmt.Errorf("duplicate table %q", name))
	}
	p.delim('{')
	rows := map[string]string{}
	for p.more() {
		p.row(name, rows)
	}
	p.delim('}')
	if p.err == nil && len(rows) == 0 {
		p.fail(fmt.Errorf("table %q is empty", name))
	}
	st[name] = rows
	return len(rows)
}

func (p *snapshotParser) row(table string, rows map[string]string) {
	key := p.str()
	if p.err != nil {
		return
	}
	if err := checkName(table, key); err != nil {
		p.fail(err)
		return
	}
	if _, dup := rows[key]; dup {
		p.fail(fmt.Errorf("duplicate key %q in table %q", key, table))
		return
	}
	p.raw = p.raw[:0]
	if err := p.dec.Decode(&p.raw); err != nil {
		p.fail(err)
		return
	}
	rows[key] = string(p.raw)
}

// end requires that nothing but whitespace follows the object.
func (p *snapshotParser) end() {
	if p.err != nil {
		return
	}
	if tok, err := p.dec.Token(); err != io.EOF {
		p.fail(fmt.Errorf("data after the snapshot object (%v, %v)", tok, err))
	}
}

// prefixHasher passes r through and hashes its first left bytes.
type prefixHasher struct {
	r    io.Reader
	h    hash.Hash32
	left int64
}

func (p *prefixHasher) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	k := min(int64(n), p.left)
	p.h.Write(b[:k])
	p.left -= k
	return n, err
}

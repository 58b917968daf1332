package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
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
// before snapshotCRC, then the packed tables' records.
const (
	snapshotFormat = "worldid-store/2"
	// snapshotFormatV1 is the format before packed tables: no "packed"
	// member, nothing after the object. Open reads it and compacts.
	snapshotFormatV1 = "worldid-store/1"
	snapshotCRC      = ",\n  \"crc\": \""
	// snapshotTrailer is the length of `,\n  "crc": "xxxxxxxx"\n}\n`.
	snapshotTrailer = len(snapshotCRC) + 8 + len("\"\n}\n")
	// snapshotEnd ends the object: no earlier line of it starts with "}".
	snapshotEnd = "\n}\n"
)

// packedTable describes the records of one packed table in a snapshot.
type packedTable struct {
	Codec  string   `json:"codec"`
	Groups []string `json:"groups"`
	Rows   int      `json:"rows"`
	CRC    string   `json:"crc"` // CRC-32C of its records
}

// writeSnapshot writes st, which reflects every journal entry up to lsn, to w.
// Tables and keys are sorted so equal states give equal JSON; packed
// records follow in the order the store holds them.
func writeSnapshot(w io.Writer, lsn uint64, st State) error {
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16)
	fmt.Fprintf(bw, "{\n  \"format\": %q,\n  \"lsn\": %d,\n  \"tables\": {", snapshotFormat, lsn)
	var names, packedNames []string
	for _, name := range st.Tables() {
		r := st.tables[name]
		if len(r.json) > 0 {
			names = append(names, name)
		}
		if r.packed != nil && r.packed.len() > 0 {
			packedNames = append(packedNames, name)
		}
	}
	for i, name := range names {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		writeJSONString(bw, name)
		bw.WriteString(": {")
		rows := st.tables[name].json
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
	bw.WriteString("},\n  \"packed\": {")
	for i, name := range packedNames {
		if i > 0 {
			bw.WriteByte(',')
		}
		p := st.tables[name].packed
		desc, _ := json.Marshal(packedTable{Codec: p.codec.Name(), Groups: p.groups, Rows: p.len(),
			CRC: string(appendCRC(nil, p.recs))}) // strings and numbers always marshal
		bw.WriteString("\n    ")
		writeJSONString(bw, name)
		bw.WriteString(": ")
		bw.Write(desc)
	}
	if len(packedNames) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteByte('}')
	if err := bw.Flush(); err != nil {
		return err
	}
	bw = bufio.NewWriterSize(w, 1<<16)
	bw.Write(append(appendSum([]byte(snapshotCRC), h.Sum32()), "\"\n}\n"...))
	for _, name := range packedNames {
		bw.Write(st.tables[name].packed.recs)
	}
	return bw.Flush()
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
	format  string
	lsn     uint64
	tables  State
	records int
	packed  map[string]packedTable // v2: the packed tables, in name order after the object
	renamed bool                   // a packed table names its codec by a former name
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

// checkEvery is how many rows or lines Open reads between two looks at its
// context.
const checkEvery = 4096

// loadSnapshot reads the snapshot at path. A missing file is an empty state
// (found false); any other problem is an error naming the file and, where the
// parser can tell, the line. A format-1 snapshot is streamed; a format-2
// one, mostly packed records, is read whole.
func loadSnapshot(ctx context.Context, path string, codecs map[string]Codec) (s snapshot, found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return snapshot{tables: newState(codecs)}, false, nil
	}
	if err != nil {
		return snapshot{}, false, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return snapshot{}, false, fmt.Errorf("store: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if head, _ := br.Peek(len(v2Head)); string(head) == v2Head {
		data := make([]byte, fi.Size())
		if _, err := io.ReadFull(br, data); err != nil {
			return snapshot{}, false, fmt.Errorf("store: %s: %w", path, err)
		}
		s, err = decodeSnapshot(ctx, data, codecs)
	} else {
		s, err = parseSnapshot(ctx, br, fi.Size(), codecs)
	}
	var oe *offsetError
	if errors.As(err, &oe) {
		line, lerr := lineAt(f, oe.offset)
		if lerr != nil {
			return snapshot{}, false, fmt.Errorf("store: %s: offset %d: %w", path, oe.offset, oe.err)
		}
		return snapshot{}, false, fmt.Errorf("store: %s:%d: %w", path, line, oe.err)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return snapshot{}, false, err
		}
		return snapshot{}, false, fmt.Errorf("store: %s: %w", path, err)
	}
	return s, true, nil
}

// v2Head is how a format-2 snapshot starts.
var v2Head = fmt.Sprintf("{\n  \"format\": %q,", snapshotFormat)

// decodeSnapshot decodes a whole snapshot of either format: the object,
// then, in format 2, the packed records after it, which the state keeps
// (the records are not copied).
func decodeSnapshot(ctx context.Context, data []byte, codecs map[string]Codec) (snapshot, error) {
	end := len(data)
	if string(data[:min(len(v2Head), len(data))]) == v2Head {
		i := bytes.Index(data, []byte(snapshotEnd))
		if i < 0 {
			return snapshot{}, &offsetError{offset: int64(len(data)), err: io.ErrUnexpectedEOF}
		}
		end = i + len(snapshotEnd)
	}
	s, err := parseSnapshot(ctx, bytes.NewReader(data[:end]), int64(end), codecs)
	if err != nil {
		return snapshot{}, err
	}
	rest := data[end:]
	for _, name := range slices.Sorted(maps.Keys(s.packed)) {
		n, err := s.tables.attach(ctx, name, s.packed[name], rest)
		if err != nil {
			return snapshot{}, fmt.Errorf("packed table %q: %w", name, err)
		}
		s.renamed = s.renamed || s.packed[name].Codec != s.tables.codecs[name].Name()
		rest = rest[n:]
		s.records += s.packed[name].Rows
	}
	if len(rest) > 0 {
		return snapshot{}, fmt.Errorf("%d bytes after the packed records", len(rest))
	}
	return s, nil
}

// attach makes the first rows records of data, described by desc, the
// packed rows of table name, and returns their length. It checks the
// codec, the checksum, the group numbers and that no key repeats.
func (s State) attach(ctx context.Context, name string, desc packedTable, data []byte) (int, error) {
	c := s.codecs[name]
	if c == nil || c.Name() != desc.Codec && !slices.Contains(formerNames(c), desc.Codec) {
		return 0, fmt.Errorf("packed by codec %q, which this build does not have for it", desc.Codec)
	}
	r := s.table(name)
	// Rows of the object's part that this codec packs (another build's
	// codec did not) join after the records.
	var moved []string
	r.packed.each(func(k, v string) bool { moved = append(moved, k, v); return true })
	r.packed = newPackedRows(c)
	p := r.packed
	if desc.Rows <= 0 || desc.Rows > len(data)/p.width || desc.Rows > maxPacked {
		return 0, fmt.Errorf("%d rows do not fit the %d bytes left", desc.Rows, len(data))
	}
	n := desc.Rows * p.width
	recs := data[:n:n]
	if got := string(appendCRC(nil, recs)); got != desc.CRC {
		return 0, fmt.Errorf("%w: snapshot says %q, records have %s", errChecksum, desc.CRC, got)
	}
	for i, g := range desc.Groups {
		if _, dup := p.ids[g]; dup {
			return 0, fmt.Errorf("group %q repeats", g)
		}
		p.ids[g] = uint32(i)
	}
	p.groups, p.recs = desc.Groups, recs
	size := 16
	for 3*size < 4*desc.Rows {
		size *= 2
	}
	p.slots = make([]uint32, size)
	if p.hasSecond() {
		p.second = make([]uint32, size)
	}
	for i := range desc.Rows {
		if i%(16*checkEvery) == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if int(binary.LittleEndian.Uint32(p.rec(i))) >= len(p.groups) {
			return 0, fmt.Errorf("record %d names no group", i)
		}
		if !p.index(i) {
			return 0, fmt.Errorf("record %d repeats a key", i)
		}
	}
	for k := range r.json {
		if _, dup := p.get(k); dup {
			return 0, fmt.Errorf("key %q is both a row and a record", k)
		}
	}
	for i := 0; i < len(moved); i += 2 {
		if _, dup := p.get(moved[i]); dup {
			return 0, fmt.Errorf("key %q is both a row and a record", moved[i])
		}
		r.set(moved[i], moved[i+1])
	}
	return n, nil
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

// parseSnapshot decodes a snapshot object of size bytes from r, streaming,
// so the file is never held in memory twice. The structure is fixed:
// members format, lsn, tables, packed (format 2 only), crc in this order,
// no duplicate tables or keys, no empty tables. Errors in the structure
// are *offsetError. ctx is checked every checkEvery rows.
func parseSnapshot(ctx context.Context, r io.Reader, size int64, codecs map[string]Codec) (snapshot, error) {
	h := crc32.New(castagnoli)
	covered := max(size-int64(snapshotTrailer), 0)
	p := snapshotParser{ctx: ctx, dec: json.NewDecoder(&prefixHasher{r: r, h: h, left: covered})}
	s := snapshot{tables: newState(codecs)}
	var crc string
	p.delim('{')
	p.member("format", &s.format)
	if p.err == nil && s.format != snapshotFormat && s.format != snapshotFormatV1 {
		p.fail(fmt.Errorf("unsupported format %q (want %q)", s.format, snapshotFormat))
	}
	p.member("lsn", &s.lsn)
	p.key("tables")
	p.delim('{')
	for p.more() {
		s.records += p.table(s.tables)
	}
	p.delim('}')
	if s.format == snapshotFormat {
		p.member("packed", &s.packed)
	}
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
	ctx  context.Context
	rows int // rows read so far
	dec  *json.Decoder
	err  error
	raw  json.RawMessage // reused value buffer
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
	if _, dup := st.tables[name]; p.err == nil && dup {
		p.fail(fmt.Errorf("duplicate table %q", name))
	}
	p.delim('{')
	rows := st.table(name)
	for p.more() {
		p.row(name, rows)
	}
	p.delim('}')
	if p.err == nil && rows.len() == 0 {
		p.fail(fmt.Errorf("table %q is empty", name))
	}
	return rows.len()
}

func (p *snapshotParser) row(table string, rows *rows) {
	if p.rows++; p.rows%checkEvery == 0 && p.ctx.Err() != nil {
		p.err = p.ctx.Err()
		return
	}
	key := p.str()
	if p.err != nil {
		return
	}
	if err := checkName(table, key); err != nil {
		p.fail(err)
		return
	}
	if _, dup := rows.get(key); dup {
		p.fail(fmt.Errorf("duplicate key %q in table %q", key, table))
		return
	}
	p.raw = p.raw[:0]
	if err := p.dec.Decode(&p.raw); err != nil {
		p.fail(err)
		return
	}
	rows.set(key, string(p.raw))
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

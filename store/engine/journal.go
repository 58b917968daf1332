package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf8"
)

// Journal line (doc.go, "Journal"): the JSON encoding of entry with a final
// member `"crc":"xxxxxxxx"` holding the CRC-32C of every byte before
// `,"crc":"`, then "\n".
const (
	opPut = "put"
	opDel = "del"

	crcMember  = `,"crc":"`
	lineSuffix = `"}`
	// crcTrailer is the length of `,"crc":"xxxxxxxx"}` at the end of a line.
	crcTrailer = len(crcMember) + 8 + len(lineSuffix)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errChecksum marks data whose checksum does not verify. At the end of the
// journal that is a torn write; anywhere else, corruption.
var errChecksum = errors.New("checksum does not verify")

// change is one put or delete inside a journal line.
type change struct {
	Op    string          `json:"op"`
	Table string          `json:"t"`
	Key   string          `json:"k"`
	Value json.RawMessage `json:"v,omitempty"`
}

// entry is one journal line: every change of one Update, under one LSN.
type entry struct {
	LSN     uint64   `json:"lsn"`
	Changes []change `json:"ops"`
}

// checkName enforces the rules for table names and keys: non-empty and valid
// UTF-8, so that they survive a JSON round trip unchanged.
func checkName(table, key string) error {
	if table == "" || key == "" {
		return errors.New("empty table name or key")
	}
	if !utf8.ValidString(table) || !utf8.ValidString(key) {
		return errors.New("table name or key is not valid UTF-8")
	}
	return nil
}

func (c change) validate() error {
	if err := checkName(c.Table, c.Key); err != nil {
		return err
	}
	switch c.Op {
	case opPut:
		if c.Value == nil {
			return errors.New(`"put" without a value`)
		}
	case opDel:
		if c.Value != nil {
			return errors.New(`"del" with a value`)
		}
	default:
		return fmt.Errorf("unknown op %q", c.Op)
	}
	return nil
}

func (e entry) validate() error {
	if e.LSN == 0 {
		return errors.New("lsn must be positive")
	}
	if len(e.Changes) == 0 {
		return errors.New("no ops")
	}
	for i, c := range e.Changes {
		if err := c.validate(); err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
	}
	return nil
}

// appendCRC appends the CRC-32C of covered as 8 lowercase hex digits.
func appendCRC(dst, covered []byte) []byte {
	return appendSum(dst, crc32.Checksum(covered, castagnoli))
}

// appendSum appends sum as 8 lowercase hex digits.
func appendSum(dst []byte, sum uint32) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], sum)
	return hex.AppendEncode(dst, b[:])
}

// encodeLine returns the journal line for e, newline included.
func encodeLine(e entry) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	// Reopen the object to append the checksum member over what precedes it.
	body = body[:len(body)-1]
	line := append(body, crcMember...)
	line = appendCRC(line, body)
	return append(line, lineSuffix+"\n"...), nil
}

// lineParser decodes journal lines, reusing one buffer for all of them.
type lineParser struct {
	body []byte
}

// parse verifies the checksum of one journal line (without its newline) and
// decodes it. The checksum is checked first, so the JSON decoder only sees
// bytes the store wrote; the decoded entry is then checked for semantic
// validity. The entry does not alias line.
func (p *lineParser) parse(line []byte) (entry, error) {
	covered, err := checkLineCRC(line)
	if err != nil {
		return entry{}, err
	}
	// The covered bytes, closed with "}", are the JSON object of the entry.
	p.body = append(append(p.body[:0], covered...), '}')
	var e entry
	if err := json.Unmarshal(p.body, &e); err != nil {
		return entry{}, err
	}
	return e, e.validate()
}

// checkLineCRC verifies the checksum member at the end of a line (without
// its newline) and returns the bytes it covers.
func checkLineCRC(line []byte) ([]byte, error) {
	n := len(line) - crcTrailer
	if n < 1 || !bytes.HasPrefix(line[n:], []byte(crcMember)) || !bytes.HasSuffix(line, []byte(lineSuffix)) {
		return nil, fmt.Errorf(`%w: no "crc" member at the end of the line`, errChecksum)
	}
	stored := line[n+len(crcMember) : len(line)-len(lineSuffix)]
	var buf [8]byte
	if computed := appendCRC(buf[:0], line[:n]); !bytes.Equal(stored, computed) {
		return nil, fmt.Errorf("%w: line says %q, content has %s", errChecksum, stored, computed)
	}
	return line[:n], nil
}

// replayed is what replayJournal found.
type replayed struct {
	last  uint64 // newest LSN: of the journal, or the snapshot's if newer
	lines int    // good lines read
	// tornLine is the line number of a dropped torn final line (0: none),
	// tornBytes its length.
	tornLine, tornBytes int
}

// replayJournal reads journal lines from r, checks their sequence, and calls
// apply for every entry newer than the snapshot's LSN snap.
//
// Recovery rules (doc/design.md §3): an incomplete final line (no newline), or a
// final line whose checksum does not verify, is a torn write and is dropped
// (and reported); every other bad line is an error naming file and line. A
// journal whose lines all precede the snapshot must end at the snapshot's
// LSN (a crash between snapshot and truncation leaves exactly that): one
// ending earlier is an older copy, an error wrapping ErrDataLoss.
//
// ctx is checked before each line (one line may hold thousands of
// changes): a cancelled replay returns its error.
func replayJournal(ctx context.Context, r io.Reader, name string, snap uint64, apply func(entry)) (replayed, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	res := replayed{last: snap}
	var prev uint64 // LSN of the previous good line; 0 before the first
	var bad error   // the previous line's error, fatal only if another line follows
	var badLen int
	var p lineParser
	lineNo := 1
	for ; ; lineNo++ {
		line, rerr := readLine(br)
		if len(line) == 0 && rerr == io.EOF {
			break
		}
		if rerr != nil && rerr != io.EOF {
			return replayed{}, fmt.Errorf("store: read %s: %w", name, rerr)
		}
		if bad != nil {
			return replayed{}, bad
		}
		if err := ctx.Err(); err != nil {
			return replayed{}, err
		}
		if rerr == io.EOF {
			res.tornLine, res.tornBytes = lineNo, len(line) // final line without newline
			break
		}
		e, perr := p.parse(line[:len(line)-1])
		if perr != nil {
			perr = fmt.Errorf("store: %s:%d: corrupt journal line: %w", name, lineNo, perr)
			if !errors.Is(perr, errChecksum) {
				return replayed{}, perr
			}
			bad, badLen = perr, len(line)
			continue
		}
		if serr := checkSequence(prev, snap, e.LSN); serr != nil {
			return replayed{}, fmt.Errorf("store: %s:%d: %w", name, lineNo, serr)
		}
		prev = e.LSN
		res.lines++
		if e.LSN > snap {
			apply(e)
			res.last = e.LSN
		}
	}
	if bad != nil {
		res.tornLine, res.tornBytes = lineNo-1, badLen // a bad checksum on the last line
	}
	if res.lines > 0 && prev < snap {
		return replayed{}, fmt.Errorf("store: %s: %w: the journal ends at lsn %d, before the snapshot's lsn %d: it is an older copy",
			name, ErrDataLoss, prev, snap)
	}
	return res, nil
}

// checkSequence enforces gap-free LSNs: the first line may repeat entries the
// snapshot already holds (a crash between snapshot rename and journal
// truncation leaves them), every later line follows its predecessor.
func checkSequence(prev, snap, lsn uint64) error {
	if prev == 0 {
		if lsn > snap+1 {
			return fmt.Errorf("sequence gap: first lsn %d, but the snapshot ends at lsn %d", lsn, snap)
		}
		return nil
	}
	if lsn != prev+1 {
		return fmt.Errorf("sequence gap: lsn %d follows lsn %d", lsn, prev)
	}
	return nil
}

// readLine returns the next line including its newline; a final line without
// newline comes with io.EOF. Lines may be longer than the reader's buffer.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	long := bytes.Clone(line)
	for err == bufio.ErrBufferFull {
		line, err = r.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

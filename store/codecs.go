package store

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"worldid/record"
	"worldid/store/engine"
)

// The high-volume tables are kept as fixed-width records, in memory and in
// the snapshot (engine.Codec; doc/design.md §3): a leaf in 48 bytes, a
// nullifier in 48, plus their index slots (a leaf has two: by index and by
// commitment, engine.SecondKeyCodec). The engine
// keeps a row its codec does not reproduce byte for byte as JSON (it packs,
// unpacks and compares every row it stores), so a codec only has to pack
// the canonical rows the domain methods write.
var codecs = map[string]engine.Codec{
	tableLeaves:     leafCodec{},
	tableLeafIndex:  leafIndexCodec{},
	tableNullifiers: nullifierCodec{},
}

// hashSize is the size of a commitment or a nullifier: a field element,
// written 0x + 64 lowercase hex.
const hashSize = 32

// splitLast splits key after the last sep: the tree of "<tree>/<rest>".
func splitLast(key string, sep byte) (group, rest string, ok bool) {
	i := strings.LastIndexByte(key, sep)
	return key[:i+1], key[i+1:], i > 0
}

// packHash writes the 32 bytes of "0x" + 64 hex digits to dst.
func packHash(dst []byte, s string) bool {
	if len(s) != commitmentLen || s[:2] != "0x" {
		return false
	}
	_, err := hex.Decode(dst[:hashSize], []byte(s[2:]))
	return err == nil
}

func appendHash(dst, h []byte) []byte {
	return hex.AppendEncode(append(dst, "0x"...), h[:hashSize])
}

// packTime writes t as nanoseconds since the epoch.
func packTime(dst []byte, t time.Time) {
	binary.LittleEndian.PutUint64(dst, uint64(t.UnixNano()))
}

func appendTime(dst, rec []byte) []byte {
	b, _ := time.Unix(0, int64(binary.LittleEndian.Uint64(rec))).UTC().MarshalJSON() // years 1677–2262 always marshal
	return append(dst, b...)
}

// leafCodec packs "<tree>/<index, 10 digits>" → record.Leaf as the index
// (4 bytes), the commitment (32) and the time (8). The commitment is the
// second key: the engine finds a tree's leaf by it (lookupLeaf).
type leafCodec struct{}

// Name is leaf/2 since the commitment became the second key: leaf/1
// snapshots, which held a leaf_index row for every leaf, load (and are
// rewritten), while builds that know only leaf/1, and would look
// commitments up in leaf_index alone, refuse leaf/2.
func (leafCodec) Name() string              { return "leaf/2" }
func (leafCodec) FormerNames() []string     { return []string{"leaf/1"} }
func (leafCodec) Size() (record, key int)   { return 4 + hashSize + 8, 4 }
func (leafCodec) SecondKey() (from, to int) { return 4, 4 + hashSize }

func (leafCodec) Split(key string) (group, rest string, ok bool) { return splitLast(key, '/') }

func (leafCodec) PackKey(dst []byte, rest string) bool {
	n, err := strconv.ParseUint(rest, 10, 32)
	binary.LittleEndian.PutUint32(dst, uint32(n))
	return err == nil && len(rest) == 10
}

func (c leafCodec) Pack(dst []byte, rest string, value []byte) bool {
	// Only the spelling Unpack writes survives the engine's round trip
	// check, so Pack reads that spelling alone (no JSON decoding: the
	// engine packs each appended leaf a few times). The index in the value
	// is the key's: the check keeps a leaf whose index differs as JSON.
	v, ok := strings.CutPrefix(string(value), `{"index":`)
	_, v, found := strings.Cut(v, `,"commitment":"`)
	commitment, v, spelled := strings.Cut(v, `","at":`)
	at, closed := strings.CutSuffix(v, "}")
	var t time.Time
	if !ok || !found || !spelled || !closed || t.UnmarshalJSON([]byte(at)) != nil {
		return false
	}
	packTime(dst[4+hashSize:], t)
	return c.PackKey(dst, rest) && packHash(dst[4:], commitment)
}

func (leafCodec) Unpack(rec []byte) (rest string, value []byte) {
	index := binary.LittleEndian.Uint32(rec)
	v := strconv.AppendUint(append(make([]byte, 0, 160), `{"index":`...), uint64(index), 10)
	v = appendHash(append(v, `,"commitment":"`...), rec[4:])
	v = appendTime(append(v, `","at":`...), rec[4+hashSize:])
	return leafKey("", int64(index))[1:], append(v, '}')
}

// commitmentLen is the length of a commitment's spelling.
const commitmentLen = 2 + 2*hashSize

// unpackLeafTime decodes the index and the time of a record of leafCodec;
// appendLeafCommitment spells its commitment.
func unpackLeafTime(rec []byte) record.Leaf {
	return record.Leaf{
		Index: int(binary.LittleEndian.Uint32(rec)),
		At:    time.Unix(0, int64(binary.LittleEndian.Uint64(rec[4+hashSize:]))).UTC(),
	}
}

func appendLeafCommitment(dst, rec []byte) []byte { return appendHash(dst, rec[4:]) }

// leafIndexCodec packs "<tree>/<commitment>" → index as the commitment
// (32 bytes) and the index (4). The leaf_index rows it packed, in data
// dirs of earlier versions, are dropped when they load (obsolete); the
// codec stays so that their snapshots load.
type leafIndexCodec struct{}

func (leafIndexCodec) Name() string            { return "leaf-index/1" }
func (leafIndexCodec) Size() (record, key int) { return hashSize + 4, hashSize }

func (leafIndexCodec) Split(key string) (group, rest string, ok bool) { return splitLast(key, '/') }

func (leafIndexCodec) PackKey(dst []byte, rest string) bool { return packHash(dst, rest) }

func (leafIndexCodec) Pack(dst []byte, rest string, value []byte) bool {
	n, err := strconv.ParseUint(string(value), 10, 32)
	binary.LittleEndian.PutUint32(dst[hashSize:], uint32(n))
	return err == nil && packHash(dst, rest)
}

func (leafIndexCodec) Unpack(rec []byte) (rest string, value []byte) {
	return string(appendHash(nil, rec)), strconv.AppendUint(nil, uint64(binary.LittleEndian.Uint32(rec[hashSize:])), 10)
}

// nullifierCodec packs verifyKey(rp_id, environment, action, nullifier) →
// nullifierRecord as the nullifier (32 bytes), the first verification's
// time (8) and the count (4); the key's first three parts are its group.
type nullifierCodec struct{}

// nullifierRest is the length of `"0x<64 hex>"]`, the end of a key.
const nullifierRest = 1 + 2 + 2*hashSize + 2

func (nullifierCodec) Name() string            { return "nullifier/1" }
func (nullifierCodec) Size() (record, key int) { return hashSize + 8 + 4, hashSize }

func (nullifierCodec) Split(key string) (group, rest string, ok bool) {
	if len(key) <= nullifierRest {
		return "", "", false
	}
	return key[:len(key)-nullifierRest], key[len(key)-nullifierRest:], true
}

func (nullifierCodec) PackKey(dst []byte, rest string) bool {
	return len(rest) == nullifierRest && rest[0] == '"' && rest[len(rest)-2:] == `"]` && packHash(dst, rest[1:len(rest)-2])
}

func (c nullifierCodec) Pack(dst []byte, rest string, value []byte) bool {
	// A count that does not fit 32 bits fails the engine's round trip.
	var n nullifierRecord
	if json.Unmarshal(value, &n) != nil {
		return false
	}
	packTime(dst[hashSize:], n.CreatedAt)
	binary.LittleEndian.PutUint32(dst[hashSize+8:], uint32(n.Count))
	return c.PackKey(dst, rest)
}

func (nullifierCodec) Unpack(rec []byte) (rest string, value []byte) {
	v := appendTime(append(make([]byte, 0, 64), `{"created_at":`...), rec[hashSize:])
	v = strconv.AppendUint(append(v, `,"count":`...), uint64(binary.LittleEndian.Uint32(rec[hashSize+8:])), 10)
	return `"` + string(appendHash(nil, rec)) + `"]`, append(v, '}')
}

package engine

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
)

// Codec stores the rows of one table as fixed-width records instead of
// strings (doc.go, "Packed tables"). The caller of Open chooses the codecs
// (Options.Codecs); the engine checks every record it makes by unpacking
// it, so a row a codec cannot reproduce byte for byte stays a JSON row.
type Codec interface {
	// Name identifies the record layout. A snapshot names the codec of
	// each packed table and loads only with a codec of that name.
	Name() string
	// Size returns the width of a record and of the key part it starts
	// with.
	Size() (record, key int)
	// Split divides key into a group, a prefix many keys share (stored
	// once per table), and the rest; ok false: the key has no record.
	Split(key string) (group, rest string, ok bool)
	// PackKey writes the key part of rest to dst (key bytes); false: no
	// record has this key.
	PackKey(dst []byte, rest string) bool
	// Pack writes the record of rest and value to dst (record bytes), the
	// key part first; false: the row has no record.
	Pack(dst []byte, rest string, value []byte) bool
	// Unpack returns the rest of the key and the value a record holds.
	// It must accept any bytes.
	Unpack(rec []byte) (rest string, value []byte)
}

// groupIDSize is the width of the group number that precedes each record.
const groupIDSize = 4

// rows is one table: JSON rows in a map, and the rows its codec packs.
// A key is in at most one of them.
type rows struct {
	json   map[string]string
	packed *packedRows // nil: the table has no codec
}

func newRows(c Codec) *rows {
	r := &rows{json: map[string]string{}}
	if c != nil {
		r.packed = newPackedRows(c)
	}
	return r
}

func (r *rows) len() int {
	n := len(r.json)
	if r.packed != nil {
		n += r.packed.len()
	}
	return n
}

func (r *rows) get(key string) (string, bool) {
	if v, ok := r.json[key]; ok {
		return v, true
	}
	if r.packed == nil {
		return "", false
	}
	return r.packed.get(key)
}

// set stores key's value and reports whether the key is new.
func (r *rows) set(key, value string) bool {
	if r.packed != nil {
		if added, ok := r.packed.set(key, value); ok {
			_, had := r.json[key]
			delete(r.json, key)
			return added && !had
		}
		if r.packed.del(key) {
			r.json[key] = value
			return false
		}
	}
	_, had := r.json[key]
	r.json[key] = value
	return !had
}

// del removes key and reports whether it was present.
func (r *rows) del(key string) bool {
	if _, ok := r.json[key]; ok {
		delete(r.json, key)
		return true
	}
	return r.packed != nil && r.packed.del(key)
}

// each calls fn for every row, in no particular order, until it returns
// false.
func (r *rows) each(fn func(key, value string) bool) {
	for k, v := range r.json {
		if !fn(k, v) {
			return
		}
	}
	if r.packed != nil {
		r.packed.each(fn)
	}
}

// sortedKeys returns the keys with the prefix in ascending byte order.
func (r *rows) sortedKeys(prefix string) []string {
	var keys []string
	r.each(func(k, _ string) bool {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
		return true
	})
	slices.Sort(keys)
	return keys
}

func (r *rows) clone() *rows {
	c := &rows{json: maps.Clone(r.json)}
	if r.packed != nil {
		c.packed = r.packed.clone()
	}
	return c
}

// packedRows holds records of a fixed width back to back, each its
// group's number (little-endian uint32) then the codec's record, and an
// open-addressing index (linear probing) of their key parts: 4 bytes a
// slot, at most 3/4 full, each the record's number plus one in the low
// recBits bits and tagBits of its key's hash above them, so that a probe
// reads a record (a cache miss) only when the tags match.
type packedRows struct {
	codec  Codec
	width  int // bytes per record, group number included
	keyEnd int // end of the key part in a record
	groups []string
	ids    map[string]uint32
	recs   []byte
	slots  []uint32 // 0: empty; otherwise tag<<recBits | 1 + the record's number
	seed   maphash.Seed
	// second indexes the records by their second key and group
	// (SecondKeyCodec), as slots do by key; secondAt is where that key
	// lies in a record ({0, 0}: the codec has none).
	second   []uint32
	secondAt [2]int
}

func newPackedRows(c Codec) *packedRows {
	rec, key := c.Size()
	p := &packedRows{codec: c, width: groupIDSize + rec, keyEnd: groupIDSize + key, ids: map[string]uint32{}, seed: maphash.MakeSeed()}
	if sc, ok := c.(SecondKeyCodec); ok {
		from, to := sc.SecondKey()
		p.secondAt = [2]int{groupIDSize + from, groupIDSize + to}
	}
	return p
}

func (p *packedRows) len() int { return len(p.recs) / p.width }

func (p *packedRows) rec(i int) []byte { return p.recs[i*p.width : (i+1)*p.width] }

// key returns the full key of record i.
func (p *packedRows) key(i int) (key string, value []byte) {
	rec := p.rec(i)
	rest, value := p.codec.Unpack(rec[groupIDSize:])
	return p.groupOf(rec) + rest, value
}

// groupOf returns the group a record names ("" for a number out of range,
// which load rejects).
func (p *packedRows) groupOf(rec []byte) string {
	if id := binary.LittleEndian.Uint32(rec); int(id) < len(p.groups) {
		return p.groups[id]
	}
	return ""
}

// splitOf reports whether group and rest are key's two parts (checked
// without building their concatenation).
func splitOf(key, group, rest string) bool {
	return len(group)+len(rest) == len(key) && key[:len(group)] == group && key[len(group):] == rest
}

// searchKey writes the key part of key's record to buf; false: key has no
// record.
func (p *packedRows) searchKey(buf []byte, key string) ([]byte, bool) {
	group, rest, ok := p.codec.Split(key)
	if !ok || !splitOf(key, group, rest) {
		return nil, false
	}
	id, ok := p.ids[group]
	if !ok {
		return nil, false
	}
	if len(buf) < p.keyEnd {
		buf = make([]byte, p.keyEnd)
	}
	k := buf[:p.keyEnd]
	binary.LittleEndian.PutUint32(k, id)
	return k, p.codec.PackKey(k[groupIDSize:], rest)
}

// The index's slot layout: a table packs at most maxPacked rows (further
// rows stay JSON rows).
const (
	recBits   = 26
	tagBits   = 32 - recBits
	recMask   = 1<<recBits - 1
	maxPacked = recMask - 1
)

func (p *packedRows) hash(k []byte) uint64 { return maphash.Bytes(p.seed, k) }

// keyHash is the hash of record i's key part.
func (p *packedRows) keyHash(i int) uint64 { return p.hash(p.rec(i)[:p.keyEnd]) }

func slotOf(h uint64, i int) uint32 { return uint32(h>>(64-tagBits))<<recBits | uint32(i+1) }

func recOf(v uint32) int { return int(v&recMask) - 1 }

// find returns the slot and the record number of the key part k, whose
// hash is h, or the empty slot where it would go and -1.
func (p *packedRows) find(k []byte, h uint64) (slot, rec int) {
	if len(p.slots) == 0 {
		return -1, -1
	}
	mask := len(p.slots) - 1
	tag := uint32(h >> (64 - tagBits))
	for s := int(h) & mask; ; s = (s + 1) & mask {
		v := p.slots[s]
		if v == 0 {
			return s, -1
		}
		if i := recOf(v); v>>recBits == tag && bytes.Equal(p.rec(i)[:p.keyEnd], k) {
			return s, i
		}
	}
}

func (p *packedRows) get(key string) (string, bool) {
	var buf [128]byte
	k, ok := p.searchKey(buf[:], key)
	if !ok {
		return "", false
	}
	if _, i := p.find(k, p.hash(k)); i >= 0 {
		_, v := p.codec.Unpack(p.rec(i)[groupIDSize:])
		return string(v), true
	}
	return "", false
}

// set stores key's value as a record, if the codec reproduces it exactly
// (ok), and reports whether the key is new.
func (p *packedRows) set(key, value string) (added, ok bool) {
	group, rec, ok := makeRecord(p.codec, groupIDSize, key, []byte(value))
	if !ok {
		return false, false
	}
	id, known := p.ids[group]
	if !known {
		id = uint32(len(p.groups))
		p.groups = append(p.groups, group)
		p.ids[group] = id
	}
	binary.LittleEndian.PutUint32(rec, id)
	if _, i := p.find(rec[:p.keyEnd], p.hash(rec[:p.keyEnd])); i >= 0 {
		p.unindexSecond(i)
		copy(p.rec(i), rec)
		p.indexSecond(i)
		return false, true
	}
	if p.len() >= maxPacked {
		return false, false
	}
	p.recs = append(p.recs, rec...)
	p.index(p.len() - 1)
	return true, true
}

// index adds record i to the index, growing it first if it would be more
// than 3/4 full. A key already indexed is reported (false).
func (p *packedRows) index(i int) bool {
	if 4*(i+1) > 3*len(p.slots) {
		p.rehash(max(16, 2*len(p.slots)))
	}
	h := p.keyHash(i)
	s, j := p.find(p.rec(i)[:p.keyEnd], h)
	if j >= 0 {
		return false
	}
	p.slots[s] = slotOf(h, i)
	p.indexSecond(i)
	return true
}

func (p *packedRows) rehash(size int) {
	p.slots = fillSlots(size, p.len(), p.keyHash)
	if p.hasSecond() {
		p.second = fillSlots(size, p.len(), p.secondHash)
	}
}

// fillSlots returns an index of size slots holding records 0 to n-1,
// which hash places.
func fillSlots(size, n int, hash func(rec int) uint64) []uint32 {
	slots := make([]uint32, size)
	mask := size - 1
	for i := range n {
		h := hash(i)
		s := int(h) & mask
		for slots[s] != 0 {
			s = (s + 1) & mask
		}
		slots[s] = slotOf(h, i)
	}
	return slots
}

// del removes key's record: the last record takes its place.
func (p *packedRows) del(key string) bool {
	var buf [128]byte
	k, ok := p.searchKey(buf[:], key)
	if !ok {
		return false
	}
	s, i := p.find(k, p.hash(k))
	if i < 0 {
		return false
	}
	unslot(p.slots, s, p.keyHash)
	p.unindexSecond(i)
	if last := p.len() - 1; i != last {
		ls, _ := p.find(p.rec(last)[:p.keyEnd], p.keyHash(last))
		p.slots[ls] = p.slots[ls]&^recMask | uint32(i+1)
		p.renumberSecond(last, i)
		copy(p.rec(i), p.rec(last))
	}
	p.recs = p.recs[:len(p.recs)-p.width]
	return true
}

// unslot empties slot s and moves later entries of its probe run back, so
// that every entry stays reachable from its home slot, which hash gives.
func unslot(slots []uint32, s int, hash func(rec int) uint64) {
	mask := len(slots) - 1
	for j := (s + 1) & mask; slots[j] != 0; j = (j + 1) & mask {
		h := int(hash(recOf(slots[j]))) & mask
		// The entry at j may move to s if its home is not in (s, j].
		if (j-h)&mask >= (j-s)&mask {
			slots[s] = slots[j]
			s = j
		}
	}
	slots[s] = 0
}

func (p *packedRows) each(fn func(key, value string) bool) {
	for i := range p.len() {
		k, v := p.key(i)
		if !fn(k, string(v)) {
			return
		}
	}
}

// records calls fn with the codec's part of every record of group.
func (p *packedRows) records(group string, fn func(rec []byte)) {
	id, ok := p.ids[group]
	if !ok {
		return
	}
	for i := range p.len() {
		if rec := p.rec(i); binary.LittleEndian.Uint32(rec) == id {
			fn(rec[groupIDSize:])
		}
	}
}

func (p *packedRows) clone() *packedRows {
	c := *p
	c.groups = slices.Clone(p.groups)
	c.ids = maps.Clone(p.ids)
	c.recs = slices.Clone(p.recs)
	c.slots = slices.Clone(p.slots)
	c.second = slices.Clone(p.second)
	return &c
}

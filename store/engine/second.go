package engine

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// SecondKeyCodec is a Codec whose records hold a second key: bytes that
// identify a row within its group as its key does (a leaf's commitment
// within its tree, where the key is its index). The engine indexes the
// table's rows by group and second key, so that Lookup finds a row by
// them. It does not enforce their uniqueness: callers that want it look
// up before they write, under Update's lock.
type SecondKeyCodec interface {
	Codec
	// SecondKey returns where the second key lies in a record: bytes
	// [from, to).
	SecondKey() (from, to int)
}

// RenamedCodec is a Codec whose layout earlier codecs wrote under other
// names: a snapshot that names one of them loads with it, and Open
// rewrites the snapshot under the current name, which builds that know
// only a former name refuse to load (a way to keep them from a data dir
// whose meaning changed, as it did when leaves gained a second key).
type RenamedCodec interface {
	Codec
	FormerNames() []string
}

func formerNames(c Codec) []string {
	if rc, ok := c.(RenamedCodec); ok {
		return rc.FormerNames()
	}
	return nil
}

// makeRecord returns key's group and the record of key and value, after
// room bytes left for the caller; ok false: the codec does not reproduce
// the row byte for byte, so it has no record.
func makeRecord(c Codec, room int, key string, value []byte) (group string, rec []byte, ok bool) {
	group, rest, ok := c.Split(key)
	if !ok || !splitOf(key, group, rest) {
		return "", nil, false
	}
	size, _ := c.Size()
	rec = make([]byte, room+size)
	if !c.Pack(rec[room:], rest, value) {
		return "", nil, false
	}
	if r, v := c.Unpack(rec[room:]); r != rest || !bytes.Equal(v, value) {
		return "", nil, false
	}
	return group, rec, true
}

// Packs reports whether the engine keeps table/key's row as a record of
// codec c, and so whether Lookup can find it by its second key.
func Packs(c Codec, key string, value []byte) bool {
	_, _, ok := makeRecord(c, 0, key, value)
	return ok
}

// secondID names a row by table, group and second key.
type secondID struct{ table, group, second string }

// secondIDOf returns the table, group and second key of the row of key
// and value; ok false: the table's codec c has no second key, or the row
// no record (value nil: a deleted row has none).
func secondIDOf(c Codec, table, key string, value []byte) (id secondID, ok bool) {
	sc, ok := c.(SecondKeyCodec)
	if !ok || value == nil {
		return secondID{}, false
	}
	group, rec, ok := makeRecord(sc, 0, key, value)
	if !ok {
		return secondID{}, false
	}
	from, to := sc.SecondKey()
	return secondID{table, group, string(rec[from:to])}, true
}

func (p *packedRows) hasSecond() bool { return p.secondAt[1] > 0 }

// secondHashOf hashes a second key within group number id.
func (p *packedRows) secondHashOf(id uint32, second []byte) uint64 {
	return maphash.Bytes(p.seed, second) ^ uint64(id)*0x9e3779b97f4a7c15
}

// secondHash is the hash of record i's group and second key.
func (p *packedRows) secondHash(i int) uint64 {
	rec := p.rec(i)
	return p.secondHashOf(binary.LittleEndian.Uint32(rec), rec[p.secondAt[0]:p.secondAt[1]])
}

// indexSecond adds record i to the second index (slots has made room).
func (p *packedRows) indexSecond(i int) {
	if !p.hasSecond() {
		return
	}
	h := p.secondHash(i)
	mask := len(p.second) - 1
	s := int(h) & mask
	for p.second[s] != 0 {
		s = (s + 1) & mask
	}
	p.second[s] = slotOf(h, i)
}

// secondSlot returns the slot of the second index that holds record i.
func (p *packedRows) secondSlot(i int) int {
	mask := len(p.second) - 1
	s := int(p.secondHash(i)) & mask
	for recOf(p.second[s]) != i {
		s = (s + 1) & mask
	}
	return s
}

// unindexSecond removes record i from the second index.
func (p *packedRows) unindexSecond(i int) {
	if p.hasSecond() {
		unslot(p.second, p.secondSlot(i), p.secondHash)
	}
}

// renumberSecond points record from's entry of the second index at to.
func (p *packedRows) renumberSecond(from, to int) {
	if p.hasSecond() {
		s := p.secondSlot(from)
		p.second[s] = p.second[s]&^recMask | uint32(to+1)
	}
}

// lookup calls fn with the key of each record of group whose second key
// is second, until fn returns false.
func (p *packedRows) lookup(group string, second []byte, fn func(key string) bool) {
	id, ok := p.ids[group]
	if !ok || !p.hasSecond() || len(p.second) == 0 {
		return
	}
	h := p.secondHashOf(id, second)
	mask := len(p.second) - 1
	tag := uint32(h >> (64 - tagBits))
	for s := int(h) & mask; p.second[s] != 0; s = (s + 1) & mask {
		v := p.second[s]
		if v>>recBits != tag {
			continue
		}
		i := recOf(v)
		rec := p.rec(i)
		if binary.LittleEndian.Uint32(rec) == id && bytes.Equal(rec[p.secondAt[0]:p.secondAt[1]], second) {
			if k, _ := p.key(i); !fn(k) {
				return
			}
		}
	}
}

// lookup calls fn with the key of each row of group whose second key is
// second, until fn returns false: the records through the second index,
// then the JSON rows of the table the codec could pack (rows past
// maxPacked) one by one.
func (r *rows) lookup(group string, second []byte, fn func(key string) bool) {
	if r.packed == nil || !r.packed.hasSecond() {
		return
	}
	done := false
	r.packed.lookup(group, second, func(key string) bool {
		done = !fn(key)
		return !done
	})
	for k, v := range r.json {
		if done {
			return
		}
		if id, ok := secondIDOf(r.packed.codec, "", k, []byte(v)); ok && id.group == group && id.second == string(second) {
			done = !fn(k)
		}
	}
}

// Lookup returns the key of a row of table in group (Codec.Split) whose
// record holds second as its second key (SecondKeyCodec); ok false: none,
// or the table's codec has no second key.
func (s State) Lookup(table, group string, second []byte) (key string, ok bool) {
	if r := s.tables[table]; r != nil {
		r.lookup(group, second, func(k string) bool {
			key, ok = k, true
			return false
		})
	}
	return key, ok
}

// Lookup is State.Lookup over what this Tx sees: its own writes, the
// writes of earlier Updates still waiting for their fsync, and the
// durable state.
func (tx *Tx) Lookup(table, group string, second []byte) (string, bool) {
	id := secondID{table, group, string(second)}
	candidates := make([]string, 0, 2)
	if k, ok := tx.seconds[id]; ok {
		candidates = append(candidates, k)
	}
	tx.db.mu.RLock()
	if k, ok := tx.db.overlaySeconds[id]; ok {
		candidates = append(candidates, k)
	}
	if r := tx.db.base.tables[table]; r != nil {
		r.lookup(group, second, func(k string) bool {
			candidates = append(candidates, k)
			return true
		})
	}
	tx.db.mu.RUnlock()
	// A candidate may since have been changed or deleted: its current
	// value decides (and Get notes the queued write it read).
	for _, k := range candidates {
		if v, ok := tx.Get(table, k); ok {
			if got, ok := secondIDOf(tx.db.codecs[table], table, k, v); ok && got == id {
				return k, true
			}
		}
	}
	return "", false
}

// noteSecond records in seconds that key holds the second key of its
// row, written but not durable, so that Lookup finds it. A stale entry
// costs a Lookup one Get.
func noteSecond(seconds map[secondID]string, c Codec, table, key string, value []byte) (secondID, bool) {
	id, ok := secondIDOf(c, table, key, value)
	if ok {
		seconds[id] = key
	}
	return id, ok
}

// forgetSecond removes the entry noteSecond made, if it still names key.
func forgetSecond(seconds map[secondID]string, id secondID, key string) {
	if seconds[id] == key {
		delete(seconds, id)
	}
}

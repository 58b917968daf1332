package store

import (
	"bytes"
	"testing"
)

// FuzzCodecs: every codec unpacks any record, and packs what it unpacked
// back into the same record (so every record a snapshot can hold is a
// canonical row); splitting and packing any key and value never panics.
func FuzzCodecs(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789"), "orb/production/0000000001",
		[]byte(`{"index":1,"commitment":"0x00000000000000000000000000000000000000000000000000000000000000a1","at":"2026-11-27T10:00:00.123Z"}`))
	f.Add(make([]byte, 64), `["rp_1","production","vote","0x0000000000000000000000000000000000000000000000000000000000000001"]`,
		[]byte(`{"created_at":"2026-11-27T10:00:00.123Z","count":2}`))
	f.Add([]byte{0xff}, "orb/0x00000000000000000000000000000000000000000000000000000000000000a1", []byte("7"))
	f.Fuzz(func(t *testing.T, rec []byte, key string, value []byte) {
		for name, c := range codecs {
			size, keySize := c.Size()
			if group, rest, ok := c.Split(key); ok && group+rest == key {
				c.PackKey(make([]byte, keySize), rest)
				c.Pack(make([]byte, size), rest, value)
			}
			if len(rec) < size {
				continue
			}
			rest, v := c.Unpack(rec[:size])
			again := make([]byte, size)
			if !c.Pack(again, rest, v) || !bytes.Equal(again, rec[:size]) {
				t.Fatalf("%s: record %x unpacks to %q %s, which packs to %x", name, rec[:size], rest, v, again)
			}
		}
	})
}

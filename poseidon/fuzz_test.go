package poseidon

import (
	"encoding/hex"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
)

func FuzzAdd(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add([]byte("\x30\x64\x4e\x72\xe1\x31\xa0\x29\xb8\x50\x45\xb6\x81\x81\x58\x5d\x28\x33\xe8\x48\x79\xb9\x70\x91\x43\xe1\xf5\x93\xf0\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 64 {
			return
		}
		var x, y fr.Element
		x.SetBytes(b[:32])
		y.SetBytes(b[32:64])
		checkAdd(t, x, y)
	})
}

func FuzzHashBytes(f *testing.F) {
	var v p2File
	vectors.Load(f, poseidon2Vectors, &v)
	for _, s := range v.Sponge.Vectors {
		if s.DataHex != nil {
			b, err := hex.DecodeString(*s.DataHex)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(s.TagASCII, b)
		}
	}
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, tag string, data []byte) {
		got, err := HashBytes(tag, data)
		if len(data) == 0 {
			if err == nil {
				t.Fatal("empty input accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := spongeByHand(t, tag, data); !got.Equal(&want) {
			t.Fatalf("HashBytes(%q, %x) differs from the spec steps", tag, data)
		}
	})
}

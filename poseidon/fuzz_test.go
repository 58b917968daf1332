package poseidon

import (
	"encoding/hex"
	"testing"

	"worldid/internal/vectors"
)

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

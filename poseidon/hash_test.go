package poseidon

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/cryptotest"
)

type spongeVector struct {
	Name          string  `json:"name"`
	TagASCII      string  `json:"tag_ascii"`
	DataLen       int     `json:"data_len"`
	DataHex       *string `json:"data_hex"`
	DataDesc      *string `json:"data_desc"`
	PreimageHex   string  `json:"safe_tag_preimage_hex"`
	TagSHA3ModP   string  `json:"safe_tag_sha3_256_mod_p"`
	Output        string  `json:"output"`
	OutputDecimal string  `json:"output_decimal"`
}

// data returns the vector's input: data_hex, or data_len bytes as described
// by data_desc ("<N> bytes of 0x<b>").
func (v *spongeVector) data(t *testing.T) []byte {
	t.Helper()
	if v.DataHex != nil {
		b, err := hex.DecodeString(*v.DataHex)
		if err != nil {
			t.Fatalf("data_hex: %v", err)
		}
		if len(b) != v.DataLen {
			t.Fatalf("data_hex has %d bytes, data_len %d", len(b), v.DataLen)
		}
		return b
	}
	if v.DataDesc == nil {
		t.Fatal("vector has neither data_hex nor data_desc")
	}
	var n int
	var fill byte
	if _, err := fmt.Sscanf(*v.DataDesc, "%d bytes of 0x%02x", &n, &fill); err != nil || n != v.DataLen {
		t.Fatalf("data_desc %q (data_len %d): %v", *v.DataDesc, v.DataLen, err)
	}
	return bytes.Repeat([]byte{fill}, n)
}

func TestHashModeDomainSeparators(t *testing.T) {
	f, c := loadPoseidon2(t)
	all := append(append([]domainSeparator(nil), f.HashMode.DomainSeparators...), f.HashMode.VariableLengthSeparators...)
	for _, d := range all {
		t.Run(d.Name, func(t *testing.T) {
			c.Inc()
			if got := hex.EncodeToString([]byte(d.TagASCII)); got != d.TagHex {
				t.Errorf("tag_hex = %s, want %s", got, d.TagHex)
			}
			if d.FieldElementDecimal != nil {
				wantDec(t, "fe(tag)", tagElement(d.TagASCII), *d.FieldElementDecimal)
			}
			if d.FieldElement != nil {
				wantFE(t, "fe(tag)", tagElement(d.TagASCII), *d.FieldElement)
			}
			if d.Arity != 0 {
				if w := hashWidth(d.Arity); w != d.Width {
					t.Errorf("arity %d uses width %d, want %d", d.Arity, w, d.Width)
				}
			}
		})
	}
}

func TestHashModeVectors(t *testing.T) { cryptotest.ForEachPath(t, testHashModeVectors) }

func testHashModeVectors(t *testing.T) {
	f, c := loadPoseidon2(t)
	for _, v := range f.HashMode.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			c.Inc()
			in := decFEs(t, v.Inputs)
			if w := hashWidth(len(in)); w != v.Width {
				t.Errorf("%d inputs use width %d, want %d", len(in), w, v.Width)
			}
			got := Hash(v.TagASCII, in...)
			wantFE(t, "H", got, v.Output)
			wantDec(t, "H", got, v.OutputDecimal)
		})
	}
}

// TestHashModeLayout checks Hash against the state layout of doc/crypto.md §b
// built by hand: [fe(tag), x1..xN, 0...], result slot 1.
func TestHashModeLayout(t *testing.T) {
	for n := 1; n <= 15; n++ {
		in := randomFEs(n)
		s := make([]fr.Element, hashWidth(n))
		s[0] = tagElement("layout")
		copy(s[1:], in)
		permuteAny(t, s)
		if got := Hash("layout", in...); !got.Equal(&s[1]) {
			t.Fatalf("n=%d: Hash differs from P2_t(state)[1]", n)
		}
	}
}

func TestCompressVectors(t *testing.T) {
	f, c := loadPoseidon2(t)
	for _, v := range f.Compress.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			c.Inc()
			got := Compress(decFE(t, v.Left), decFE(t, v.Right))
			wantFE(t, "compress", got, v.Output)
			wantDec(t, "compress", got, v.OutputDecimal)
		})
	}
}

func TestSpongeVectors(t *testing.T) { cryptotest.ForEachPath(t, testSpongeVectors) }

func testSpongeVectors(t *testing.T) {
	f, c := loadPoseidon2(t)
	for _, v := range f.Sponge.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			c.Inc()
			data := v.data(t)
			pre, err := appendTagPreimage(nil, v.TagASCII, len(data))
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(pre); got != v.PreimageHex {
				t.Errorf("tag preimage = %s, want %s", got, v.PreimageHex)
			}
			tag, err := spongeTag(v.TagASCII, len(data))
			if err != nil {
				t.Fatal(err)
			}
			wantFE(t, "T", tag, v.TagSHA3ModP)
			got, err := HashBytes(v.TagASCII, data)
			if err != nil {
				t.Fatal(err)
			}
			wantFE(t, "S", got, v.Output)
			wantDec(t, "S", got, v.OutputDecimal)
		})
	}
}

// spongeByHand is doc/crypto.md §b steps 3-6 written with a math/big chunk
// decoding, to check HashBytes at every chunk and block boundary.
func spongeByHand(t *testing.T, tag string, data []byte) fr.Element {
	tagFE, err := spongeTag(tag, len(data))
	if err != nil {
		t.Fatal(err)
	}
	var chunks []fr.Element
	for len(data) > 0 {
		n := min(31, len(data))
		var e fr.Element
		if err := e.SetBytesCanonical(append(make([]byte, 32-n), data[:n]...)); err != nil {
			t.Fatalf("chunk not < p: %v", err)
		}
		chunks = append(chunks, e)
		data = data[n:]
	}
	var s [16]fr.Element
	s[15] = tagFE
	for len(chunks) > 0 {
		n := min(15, len(chunks))
		for j := range n {
			s[j].Add(&s[j], &chunks[j])
		}
		chunks = chunks[n:]
		Permute16(&s)
	}
	return s[0]
}

func TestSpongeBoundaries(t *testing.T) {
	data := bytes.Repeat([]byte{0xff}, 31*15*2+1) // all-ones chunks are the largest
	for _, n := range []int{1, 30, 31, 32, 62, 31*15 - 1, 31 * 15, 31*15 + 1, 31 * 30, 31*30 + 1} {
		got, err := HashBytes("T", data[:n])
		if err != nil {
			t.Fatal(err)
		}
		if want := spongeByHand(t, "T", data[:n]); !got.Equal(&want) {
			t.Errorf("len %d: HashBytes differs from the spec steps", n)
		}
	}
}

func TestSpongeRejects(t *testing.T) {
	if _, err := HashBytes("T", nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("HashBytes(nil) error = %v, want empty-input error", err)
	}
	if _, err := HashBytes("T", []byte{}); err == nil {
		t.Error("HashBytes(empty) accepted")
	}
	for _, n := range []int{1 << 31, 1<<32 - 1, 1 << 32} {
		if _, err := spongeTag("T", n); err == nil || !strings.Contains(err.Error(), "too long") {
			t.Errorf("spongeTag(len %d) error = %v, want too-long error", n, err)
		}
	}
	if _, err := spongeTag("T", 1<<31-1); err != nil {
		t.Errorf("spongeTag(2^31-1): %v", err)
	}
}

func TestSpongeTagDependsOnLength(t *testing.T) {
	a, _ := HashBytes("T", []byte{1})
	b, _ := HashBytes("T", []byte{0, 1})
	if a.Equal(&b) {
		t.Error("leading zero byte does not change the sponge output")
	}
}

func TestHashPanics(t *testing.T) {
	mustPanic(t, "Hash with no input", func() { Hash("T") })
	mustPanic(t, "Hash with 16 inputs", func() { Hash("T", make([]fr.Element, 16)...) })
	mustPanic(t, "Hash with a 32-byte tag", func() { Hash(strings.Repeat("a", 32), fr.Element{}) })
	Hash(strings.Repeat("a", 31), fr.Element{}) // 31 bytes is allowed
}

func TestReduce256(t *testing.T) {
	var max [32]byte
	for i := range max {
		max[i] = 0xff
	}
	for _, b := range [][32]byte{{}, max, {0x20}, {0x30, 0x64, 0x4e, 0x72, 0xe1, 0x31, 0xa0, 0x29, 0xb8, 0x50, 0x45, 0xb6, 0x81, 0x81, 0x58, 0x5d, 0x28, 0x33, 0xe8, 0x48, 0x79, 0xb9, 0x70, 0x91, 0x43, 0xe1, 0xf5, 0x93, 0xf0, 0x00, 0x00, 0x01}} {
		var want fr.Element
		want.SetBigInt(new(big.Int).SetBytes(b[:]))
		if got := reduce256(b); !got.Equal(&want) {
			t.Errorf("reduce256(%x) = %s, want %s", b, got.String(), want.String())
		}
	}
	for range 1000 {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		var want fr.Element
		want.SetBigInt(new(big.Int).SetBytes(b[:]))
		if got := reduce256(b); !got.Equal(&want) {
			t.Fatalf("reduce256(%x) = %s, want %s", b, got.String(), want.String())
		}
	}
}

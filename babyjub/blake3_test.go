package babyjub

import (
	"bytes"
	"encoding/hex"
	"testing"

	"worldid/internal/vectors"
)

// TestBlake3OfficialVectors checks every official case within one chunk
// (doc/crypto.md §e vectors: input_len ≤ 1024, the full 131-byte hash output).
func TestBlake3OfficialVectors(t *testing.T) {
	var file struct {
		Cases []struct {
			InputLen *int   `json:"input_len"`
			Hash     string `json:"hash"`
		} `json:"cases"`
	}
	vectors.Load(t, "blake3_test_vectors.json", &file)
	c := vectors.NewCounter(t, "blake3_test_vectors.json")
	for _, tc := range file.Cases {
		if tc.InputLen == nil {
			t.Fatal("case without input_len")
		}
		if *tc.InputLen > blake3ChunkLen {
			continue // multi-chunk inputs are outside the subset (doc/crypto.md §e)
		}
		in := make([]byte, *tc.InputLen)
		for i := range in {
			in[i] = byte(i % 251)
		}
		want := vectors.Hex(t, tc.Hash)
		if len(want) == 0 {
			t.Fatalf("input_len %d: empty hash", *tc.InputLen)
		}
		got := make([]byte, len(want))
		blake3XOF(got, in)
		if !bytes.Equal(got, want) {
			t.Errorf("input_len %d:\n got %x\nwant %x", *tc.InputLen, got, want)
		}
		c.Inc()
	}
}

func TestBlake3SelfTest(t *testing.T) {
	var file struct {
		Misc struct {
			Blake3SelfTest []struct {
				InputHex   *string `json:"input_hex"`
				InputASCII *string `json:"input_ascii"`
				Out32      string  `json:"out32"`
			} `json:"blake3_selftest"`
		} `json:"misc"`
	}
	vectors.Load(t, "eddsa_babyjubjub.json", &file)
	c := vectors.NewCounter(t, "eddsa_babyjubjub.json")
	for _, tc := range file.Misc.Blake3SelfTest {
		var in []byte
		switch {
		case tc.InputHex != nil && tc.InputASCII == nil:
			in = vectors.Hex(t, *tc.InputHex)
		case tc.InputASCII != nil && tc.InputHex == nil:
			in = []byte(*tc.InputASCII)
		default:
			t.Fatalf("self-test entry needs exactly one of input_hex, input_ascii")
		}
		want := vectors.Hex(t, tc.Out32)
		got := make([]byte, len(want))
		blake3XOF(got, in)
		if !bytes.Equal(got, want) {
			t.Errorf("input %x: got %x want %x", in, got, want)
		}
		c.Inc()
	}
}

// TestBlake3OutputPrefix checks that shorter outputs are prefixes of longer
// ones (the XOF property key expansion relies on).
func TestBlake3OutputPrefix(t *testing.T) {
	in := []byte("babyjub")
	long := make([]byte, 200)
	blake3XOF(long, in)
	for _, n := range []int{1, 32, 63, 64, 65, 128} {
		short := make([]byte, n)
		blake3XOF(short, in)
		if !bytes.Equal(short, long[:n]) {
			t.Errorf("output of %d bytes is not a prefix: %s", n, hex.EncodeToString(short))
		}
	}
}

func TestBlake3RejectsMultiChunk(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a 1025-byte input")
		}
	}()
	blake3XOF(make([]byte, 32), make([]byte, blake3ChunkLen+1))
}

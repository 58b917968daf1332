package prover

import (
	"bytes"
	"testing"

	"worldid/semaphore"
)

// maxFuzzDepth bounds the depths FuzzReadProvingKey reads: ReadProvingKey
// compiles the circuit of the file's depth before decoding anything, and
// deeper circuits only cost time, not decoder coverage.
const maxFuzzDepth = 4

// FuzzReadProvingKey: ReadProvingKey never panics, and a key it accepts
// is written back as a file that reads to the same depth and verifying key
// and is a fixed point of WriteTo. The file is a depth-2 key written by
// WriteTo (generated here: Setup is random, so no file could be checked
// in) with patch written at offset and then cut to cut bytes (0: not
// cut): at about 0.5 MB the key itself is too large an input for the
// fuzzer to mutate and minimize, while any damage to it is a patch and a
// cut. Seeds: the damaged forms TestProvingKeySerialization rejects.
func FuzzReadProvingKey(f *testing.F) {
	var buf bytes.Buffer
	if _, err := sharedKey(f, 2).WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	depthAt := uint32(len(provingKeyMagic))
	f.Add(uint32(0), []byte{}, uint32(0))                       // the key as written
	f.Add(uint32(0), []byte{}, uint32(len(good)-1))             // truncated
	f.Add(uint32(0), []byte{}, depthAt+1+200)                   // the verifying key only
	f.Add(uint32(0), []byte("X"), uint32(0))                    // bad magic
	f.Add(depthAt, []byte{1}, uint32(0))                        // a key for another depth
	f.Add(depthAt, []byte{0}, uint32(0))                        // depth 0
	f.Add(depthAt, []byte{semaphore.MaxDepth + 1}, uint32(0))   // depth too large
	f.Add(depthAt+1, []byte{good[depthAt+1] ^ 0x80}, uint32(0)) // first point's flag bits
	f.Add(uint32(len(good)-64), bytes.Repeat([]byte{0xff}, 64), uint32(0))
	f.Fuzz(func(t *testing.T, offset uint32, patch []byte, cut uint32) {
		b := bytes.Clone(good)
		copy(b[int(offset)%len(b):], patch)
		if cut != 0 {
			b = b[:int(cut)%len(b)]
		}
		if len(b) > int(depthAt) && b[depthAt] > maxFuzzDepth && b[depthAt] <= semaphore.MaxDepth {
			return
		}
		pk, err := ReadProvingKey(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := pk.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		again, err := ReadProvingKey(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("rewritten key rejected: %v", err)
		}
		var out2 bytes.Buffer
		if _, err := again.WriteTo(&out2); err != nil {
			t.Fatal(err)
		}
		if again.Depth() != pk.Depth() || !bytes.Equal(out.Bytes(), out2.Bytes()) ||
			!bytes.Equal(marshalKey(t, again.VerifyingKey()), marshalKey(t, pk.VerifyingKey())) {
			t.Fatal("WriteTo/ReadProvingKey round trip changed the key")
		}
	})
}

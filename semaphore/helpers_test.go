package semaphore

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"worldid/field"
	"worldid/internal/vectors"
)

// semaphoreFile is the structure of semaphore_vectors.json (vectors README).
// unverified[] is deliberately not decoded: it must not be asserted.
type semaphoreFile struct {
	VKFiles        map[string]string `json:"vk_files"`
	CompressionKAT struct {
		Flat       []string `json:"flat"`
		Compressed []string `json:"compressed"`
	} `json:"compression_kat"`
	Vectors []semaphoreVector `json:"vectors"`
}

type semaphoreVector struct {
	Name              string   `json:"name"`
	ProofPacked       []string `json:"proof_packed"`
	ProofABIHex       *string  `json:"proof_abi_hex"`
	ProofCompressed   []string `json:"proof_compressed"`
	Depth             int      `json:"depth"`
	Root              string   `json:"root"`
	NullifierHash     string   `json:"nullifier_hash"`
	SignalHash        string   `json:"signal_hash"`
	ExternalNullifier string   `json:"external_nullifier"`
	// expect_valid is a closed boolean vocabulary: null, a missing member or
	// a non-boolean fails the test (nil pointer or decode error).
	ExpectValid *bool `json:"expect_valid"`
}

func loadSemaphoreVectors(t testing.TB) semaphoreFile {
	t.Helper()
	var f semaphoreFile
	vectors.Load(t, "semaphore_vectors.json", &f)
	return f
}

// packedWords reads "0x"-hex words of up to 64 digits, the vector encoding.
func packedWords[T ~[]string](t testing.TB, hexWords T) []word {
	t.Helper()
	out := make([]word, len(hexWords))
	for i, s := range hexWords {
		rest, ok := strings.CutPrefix(s, "0x")
		if !ok {
			t.Fatalf("vector word %q lacks 0x", s)
		}
		w, err := hexWord(rest)
		if err != nil {
			t.Fatalf("vector word %q: %v", s, err)
		}
		out[i] = w
	}
	return out
}

func decimalWords(t testing.TB, digits []string) []word {
	t.Helper()
	out := make([]word, len(digits))
	for i, s := range digits {
		w, err := decimalWord(s)
		if err != nil {
			t.Fatalf("vector decimal %q: %v", s, err)
		}
		out[i] = w
	}
	return out
}

func eight(t testing.TB, w []word) [8][32]byte {
	t.Helper()
	if len(w) != 8 {
		t.Fatalf("want 8 words, got %d", len(w))
	}
	return [8][32]byte(w)
}

func four(t testing.TB, w []word) [4][32]byte {
	t.Helper()
	if len(w) != 4 {
		t.Fatalf("want 4 words, got %d", len(w))
	}
	return [4][32]byte(w)
}

// publicInputs decodes the vector's hex fields with the verify API's
// VerifyHex rule and the range check of doc/crypto.md §g step 2.
func (v *semaphoreVector) publicInputs(t testing.TB) (PublicInputs, error) {
	t.Helper()
	var raw [4][32]byte
	for i, s := range []string{v.Root, v.NullifierHash, v.SignalHash, v.ExternalNullifier} {
		b, err := field.ParseVerifyHex(s)
		if err != nil {
			t.Fatalf("%s: public input %q: %v", v.Name, s, err)
		}
		raw[i] = b
	}
	return NewPublicInputs(raw[0], raw[1], raw[2], raw[3])
}

// keysFor returns every key the vector can be checked against: the embedded
// published key and, when vk_files names one, the key parsed from that file.
func keysFor(t testing.TB, f *semaphoreFile, depth int) []*VerifyingKey {
	t.Helper()
	var keys []*VerifyingKey
	if vk, err := PublishedKey(depth); err == nil {
		keys = append(keys, vk)
	}
	if name, ok := f.VKFiles[strconv.Itoa(depth)]; ok {
		keys = append(keys, readKeyFile(t, name))
	}
	if len(keys) == 0 {
		t.Fatalf("no verifying key for depth %d", depth)
	}
	return keys
}

func readKeyFile(t testing.TB, name string) *VerifyingKey {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectors.Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	vk, err := ParseVerifyingKey(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return vk
}

func mustDecimal(t testing.TB, s string) fr.Element {
	t.Helper()
	e, err := field.ParseDecimal(s)
	if err != nil {
		t.Fatalf("vector value %q: %v", s, err)
	}
	return e
}

// gnarkKey converts our key to gnark's, for comparisons.
func gnarkKey(t testing.TB, vk *VerifyingKey) *groth16bn254.VerifyingKey {
	t.Helper()
	var g groth16bn254.VerifyingKey
	g.G1.Alpha = vk.alpha
	g.G1.K = append(g.G1.K, vk.ic...)
	g.G2.Beta, g.G2.Gamma, g.G2.Delta = vk.beta, vk.gamma, vk.delta
	if err := g.Precompute(); err != nil {
		t.Fatal(err)
	}
	return &g
}

func gnarkProof(p *Proof) *groth16bn254.Proof {
	return &groth16bn254.Proof{Ar: p.a, Bs: p.b, Krs: p.c}
}

func gnarkWitness(in *PublicInputs) fr.Vector {
	return fr.Vector(in.scalars())
}

package semaphore

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"worldid/internal/vectors"
)

// vectorCase is one vector paired with one key it must be judged under.
type vectorCase struct {
	name   string
	key    *VerifyingKey
	proof  *Proof // nil when parsing rejected it
	inputs PublicInputs
	want   bool
}

// vectorCases decodes every vector (from proof_packed, so padded compressed
// entries are decompressed) under every key for its depth.
func vectorCases(t *testing.T) []vectorCase {
	t.Helper()
	f := loadSemaphoreVectors(t)
	c := vectors.NewCounter(t, "semaphore_vectors.json")
	var cases []vectorCase
	for _, v := range f.Vectors {
		if v.ExpectValid == nil {
			t.Fatalf("%s: expect_valid missing or null", v.Name)
		}
		p, err := ProofFromPacked(eight(t, packedWords(t, v.ProofPacked)))
		if err != nil && *v.ExpectValid {
			t.Fatalf("%s: %v", v.Name, err)
		}
		in, err := v.publicInputs(t)
		if err != nil && *v.ExpectValid {
			t.Fatalf("%s: %v", v.Name, err)
		}
		for _, vk := range keysFor(t, &f, v.Depth) {
			cases = append(cases, vectorCase{v.Name, vk, p, in, *v.ExpectValid})
		}
		c.Inc()
	}
	return cases
}

// TestVectorsVerify: every real World ID proof verifies (including the
// depth-30 staging orb proof) and every negative vector fails.
func TestVectorsVerify(t *testing.T) {
	for _, vc := range vectorCases(t) {
		if got := Verify(vc.key, vc.proof, vc.inputs); got != vc.want {
			t.Errorf("%s: Verify = %v, want %v", vc.name, got, vc.want)
		}
	}
}

// TestVectorsVerifyBatch: the batch verifier gives the per-vector answer,
// with keys of several depths (and parsed copies of the same key) mixed.
func TestVectorsVerifyBatch(t *testing.T) {
	cases := vectorCases(t)
	items := make([]BatchItem, len(cases))
	for i, vc := range cases {
		items[i] = BatchItem{vc.key, vc.proof, vc.inputs}
	}
	got := VerifyBatch(items, rand.NewChaCha8([32]byte{1}))
	for i, vc := range cases {
		if got[i] != vc.want {
			t.Errorf("%s: VerifyBatch = %v, want %v", vc.name, got[i], vc.want)
		}
	}
}

// TestVerifyBatchMatchesVerify builds batches of valid and tampered proofs
// in varied positions and checks each answer against Verify.
func TestVerifyBatchMatchesVerify(t *testing.T) {
	var valid []vectorCase
	for _, vc := range vectorCases(t) {
		if vc.want {
			valid = append(valid, vc)
		}
	}
	if len(valid) == 0 {
		t.Skip("semaphore_vectors.json has no valid proof")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 2, 3, 7, 16} {
		items := make([]BatchItem, size)
		for i := range items {
			vc := valid[rng.IntN(len(valid))]
			items[i] = BatchItem{vc.key, vc.proof, vc.inputs}
			switch rng.IntN(4) {
			case 0: // wrong public input
				items[i].Inputs.SignalHash.Add(&items[i].Inputs.SignalHash, new(fr.Element).SetOne())
			case 1: // wrong key
				items[i].Key = otherDepthKey(t, vc.key)
			}
		}
		got := VerifyBatch(items, rand.NewChaCha8([32]byte{byte(size)}))
		for i, it := range items {
			if want := Verify(it.Key, it.Proof, it.Inputs); got[i] != want {
				t.Fatalf("size %d item %d: batch %v, single %v", size, i, got[i], want)
			}
		}
	}
}

func otherDepthKey(t *testing.T, vk *VerifyingKey) *VerifyingKey {
	t.Helper()
	other, err := PublishedKey(17)
	if err != nil {
		t.Fatal(err)
	}
	if other == vk {
		other, _ = PublishedKey(18)
	}
	return other
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

// TestVerifyBatchRandFailure: without randomness every item is still
// judged, one by one.
func TestVerifyBatchRandFailure(t *testing.T) {
	cases := vectorCases(t)
	items := make([]BatchItem, len(cases))
	for i, vc := range cases {
		items[i] = BatchItem{vc.key, vc.proof, vc.inputs}
	}
	got := VerifyBatch(items, failingReader{})
	for i, vc := range cases {
		if got[i] != vc.want {
			t.Errorf("%s: %v, want %v", vc.name, got[i], vc.want)
		}
	}
}

func TestVerifyRejectsZeroValues(t *testing.T) {
	vk, err := PublishedKey(30)
	if err != nil {
		t.Fatal(err)
	}
	p := randomProof(t)
	var in PublicInputs
	for name, ok := range map[string]bool{
		"nil key":    Verify(nil, p, in),
		"zero key":   Verify(new(VerifyingKey), p, in),
		"nil proof":  Verify(vk, nil, in),
		"zero proof": Verify(vk, new(Proof), in),
		"random":     Verify(vk, p, in),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
	got := VerifyBatch([]BatchItem{{nil, p, in}, {vk, nil, in}, {vk, new(Proof), in}, {new(VerifyingKey), p, in}}, rand.NewChaCha8([32]byte{}))
	for i, ok := range got {
		if ok {
			t.Errorf("batch item %d accepted", i)
		}
	}
}

// TestBatcher: concurrent callers each get Verify's answer, before and
// after Close.
func TestBatcher(t *testing.T) {
	cases := vectorCases(t)
	if len(cases) == 0 {
		t.Skip("semaphore_vectors.json has no proof")
	}
	b := NewBatcher(rand.NewChaCha8([32]byte{9}), BatcherOptions{MaxBatch: 8})
	const callers = 24
	got := make([]bool, callers)
	var wg sync.WaitGroup
	for i := range callers {
		vc := cases[i%len(cases)]
		wg.Go(func() { got[i] = b.Verify(vc.key, vc.proof, vc.inputs) })
	}
	wg.Wait()
	for i := range callers {
		if vc := cases[i%len(cases)]; got[i] != vc.want {
			t.Errorf("caller %d (%s): %v, want %v", i, vc.name, got[i], vc.want)
		}
	}
	b.Close()
	b.Close()
	for _, vc := range cases {
		if b.Verify(vc.key, vc.proof, vc.inputs) != vc.want {
			t.Errorf("%s after Close: wrong answer", vc.name)
		}
	}
}

// TestBatcherFallsBackToSingleChecks: after a run of invalid proofs the
// batcher verifies each proof alone in its caller, with the right answers,
// and batches again after a run of valid ones.
func TestBatcherFallsBackToSingleChecks(t *testing.T) {
	var valid *vectorCase
	for _, vc := range vectorCases(t) {
		if vc.want {
			valid = &vc
			break
		}
	}
	if valid == nil {
		t.Skip("semaphore_vectors.json has no valid proof")
	}
	var batches atomic.Int64
	b := NewBatcher(rand.NewChaCha8([32]byte{9}), BatcherOptions{MaxBatch: 8, ObserveBatch: func(int) { batches.Add(1) }})
	defer b.Close()
	wrongArity := valid.inputs.scalars()[:1] // refused without a pairing
	for i := 0; !b.Alone(); i++ {
		if i == 10 {
			t.Fatal("10 invalid proofs in a row did not switch to single checks")
		}
		if b.VerifyScalars(valid.key, valid.proof, wrongArity) {
			t.Fatal("an invalid proof was accepted")
		}
	}
	before := batches.Load()
	if !b.Verify(valid.key, valid.proof, valid.inputs) || b.VerifyScalars(valid.key, valid.proof, wrongArity) {
		t.Fatal("wrong answer while checking alone")
	}
	if batches.Load() != before {
		t.Error("a batch was formed while checking alone")
	}
	for i := 0; b.Alone(); i++ {
		if i == 200 {
			t.Fatal("200 valid proofs in a row did not resume batching")
		}
		if !b.Verify(valid.key, valid.proof, valid.inputs) {
			t.Fatal("a valid proof was refused")
		}
	}
	if !b.Verify(valid.key, valid.proof, valid.inputs) || batches.Load() == before {
		t.Error("batching did not resume")
	}
}

// TestGnarkAgrees: gnark's own verifier gives the vector answers too.
func TestGnarkAgrees(t *testing.T) {
	for _, vc := range vectorCases(t) {
		if vc.proof == nil {
			continue
		}
		err := groth16bn254.Verify(gnarkProof(vc.proof), gnarkKey(t, vc.key), gnarkWitness(&vc.inputs))
		if (err == nil) != vc.want {
			t.Errorf("%s: gnark err %v, want valid=%v", vc.name, err, vc.want)
		}
	}
}

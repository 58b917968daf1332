package prover

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"worldid/semaphore"
)

// Setup is slow (seconds at depth 30), so each test binary runs it once per
// depth and shares the keys.
var (
	setupOnce sync.Map // depth → func() (*ProvingKey, error)
)

func sharedKey(t testing.TB, depth int) *ProvingKey {
	t.Helper()
	f, _ := setupOnce.LoadOrStore(depth, sync.OnceValues(func() (*ProvingKey, error) {
		pk, _, err := Setup(depth)
		return pk, err
	}))
	pk, err := f.(func() (*ProvingKey, error))()
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

// proverFixture is a tree with a few identities and one member to prove.
type proverFixture struct {
	tree   *semaphore.Tree
	member semaphore.Identity
	path   semaphore.MerklePath
	signal fr.Element
	ext    fr.Element
}

func newProverFixture(t testing.TB, depth int) *proverFixture {
	t.Helper()
	rng := rand.NewChaCha8([32]byte{byte(depth)})
	tree, err := semaphore.NewTree(depth)
	if err != nil {
		t.Fatal(err)
	}
	var member semaphore.Identity
	for i := range 3 {
		id, err := semaphore.NewIdentity(rng)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := tree.Insert(id.Commitment()); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			member = id
		}
	}
	path, err := tree.Path(2) // index 2: path bits 0, 1, 0, …
	if err != nil {
		t.Fatal(err)
	}
	return &proverFixture{tree, member, path, semaphore.HashToField([]byte("my_signal")), semaphore.ExternalNullifier("app_staging_0123456789abcdef", "verify-human")}
}

// TestProveDepth30 proves at World ID's depth and checks the proof with our
// verifier, gnark's verifier, every encoding, the batch verifier next to a
// real World ID proof, and with each public input tampered.
func TestProveDepth30(t *testing.T) {
	pk := sharedKey(t, 30)
	fx := newProverFixture(t, 30)
	p, in, err := Prove(pk, fx.member, fx.path, fx.signal, fx.ext)
	if err != nil {
		t.Fatal(err)
	}
	if in.Root != fx.tree.Root() || in.NullifierHash != fx.member.NullifierHash(fx.ext) ||
		in.SignalHash != fx.signal || in.ExternalNullifier != fx.ext {
		t.Fatal("public inputs do not match the statement")
	}
	vk := pk.VerifyingKey()
	if !semaphore.Verify(vk, p, in) {
		t.Fatal("our verifier rejects the proof")
	}
	if err := groth16bn254.Verify(gnarkProof(p), &pk.gvk, gnarkWitness(&in)); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}

	// The World ID encodings carry the proof unchanged.
	c, err := p.Compress()
	if err != nil {
		t.Fatal(err)
	}
	q, err := semaphore.ProofFromPacked([8][32]byte{c[0], c[1], c[2], c[3]})
	if err != nil || !semaphore.Verify(vk, q, in) {
		t.Fatalf("padded compressed form: %v", err)
	}
	if q, err = semaphore.ParseProof(p.ABIHex()); err != nil || !semaphore.Verify(vk, q, in) {
		t.Fatalf("ABI form: %v", err)
	}

	one := new(fr.Element).SetOne()
	tampered := []semaphore.PublicInputs{in, in, in, in}
	tampered[0].Root.Add(&in.Root, one)
	tampered[1].NullifierHash.Add(&in.NullifierHash, one)
	tampered[2].SignalHash.Add(&in.SignalHash, one)
	tampered[3].ExternalNullifier.Add(&in.ExternalNullifier, one)
	for i, bad := range tampered {
		if semaphore.Verify(vk, p, bad) {
			t.Errorf("tampered input %d accepted", i)
		}
		if err := groth16bn254.Verify(gnarkProof(p), &pk.gvk, gnarkWitness(&bad)); err == nil {
			t.Errorf("gnark accepts tampered input %d", i)
		}
	}

	// One batch mixing our key and the published depth-30 key.
	world, ok := worldIDProof(t)
	if !ok {
		t.Skip("semaphore_vectors.json has no valid depth-30 proof to batch with")
	}
	items := []semaphore.BatchItem{
		{Key: vk, Proof: p, Inputs: in}, world,
		{Key: vk, Proof: p, Inputs: tampered[2]}, {Key: world.Key, Proof: p, Inputs: in},
	}
	got := semaphore.VerifyBatch(items, rand.NewChaCha8([32]byte{3}))
	if want := []bool{true, true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("VerifyBatch = %v, want %v", got, want)
	}
}

func TestProveRejects(t *testing.T) {
	pk := sharedKey(t, 2)
	fx := newProverFixture(t, 2)
	stranger := fx.member
	stranger.Trapdoor.SetUint64(99)
	short := fx.path
	short.Siblings = short.Siblings[:1]
	far := fx.path
	far.Index = 4
	negative := fx.path
	negative.Index = -1
	cases := map[string]struct {
		id   semaphore.Identity
		path semaphore.MerklePath
	}{
		"not the leaf":      {stranger, fx.path},
		"path too short":    {fx.member, short},
		"index beyond tree": {fx.member, far},
		"negative index":    {fx.member, negative},
	}
	for name, tc := range cases {
		if _, _, err := Prove(pk, tc.id, tc.path, fx.signal, fx.ext); err == nil {
			t.Errorf("%s: proved", name)
		}
	}
	for _, bad := range []*ProvingKey{nil, new(ProvingKey)} {
		if _, _, err := Prove(bad, fx.member, fx.path, fx.signal, fx.ext); err == nil {
			t.Error("proved without a key")
		}
	}
	// A wrong sibling gives a root outside the tree: the proof verifies
	// only against that root, so tree membership rests on the root check.
	wrong := fx.path
	wrong.Siblings = append([]fr.Element(nil), fx.path.Siblings...)
	wrong.Siblings[1].SetUint64(5)
	p, in, err := Prove(pk, fx.member, wrong, fx.signal, fx.ext)
	if err != nil || in.Root == fx.tree.Root() || !semaphore.Verify(pk.VerifyingKey(), p, in) {
		t.Fatalf("wrong sibling: %v", err)
	}
}

// TestProvingKeySerialization: a key read back proves for the same
// verifying key; damaged files are rejected.
func TestProvingKeySerialization(t *testing.T) {
	pk := sharedKey(t, 2)
	var buf bytes.Buffer
	n, err := pk.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d of %d bytes, %v", n, buf.Len(), err)
	}
	loaded, err := ReadProvingKey(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Depth() != 2 || !bytes.Equal(marshalKey(t, loaded.VerifyingKey()), marshalKey(t, pk.VerifyingKey())) {
		t.Fatal("loaded key differs")
	}
	fx := newProverFixture(t, 2)
	p, in, err := Prove(loaded, fx.member, fx.path, fx.signal, fx.ext)
	if err != nil || !semaphore.Verify(pk.VerifyingKey(), p, in) {
		t.Fatalf("proof from the loaded key: %v", err)
	}
	vkJSON, err := json.Marshal(pk.VerifyingKey())
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := semaphore.ParseVerifyingKey(vkJSON)
	if err != nil || !semaphore.Verify(parsed, p, in) {
		t.Fatalf("snarkjs JSON of the local key: %v", err)
	}

	good := buf.Bytes()
	damaged := map[string][]byte{
		"empty":       nil,
		"bad magic":   append([]byte("X"), good[1:]...),
		"depth 0":     withByte(good, len(provingKeyMagic), 0),
		"depth 33":    withByte(good, len(provingKeyMagic), 33),
		"other depth": withByte(good, len(provingKeyMagic), 3),
		"truncated":   good[:len(good)/2],
		"no pk":       good[:len(provingKeyMagic)+1+200],
	}
	for name, b := range damaged {
		if _, err := ReadProvingKey(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func withByte(b []byte, i int, v byte) []byte {
	c := append([]byte(nil), b...)
	c[i] = v
	return c
}

// TestCircuitSize pins the constraint count of the statement: 32 Poseidon
// hashes of width 3 (secret, nullifier hash, one per level) and one of width
// 2 (commitment) at three constraints per S-box, less the first S-box of
// each hash, which gnark folds because slot 0 starts as the constant 0;
// then per level a boolean and a mux, the signal square and the two
// equality checks (root, nullifier hash).
func TestCircuitSize(t *testing.T) {
	const depth = 30
	ccs, err := compile(depth)
	if err != nil {
		t.Fatal(err)
	}
	sboxes := func(t, rp int) int { return fullRounds*t + rp - 1 }
	want := 3*((depth+2)*sboxes(3, 57)+sboxes(2, 56)) + 2*depth + 1 + 2
	if ccs.GetNbConstraints() != want {
		t.Fatalf("%d constraints, want %d", ccs.GetNbConstraints(), want)
	}
	if ccs.GetNbPublicVariables() != 1+4 { // the constant one and the public inputs
		t.Fatalf("%d public variables", ccs.GetNbPublicVariables())
	}
}

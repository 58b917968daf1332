package prover

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/logger"

	"worldid/semaphore"
)

// gnark reports compile and prove progress through a global logger writing
// to stdout; a library must not write to its caller's stdout (it corrupts
// `worldid wallet prove` output), so it is silenced once here.
func init() { logger.Disable() }

// ProvingKey is the local prover's Groth16 proving key with its compiled
// circuit and verifying key. It is safe for concurrent use by Prove.
type ProvingKey struct {
	depth int
	ccs   *cs.R1CS
	pk    groth16bn254.ProvingKey
	gvk   groth16bn254.VerifyingKey
	vk    *semaphore.VerifyingKey
}

// compile builds the constraint system of the circuit for depth.
func compile(depth int) (*cs.R1CS, error) {
	if depth < 1 || depth > semaphore.MaxDepth {
		return nil, fmt.Errorf("prover: tree depth %d is not in 1..%d", depth, semaphore.MaxDepth)
	}
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, newCircuit(depth))
	if err != nil {
		return nil, err
	}
	return ccs.(*cs.R1CS), nil
}

// Setup compiles the circuit for a tree of the given depth and runs a
// single-party Groth16 setup. gnark draws the toxic waste from crypto/rand
// itself (it cannot be injected) and discards it; whoever runs Setup could
// forge proofs for this key, which is acceptable only for the operator's own
// deployment (doc/design.md §6).
func Setup(depth int) (*ProvingKey, *semaphore.VerifyingKey, error) {
	ccs, err := compile(depth)
	if err != nil {
		return nil, nil, err
	}
	pk := &ProvingKey{depth: depth, ccs: ccs}
	if err := groth16bn254.Setup(ccs, &pk.pk, &pk.gvk); err != nil {
		return nil, nil, err
	}
	if err := pk.deriveKey(); err != nil {
		return nil, nil, err
	}
	return pk, pk.vk, nil
}

// deriveKey builds semaphore's VerifyingKey from gnark's, checking every
// point.
func (pk *ProvingKey) deriveKey() error {
	g := &pk.gvk
	if len(g.CommitmentKeys) != 0 {
		return errors.New("prover: proving key uses commitments")
	}
	vk, err := semaphore.NewVerifyingKey(&g.G1.Alpha, &g.G2.Beta, &g.G2.Gamma, &g.G2.Delta, g.G1.K)
	if err != nil {
		return err
	}
	pk.vk = vk
	return nil
}

// Depth is the tree depth the key proves membership for.
func (pk *ProvingKey) Depth() int { return pk.depth }

// VerifyingKey is the key that verifies this prover's proofs.
func (pk *ProvingKey) VerifyingKey() *semaphore.VerifyingKey { return pk.vk }

// provingKeyMagic starts the serialized key; the byte after it is the depth.
const provingKeyMagic = "worldid/semaphore groth16 bn254 v1\n"

// WriteTo serializes the key: the magic line, the depth, then gnark's
// uncompressed encodings of the verifying and the proving key. The circuit
// is not stored; ReadProvingKey compiles it again.
func (pk *ProvingKey) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	n, err := bw.WriteString(provingKeyMagic)
	total := int64(n)
	if err != nil {
		return total, err
	}
	if err := bw.WriteByte(byte(pk.depth)); err != nil {
		return total, err
	}
	total++
	m, err := pk.gvk.WriteRawTo(bw)
	total += m
	if err != nil {
		return total, err
	}
	m, err = pk.pk.WriteRawTo(bw)
	total += m
	if err != nil {
		return total, err
	}
	return total, bw.Flush()
}

// ReadProvingKey reads a key written by WriteTo, checking every point and
// that the key fits the circuit compiled for its depth.
func ReadProvingKey(r io.Reader) (*ProvingKey, error) {
	br := bufio.NewReader(r)
	head := make([]byte, len(provingKeyMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil || !bytes.Equal(head[:len(provingKeyMagic)], []byte(provingKeyMagic)) {
		return nil, errors.New("prover: not a proving key file")
	}
	depth := int(head[len(provingKeyMagic)])
	ccs, err := compile(depth)
	if err != nil {
		return nil, err
	}
	pk := &ProvingKey{depth: depth, ccs: ccs}
	if _, err := pk.gvk.ReadFrom(br); err != nil {
		return nil, fmt.Errorf("prover: verifying key: %w", err)
	}
	if _, err := pk.pk.ReadFrom(br); err != nil {
		return nil, fmt.Errorf("prover: proving key: %w", err)
	}
	if err := pk.deriveKey(); err != nil {
		return nil, err
	}
	if err := pk.fitsCircuit(); err != nil {
		return nil, err
	}
	return pk, nil
}

// fitsCircuit compares the key's sizes with the compiled circuit, so a key
// made for another circuit fails here rather than inside Prove.
func (pk *ProvingKey) fitsCircuit() error {
	nbPrivate := pk.ccs.GetNbSecretVariables() + pk.ccs.GetNbInternalVariables()
	nbWires := nbPrivate + pk.ccs.GetNbPublicVariables()
	if len(pk.pk.InfinityA) != nbWires || len(pk.pk.G1.K) != nbPrivate ||
		pk.pk.Domain.Cardinality < uint64(pk.ccs.GetNbConstraints()) {
		return errors.New("prover: proving key does not match the circuit")
	}
	return nil
}

// Prove proves that id's commitment is the leaf of path, for the signal hash
// and external nullifier, and returns the proof with its public inputs
// (root, nullifier hash, signal hash, external nullifier). gnark draws the
// prover's blinding scalars from crypto/rand; they cannot be injected. The
// gnark prover is not constant time: use it where the identity's owner runs
// it, as the development wallet does.
func Prove(pk *ProvingKey, id semaphore.Identity, path semaphore.MerklePath, signalHash, externalNullifier fr.Element) (*semaphore.Proof, semaphore.PublicInputs, error) {
	if pk == nil || pk.ccs == nil {
		return nil, semaphore.PublicInputs{}, errors.New("prover: no proving key")
	}
	if len(path.Siblings) != pk.depth {
		return nil, semaphore.PublicInputs{}, fmt.Errorf("prover: path has %d levels, key is for depth %d", len(path.Siblings), pk.depth)
	}
	if path.Leaf != id.Commitment() {
		return nil, semaphore.PublicInputs{}, errors.New("prover: path leaf is not the identity commitment")
	}
	if path.Index < 0 || path.Index>>pk.depth != 0 {
		return nil, semaphore.PublicInputs{}, fmt.Errorf("prover: leaf index %d does not fit depth %d", path.Index, pk.depth)
	}
	in := semaphore.PublicInputs{
		Root:              path.Root(),
		NullifierHash:     id.NullifierHash(externalNullifier),
		SignalHash:        signalHash,
		ExternalNullifier: externalNullifier,
	}
	assignment := newCircuit(pk.depth)
	assignment.Root, assignment.NullifierHash = in.Root, in.NullifierHash
	assignment.SignalHash, assignment.ExternalNullifier = in.SignalHash, in.ExternalNullifier
	assignment.IdentityNullifier, assignment.IdentityTrapdoor = id.Nullifier, id.Trapdoor
	for i := range path.Siblings {
		assignment.PathIndices[i] = path.Index >> i & 1
		assignment.Siblings[i] = path.Siblings[i]
	}
	w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
	if err != nil {
		return nil, semaphore.PublicInputs{}, err
	}
	gp, err := groth16bn254.Prove(pk.ccs, &pk.pk, w)
	if err != nil {
		return nil, semaphore.PublicInputs{}, err
	}
	p, err := semaphore.NewProof(&gp.Ar, &gp.Bs, &gp.Krs)
	if err != nil {
		return nil, semaphore.PublicInputs{}, err
	}
	return p, in, nil
}

package semaphore

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
)

// nPublic is the number of public inputs of the Semaphore v3 circuit:
// [root, nullifierHash, signalHash, externalNullifier].
const nPublic = 4

// fixedLines are the precomputed Miller-loop lines of a fixed G2 argument.
type fixedLines = [2][len(bn254.LoopCounter)]bn254.LineEvaluationAff

// VerifyingKey is a Groth16 verifying key over BN254, with e(α, β) and the
// Miller-loop lines of β, γ and δ precomputed: for the Semaphore v3
// statement (4 public inputs) from ParseVerifyingKey and PublishedKey, or
// for another circuit's statement from ParseGroth16Key. Keys are immutable
// and safe for concurrent use; use them by pointer.
type VerifyingKey struct {
	alpha              bn254.G1Affine
	beta, gamma, delta bn254.G2Affine
	ic                 []bn254.G1Affine // IC[0] and one point per public input

	alphaBeta                         bn254.GT
	betaLines, gammaLines, deltaLines fixedLines

	tableOnce sync.Once
	table     []bn254.G1Affine // see icTable
}

// NewVerifyingKey makes a key from its points (a setup's output): α, β, γ,
// δ and one IC point per public input plus one. It checks every point
// (finite, on the curve, in the subgroup) and precomputes the fixed
// pairing data.
func NewVerifyingKey(alpha *bn254.G1Affine, beta, gamma, delta *bn254.G2Affine, ic []bn254.G1Affine) (*VerifyingKey, error) {
	if len(ic) < 2 {
		return nil, formatError("IC must have at least 2 points")
	}
	if err := checkG1(alpha, "vk_alpha_1"); err != nil {
		return nil, err
	}
	for _, g := range []struct {
		p    *bn254.G2Affine
		name string
	}{{beta, "vk_beta_2"}, {gamma, "vk_gamma_2"}, {delta, "vk_delta_2"}} {
		if err := checkG2(g.p, g.name); err != nil {
			return nil, err
		}
	}
	vk := &VerifyingKey{alpha: *alpha, beta: *beta, gamma: *gamma, delta: *delta, ic: make([]bn254.G1Affine, len(ic))}
	for i := range ic {
		if err := checkG1(&ic[i], fmt.Sprintf("IC[%d]", i)); err != nil {
			return nil, err
		}
		vk.ic[i] = ic[i]
	}
	ab, err := bn254.Pair([]bn254.G1Affine{*alpha}, []bn254.G2Affine{*beta})
	if err != nil {
		return nil, err
	}
	vk.alphaBeta = ab
	vk.betaLines = bn254.PrecomputeLines(*beta)
	vk.gammaLines = bn254.PrecomputeLines(*gamma)
	vk.deltaLines = bn254.PrecomputeLines(*delta)
	return vk, nil
}

// snarkjsKey is the snarkjs verification_key.json layout. Unknown members
// (vk_alphabeta_12, source, depth) are ignored.
type snarkjsKey struct {
	Protocol *string    `json:"protocol"`
	Curve    *string    `json:"curve"`
	NPublic  *int       `json:"nPublic"`
	Alpha    []string   `json:"vk_alpha_1"`
	Beta     [][]string `json:"vk_beta_2"`
	Gamma    [][]string `json:"vk_gamma_2"`
	Delta    [][]string `json:"vk_delta_2"`
	IC       [][]string `json:"IC"`
}

// ParseVerifyingKey reads a snarkjs verification_key.json (doc/crypto.md §g
// "Verifying key"): canonical decimal strings below q, G1 points as
// [x, y, "1"], G2 points as [[x.re, x.im], [y.re, y.im], ["1", "0"]], and
// exactly nPublic + 1 = 5 IC points.
func ParseVerifyingKey(jsonBytes []byte) (*VerifyingKey, error) {
	return ParseGroth16Key(jsonBytes, nPublic)
}

// ParseGroth16Key is ParseVerifyingKey for a statement of n public inputs
// (nPublic, if present, must be n, and IC must hold n + 1 points): the
// keys of circuits other than Semaphore v3, such as World ID 4.0's
// OPRF-nullifier circuit (15 inputs).
func ParseGroth16Key(jsonBytes []byte, n int) (*VerifyingKey, error) {
	var k snarkjsKey
	if err := json.Unmarshal(jsonBytes, &k); err != nil {
		return nil, formatError("verifying key is not snarkjs JSON: " + err.Error())
	}
	if err := k.checkHeader(n); err != nil {
		return nil, err
	}
	if len(k.IC) != n+1 {
		return nil, formatError(fmt.Sprintf("IC must have exactly %d points", n+1))
	}
	return k.key(k.Delta, k.IC)
}

// NPublic is the number of public inputs of the key's statement.
func (vk *VerifyingKey) NPublic() int { return len(vk.ic) - 1 }

// checkHeader rejects a key for another proof system, curve or statement.
func (k *snarkjsKey) checkHeader(n int) error {
	if k.Protocol != nil && *k.Protocol != "groth16" {
		return formatError(`verifying key protocol must be "groth16"`)
	}
	if k.Curve != nil && *k.Curve != "bn128" {
		return formatError(`verifying key curve must be "bn128"`)
	}
	if k.NPublic != nil && *k.NPublic != n {
		return formatError(fmt.Sprintf("verifying key must have nPublic = %d", n))
	}
	return nil
}

// key decodes the shared members with the given delta and IC.
func (k *snarkjsKey) key(delta [][]string, ic [][]string) (*VerifyingKey, error) {
	alpha, err := decodeG1(k.Alpha, "vk_alpha_1")
	if err != nil {
		return nil, err
	}
	g2 := make([]bn254.G2Affine, 3)
	for i, m := range []struct {
		v    [][]string
		name string
	}{{k.Beta, "vk_beta_2"}, {k.Gamma, "vk_gamma_2"}, {delta, "vk_delta_2"}} {
		if g2[i], err = decodeG2(m.v, m.name); err != nil {
			return nil, err
		}
	}
	icPts := make([]bn254.G1Affine, len(ic))
	for i := range ic {
		if icPts[i], err = decodeG1(ic[i], fmt.Sprintf("IC[%d]", i)); err != nil {
			return nil, err
		}
	}
	return NewVerifyingKey(&alpha, &g2[0], &g2[1], &g2[2], icPts)
}

// decodeG1 reads [x, y, "1"].
func decodeG1(v []string, name string) (bn254.G1Affine, error) {
	var p bn254.G1Affine
	if len(v) != 3 || v[2] != "1" {
		return p, formatError(name + ` must be [x, y, "1"]`)
	}
	if err := decodeFp(&p.X, v[0], name+".x"); err != nil {
		return p, err
	}
	return p, decodeFp(&p.Y, v[1], name+".y")
}

// decodeG2 reads [[x.re, x.im], [y.re, y.im], ["1", "0"]] (real part first,
// the reverse of the packed proof order).
func decodeG2(v [][]string, name string) (bn254.G2Affine, error) {
	var p bn254.G2Affine
	if len(v) != 3 || len(v[0]) != 2 || len(v[1]) != 2 || len(v[2]) != 2 || v[2][0] != "1" || v[2][1] != "0" {
		return p, formatError(name + ` must be [[x.re, x.im], [y.re, y.im], ["1", "0"]]`)
	}
	for _, c := range []struct {
		dst  *fp.Element
		src  string
		name string
	}{{&p.X.A0, v[0][0], ".x.re"}, {&p.X.A1, v[0][1], ".x.im"}, {&p.Y.A0, v[1][0], ".y.re"}, {&p.Y.A1, v[1][1], ".y.im"}} {
		if err := decodeFp(c.dst, c.src, name+c.name); err != nil {
			return p, err
		}
	}
	return p, nil
}

// decodeFp reads a canonical decimal (no sign, no leading zero) below q.
func decodeFp(dst *fp.Element, s, name string) error {
	if len(s) > 1 && s[0] == '0' {
		return formatError(name + " is not a canonical decimal")
	}
	w, err := decimalWord(s)
	if err != nil {
		return formatError(name + " is not a canonical decimal")
	}
	return setCoordinate(dst, w, name)
}

// MarshalJSON writes the key as a snarkjs verification_key.json, which
// ParseVerifyingKey reads back.
func (vk *VerifyingKey) MarshalJSON() ([]byte, error) {
	ic := make([][]string, len(vk.ic))
	for i := range vk.ic {
		ic[i] = encodeG1(&vk.ic[i])
	}
	return json.Marshal(struct {
		Protocol string     `json:"protocol"`
		Curve    string     `json:"curve"`
		NPublic  int        `json:"nPublic"`
		Alpha    []string   `json:"vk_alpha_1"`
		Beta     [][]string `json:"vk_beta_2"`
		Gamma    [][]string `json:"vk_gamma_2"`
		Delta    [][]string `json:"vk_delta_2"`
		IC       [][]string `json:"IC"`
	}{"groth16", "bn128", vk.NPublic(), encodeG1(&vk.alpha), encodeG2(&vk.beta), encodeG2(&vk.gamma), encodeG2(&vk.delta), ic})
}

func encodeG1(p *bn254.G1Affine) []string {
	return []string{p.X.Text(10), p.Y.Text(10), "1"}
}

func encodeG2(p *bn254.G2Affine) [][]string {
	return [][]string{{p.X.A0.Text(10), p.X.A1.Text(10)}, {p.Y.A0.Text(10), p.Y.A1.Text(10)}, {"1", "0"}}
}

// publishedKeysJSON is semaphore_v3_vks_all_depths.json: the Semaphore v3
// keys for depths 16–32 from semaphore-protocol/semaphore
// packages/proof/src/verificationKeys.json @ v3.15.2 (1ab15c1c); its
// "source" member records the full provenance.
//
//go:embed semaphore_v3_vks_all_depths.json
var publishedKeysJSON []byte

// allDepthsFile: the published keys share alpha, beta and gamma;
// vk_delta_2[k] and IC[k] belong to depth depths[k]. Deltas and ICs shadow
// the embedded single-key members of the same JSON names.
type allDepthsFile struct {
	snarkjsKey
	Depths []int        `json:"depths"`
	Deltas [][][]string `json:"vk_delta_2"`
	ICs    [][][]string `json:"IC"`
}

var publishedKeys = sync.OnceValues(func() (map[int]*VerifyingKey, error) {
	return parseAllDepths(publishedKeysJSON)
})

// parseAllDepths reads the all-depths file format.
func parseAllDepths(b []byte) (map[int]*VerifyingKey, error) {
	var f allDepthsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, formatError("published keys are not valid JSON: " + err.Error())
	}
	if err := f.checkHeader(nPublic); err != nil {
		return nil, err
	}
	if len(f.Deltas) != len(f.Depths) || len(f.ICs) != len(f.Depths) {
		return nil, formatError("published keys: depths, vk_delta_2 and IC differ in length")
	}
	keys := make(map[int]*VerifyingKey, len(f.Depths))
	for i, d := range f.Depths {
		if len(f.ICs[i]) != nPublic+1 {
			return nil, formatError(fmt.Sprintf("IC must have exactly %d points", nPublic+1))
		}
		vk, err := f.key(f.Deltas[i], f.ICs[i])
		if err != nil {
			return nil, err
		}
		keys[d] = vk
	}
	return keys, nil
}

// PublishedKey returns the published Semaphore v3 verifying key for a tree
// depth from 16 to 32 (World ID uses 30). The same pointer is returned on
// every call.
func PublishedKey(depth int) (*VerifyingKey, error) {
	keys, err := publishedKeys()
	if err != nil {
		return nil, fmt.Errorf("semaphore: embedded keys: %w", err)
	}
	vk, ok := keys[depth]
	if !ok {
		return nil, fmt.Errorf("semaphore: no published key for depth %d (16 to 32)", depth)
	}
	return vk, nil
}

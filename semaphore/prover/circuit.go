package prover

import (
	"math/big"
	"sync"

	"github.com/consensys/gnark/frontend"

	"worldid/poseidon"
)

// circuit is the Semaphore v3 statement (semaphore.circom v3.15.2, doc/crypto.md
// §g "Circuit relations"). The public fields come first and in this order,
// which gnark keeps: [root, nullifierHash, signalHash, externalNullifier].
type circuit struct {
	Root              frontend.Variable `gnark:",public"`
	NullifierHash     frontend.Variable `gnark:",public"`
	SignalHash        frontend.Variable `gnark:",public"`
	ExternalNullifier frontend.Variable `gnark:",public"`

	IdentityNullifier frontend.Variable
	IdentityTrapdoor  frontend.Variable
	PathIndices       []frontend.Variable
	Siblings          []frontend.Variable
}

// newCircuit returns an empty circuit for a tree of the given depth.
func newCircuit(depth int) *circuit {
	return &circuit{PathIndices: make([]frontend.Variable, depth), Siblings: make([]frontend.Variable, depth)}
}

// Define states the relations.
func (c *circuit) Define(api frontend.API) error {
	secret := poseidonGadget(api, c.IdentityNullifier, c.IdentityTrapdoor)
	node := poseidonGadget(api, secret) // the identity commitment, the leaf
	for i := range c.Siblings {
		// Path bit 0: the current node is the left input (MerkleTreeInclusionProof).
		bit := c.PathIndices[i]
		api.AssertIsBoolean(bit)
		d := api.Mul(bit, api.Sub(c.Siblings[i], node))
		node = poseidonGadget(api, api.Add(node, d), api.Sub(c.Siblings[i], d))
	}
	api.AssertIsEqual(node, c.Root)
	api.AssertIsEqual(poseidonGadget(api, c.ExternalNullifier, c.IdentityNullifier), c.NullifierHash)
	// The dummy square of semaphore.circom: it puts signalHash into a
	// constraint, so its IC point is not zero and the proof binds it.
	api.Mul(c.SignalHash, c.SignalHash)
	return nil
}

// gadgetParams are circomlib's constants (doc/crypto.md §c) as big.Int
// circuit constants, for the widths the circuit uses.
type gadgetParams struct {
	t, partialRounds int
	c                []*big.Int
	m                [][]*big.Int
}

const fullRounds = 8

var gadgetWidths = sync.OnceValue(func() map[int]*gadgetParams {
	out := make(map[int]*gadgetParams)
	for _, t := range []int{2, 3} {
		c, m := poseidon.V1Constants(t)
		p := &gadgetParams{t: t, partialRounds: poseidon.V1PartialRounds(t)}
		for i := range c {
			p.c = append(p.c, c[i].BigInt(new(big.Int)))
		}
		p.m = make([][]*big.Int, t)
		for i := range m {
			for j := range m[i] {
				p.m[i] = append(p.m[i], m[i][j].BigInt(new(big.Int)))
			}
		}
		out[t] = p
	}
	return out
})

// poseidonGadget is P(inputs...) for one or two inputs, round by round as in
// doc/crypto.md §c: add constants, x^5 S-box (every slot in full rounds, slot 0
// in partial rounds), then the MDS mix in every round.
func poseidonGadget(api frontend.API, inputs ...frontend.Variable) frontend.Variable {
	p := gadgetWidths()[len(inputs)+1]
	s := make([]frontend.Variable, p.t)
	s[0] = 0
	copy(s[1:], inputs)
	for r := range fullRounds + p.partialRounds {
		for i := range s {
			s[i] = api.Add(s[i], p.c[r*p.t+i])
		}
		if r < fullRounds/2 || r >= fullRounds/2+p.partialRounds {
			for i := range s {
				s[i] = sbox(api, s[i])
			}
		} else {
			s[0] = sbox(api, s[0])
		}
		s = mix(api, p.m, s)
	}
	return s[0]
}

// sbox is x^5 in three constraints.
func sbox(api frontend.API, x frontend.Variable) frontend.Variable {
	x2 := api.Mul(x, x)
	x4 := api.Mul(x2, x2)
	return api.Mul(x4, x)
}

// mix is M·s; multiplying by constants adds no constraint.
func mix(api frontend.API, m [][]*big.Int, s []frontend.Variable) []frontend.Variable {
	out := make([]frontend.Variable, len(s))
	for i := range m {
		terms := make([]frontend.Variable, len(s))
		for j := range s {
			terms[j] = api.Mul(m[i][j], s[j])
		}
		out[i] = api.Add(terms[0], terms[1], terms[2:]...)
	}
	return out
}

package poseidon

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
)

// Poseidon2 instance parameters (doc/crypto.md §b): x^5 S-box, 8 full rounds
// (4 before and 4 after the partial rounds) and R_P partial rounds.
const (
	p2FullRounds = 8
	p2HalfFull   = p2FullRounds / 2
	p2MaxWidth   = 16
)

// p2PartialRounds is R_P per width (doc/crypto.md §b table).
var p2PartialRounds = map[int]int{2: 56, 3: 56, 4: 56, 8: 57, 12: 57, 16: 57}

// p2Diagonals holds mat_internal_diag_m_1, the diagonal of M_I minus the
// all-ones matrix, for t ≥ 4. Unlike the round constants it cannot be
// regenerated with the Grain LFSR (doc/crypto.md §b). Provenance: TaceoLabs
// eddsa-babyjubjub poseidon2/src/bn254/t{4,8,12,16}.rs @ taceo-poseidon2-v0.2.1
// (4d3e9b43643f5821d1d5a73aebcdd5d697bfa84a), as copied in
// testdata/vectors/poseidon2_params.json; equal to gnark-crypto v0.20.1
// ecc/bn254/fr/poseidon2 and to HorizenLabs/poseidon2 for these widths.
// For t = 2 and 3 the diagonal is [1, 2] and [1, 1, 2].
var p2Diagonals = map[int][]string{
	4: {
		"0x10dc6e9c006ea38b04b1e03b4bd9490c0d03f98929ca1d7fb56821fd19d3b6e7",
		"0x0c28145b6a44df3e0149b3d0a30b3bb599df9756d4dd9b84a86b38cfb45a740b",
		"0x00544b8338791518b2c7645a50392798b21f75bb60e3596170067d00141cac15",
		"0x222c01175718386f2e2e82eb122789e352e105a3b8fa852613bc534433ee428b",
	},
	8: {
		"0x05bffb5e301d8c468c35e24eb2165b6b71725fb7ac9a48efe5ce041bdb05676d",
		"0x2aa7a81812688343fc6d78073312996d75f4c5505db0ed22af5ec0df7888cdc7",
		"0x2f5856fd71dab60d78cc3af15a89c1e4d61ba189849a4cea10acc1dd228faf00",
		"0x12299a260999ac95d271e184968cda40bd4358877a6dcf43d779251fffa61348",
		"0x1443aad4693d692a62a8e21f03d5643a123f0c8783a3d27c275f9d01089685fb",
		"0x21561b0204a44488082e31472f5885a3adc179bb278233aedc4b316369ec9937",
		"0x0c7cc2afa53f9898f30a69b294a4e24f6b2176e1ae0ca49b021792d55e34e97d",
		"0x2dd221096053de389fae88e7caa5c43ab55e22aeb758ee130d1246c1dff47b53",
	},
	12: {
		"0x20bb1e98f40bfe80b8e2f2c885ea13a2ea1f146ff61218c31075ad79dd8f4ffa",
		"0x1ed6abd05c8d678fa14c0c77d90f02fa1f8af249915fa6518f5f8d5e5c649fb2",
		"0x29107b18658b47d566f5063975d6bbc504382b81777e0796c7cb81f9b4e2cf46",
		"0x134ceec3ec069dd76fc9804ff029c2c27c5646986ff5dbeb17091d9c479ae923",
		"0x0ee2e4f4a3c23a1b71834d1a95ea402504b8d68fab6f74855c884df898c286f9",
		"0x0a469d3f3cb250181cc1e70c8227dace349b1c52fe8f7375744c8be5b80771e5",
		"0x0cfa92ab38d116f1cdc24ecc083ad1cb17a215de9968726a81970dde9cca70d6",
		"0x173df1a0df85f4533605f9578b1f58ccadf1f810e1fcca66808382efa84d684a",
		"0x2ced3bf3cf641c12a311b16b4107663388876a894e70c28c5498946c7fd8dcd4",
		"0x0912073a16428c84bfbb6170108adf6d168100ac5587c23c9405cf1f7ca8f13b",
		"0x250b310cd13063ee49c78680c1434853968f464d2fc99166c23a2e330dd71d54",
		"0x08b593b39852f7ad095a03a3eee546c388e02896d460454c6f1887c8d1c82e37",
	},
	16: {
		"0x269aaf7c0e0ae1a709c1b7cd137c366a3ef21c0ca7d9fb2b33b5a1ae235768e4",
		"0x30543ee04032614e317229edfaf3b27da10dd0792f35ecb2fb82a20c30eb1de3",
		"0x017416b13160b7d8d73ffd44efc75ce642f1d002e332ad4bd68469b8b83c5fc4",
		"0x09b103f438a43f1aabb6bc5d3490d3c443d773b966d902d36c81490614939eaf",
		"0x08f9e81ea21aa882da55bde42c830d261462c4489451ab181513614983fcdb30",
		"0x026d2cf77cf485777fb797f7c3bf17acafcb3679549ac98acb6e430eb53e4be5",
		"0x0652442bfa09590b710b3273f0d3c3de61defe08359aa8289b63f36eec1d7a7b",
		"0x0d6e46bf1e3725ff884f82602321db7d05c152349b4cd1117195e5f778f9c27b",
		"0x285754e689291a5f02e4a3c9b07359d3fc33a687a755f842cc45a037774d0542",
		"0x09a4884b8ce2a5dc8eee7e181526dd65567e70aa4cb62c3d128e7d94345a4dc4",
		"0x06af44dac4ca6cc95e692a20907607defa711623ca94934bea9d70bd555a594d",
		"0x0f8b7738afe6bd0d66cb58970bf7484be2c67a4519d1406f074ae165ab5d2ad5",
		"0x294dbe90e673accdcc6d7211bb0ac3aab902a88476ef7f7ac6fe3ba7b128c71a",
		"0x05c3f9cecad533b14bace3f9d7d7713ccf40c9429b4fce2cfa3aa4ee3d4ae039",
		"0x26cbff872ac3df2a3787878f24ee28b6ad4f1dcab41126b80f4038f40510d7e1",
		"0x1ba0b493c987b9c1424ede9239ba100dc005e717aa71ca6d6a605561e379bdce",
	},
}

// p2Params holds one width's constants. The round constants are the Grain
// LFSR stream of doc/crypto.md §c for (t, 8, R_P), drawn in round order: t per
// full round, one per partial round (doc/crypto.md §b "Optional self-check");
// the test cross-checks them against poseidon2_params.json.
type p2Params struct {
	ext   [p2FullRounds]fr.Vector // external_rc rows, t each
	inner []fr.Element            // internal_rc, R_P values
	diag  fr.Vector               // mat_internal_diag_m_1
	// choice is the path of the element-wise products, calibrated when
	// the width is first used (widths ≥ 8; narrower ones are always
	// Scalar, since gnark-crypto vectorizes only 8 elements at a time).
	choice field.Choice
}

func newP2Params(t int) *p2Params {
	rp := p2PartialRounds[t]
	g := newGrain(t, p2FullRounds, rp)
	p := &p2Params{inner: make([]fr.Element, rp)}
	fullRow := func() fr.Vector {
		row := make(fr.Vector, t)
		for i := range row {
			row[i] = g.roundConstant()
		}
		return row
	}
	for r := range p2HalfFull {
		p.ext[r] = fullRow()
	}
	for i := range p.inner {
		p.inner[i] = g.roundConstant()
	}
	for r := p2HalfFull; r < p2FullRounds; r++ {
		p.ext[r] = fullRow()
	}
	p.diag = diagonal(t)
	p.choice = field.Choice{Op: p2OpName(t), Path: field.Scalar}
	if t >= p2MinVectorWidth {
		p.choice = field.Calibrate(p.choice.Op, p.calibrationRun())
	}
	return p
}

// p2MinVectorWidth is the narrowest width whose products can use the
// Vector path.
const p2MinVectorWidth = 8

func p2OpName(t int) string { return fmt.Sprintf("poseidon2-t%d", t) }

// calibrationRun returns one permutation of a fixed state on a given path,
// for field.Calibrate.
func (p *p2Params) calibrationRun() func(field.Path) {
	s := make(fr.Vector, len(p.diag))
	for i := range s {
		s[i].SetUint64(uint64(i + 1))
	}
	return func(path field.Path) { p.permuteOn(s, path) }
}

// Paths returns the calibrated path of each width that can use the Vector
// path (8, 12 and 16), calibrating those not used yet; the server logs them
// at start-up. Each calibration takes a few milliseconds at most.
// field.ForcePath overrides them.
func Paths() []field.Choice {
	var out []field.Choice
	for t := p2MinVectorWidth; t <= p2MaxWidth; t += 4 {
		out = append(out, p2Instances[t]().choice)
	}
	return out
}

// diagonal returns mat_internal_diag_m_1 for width t.
func diagonal(t int) fr.Vector {
	d := make(fr.Vector, t)
	hex, ok := p2Diagonals[t]
	if !ok { // t = 2, 3: [1, ..., 1, 2]
		for i := range d {
			d[i].SetOne()
		}
		d[t-1].SetUint64(2)
		return d
	}
	for i, h := range hex {
		x, err := field.ParseStrict(h)
		if err != nil {
			panic("poseidon: malformed embedded diagonal: " + err.Error())
		}
		d[i] = x
	}
	return d
}

// p2Instances builds each width's constants on first use, so that importing
// the package costs nothing.
var p2Instances = func() (f [p2MaxWidth + 1]func() *p2Params) {
	for t := range p2PartialRounds {
		f[t] = sync.OnceValue(func() *p2Params { return newP2Params(t) })
	}
	return f
}()

package poseidon

import (
	"fmt"
	"math/big"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	gnarkp2 "github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2"

	"worldid/field"
	"worldid/internal/cryptotest"
	"worldid/internal/vectors"
)

type p2ParamsFile struct {
	SBoxDegree int `json:"sbox_degree"`
	Params     map[string]struct {
		T          int        `json:"t"`
		D          int        `json:"d"`
		RoundsF    int        `json:"rounds_f"`
		RoundsP    int        `json:"rounds_p"`
		Diag       []string   `json:"mat_internal_diag_m_1"`
		ExternalRC [][]string `json:"external_rc"`
		InternalRC []string   `json:"internal_rc"`
	} `json:"params"`
}

// permuteAny applies the exported permutation of width len(s).
func permuteAny(t testing.TB, s []fr.Element) {
	t.Helper()
	switch len(s) {
	case 2:
		Permute2((*[2]fr.Element)(s))
	case 3:
		Permute3((*[3]fr.Element)(s))
	case 4:
		Permute4((*[4]fr.Element)(s))
	case 8:
		Permute8((*[8]fr.Element)(s))
	case 12:
		Permute12((*[12]fr.Element)(s))
	case 16:
		Permute16((*[16]fr.Element)(s))
	default:
		t.Fatalf("no Poseidon2 permutation of width %d", len(s))
	}
}

func paramsFor(t testing.TB, width int) *p2Params {
	t.Helper()
	if _, ok := p2PartialRounds[width]; !ok {
		t.Fatalf("no Poseidon2 instance of width %d", width)
	}
	return p2Instances[width]()
}

// TestP2Params cross-checks the Grain-generated round constants and the
// embedded diagonals against poseidon2_params.json (doc/crypto.md §b).
func TestP2Params(t *testing.T) {
	var f p2ParamsFile
	vectors.Load(t, "poseidon2_params.json", &f)
	c := vectors.NewCounter(t, "poseidon2_params.json")
	if f.SBoxDegree != 5 {
		t.Errorf("sbox_degree = %d, want 5", f.SBoxDegree)
	}
	for name, v := range f.Params {
		t.Run(name, func(t *testing.T) {
			c.Inc()
			if name != "t"+strconv.Itoa(v.T) || v.D != 5 || v.RoundsF != p2FullRounds {
				t.Fatalf("entry %s: t=%d d=%d rounds_f=%d", name, v.T, v.D, v.RoundsF)
			}
			p := paramsFor(t, v.T)
			if len(p.inner) != v.RoundsP || len(v.InternalRC) != v.RoundsP {
				t.Fatalf("rounds_p = %d with %d internal_rc, implementation has %d", v.RoundsP, len(v.InternalRC), len(p.inner))
			}
			if len(v.ExternalRC) != p2FullRounds {
				t.Fatalf("%d external_rc rows, want %d", len(v.ExternalRC), p2FullRounds)
			}
			checkRow(t, "mat_internal_diag_m_1", p.diag, v.Diag)
			for r, row := range v.ExternalRC {
				checkRow(t, fmt.Sprintf("external_rc[%d]", r), p.ext[r], row)
			}
			checkRow(t, "internal_rc", p.inner, v.InternalRC)
		})
	}
}

func checkRow(t *testing.T, what string, got []fr.Element, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d values, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		wantFE(t, fmt.Sprintf("%s[%d]", what, i), got[i], w)
	}
}

type p2File struct {
	Permutation []struct {
		T            int      `json:"t"`
		Name         string   `json:"name"`
		Input        []string `json:"input"`
		InputReduced []string `json:"input_reduced_mod_p"`
		Output       []string `json:"output"`
	} `json:"permutation"`
	HashMode struct {
		DomainSeparators         []domainSeparator `json:"domain_separators"`
		VariableLengthSeparators []domainSeparator `json:"variable_length_domain_separators"`
		Vectors                  []struct {
			Name          string   `json:"name"`
			TagASCII      string   `json:"tag_ascii"`
			Inputs        []string `json:"inputs"`
			Width         int      `json:"width"`
			Output        string   `json:"output"`
			OutputDecimal string   `json:"output_decimal"`
		} `json:"vectors"`
	} `json:"hash_mode"`
	Compress struct {
		Vectors []struct {
			Name          string `json:"name"`
			Left          string `json:"left"`
			Right         string `json:"right"`
			Output        string `json:"output"`
			OutputDecimal string `json:"output_decimal"`
		} `json:"vectors"`
	} `json:"compress"`
	Sponge struct {
		Vectors []spongeVector `json:"vectors"`
	} `json:"sponge"`
}

type domainSeparator struct {
	Name                string  `json:"name"`
	TagASCII            string  `json:"tag_ascii"`
	TagHex              string  `json:"tag_hex"`
	FieldElementDecimal *string `json:"field_element_decimal"`
	FieldElement        *string `json:"field_element"`
	Width               int     `json:"width"`
	Arity               int     `json:"arity"`
}

const poseidon2Vectors = "poseidon2.json"

func loadPoseidon2(t *testing.T) (*p2File, *vectors.Counter) {
	var f p2File
	vectors.Load(t, poseidon2Vectors, &f)
	return &f, vectors.NewCounter(t, poseidon2Vectors)
}

func TestP2Permutation(t *testing.T) { cryptotest.ForEachPath(t, testP2Permutation) }

func testP2Permutation(t *testing.T) {
	f, c := loadPoseidon2(t)
	for _, v := range f.Permutation {
		t.Run(fmt.Sprintf("t%d/%s", v.T, v.Name), func(t *testing.T) {
			c.Inc()
			in := v.Input
			if v.InputReduced != nil { // vectors README: feed the reduced list when present
				checkReduced(t, v.Input, v.InputReduced)
				in = v.InputReduced
			}
			if len(in) != v.T || len(v.Output) != v.T {
				t.Fatalf("t=%d with %d inputs and %d outputs", v.T, len(in), len(v.Output))
			}
			s := decFEs(t, in)
			permuteAny(t, s)
			for i, want := range v.Output {
				wantDec(t, fmt.Sprintf("out[%d]", i), s[i], want)
			}
		})
	}
}

// checkReduced asserts that reduced is the literal list reduced mod p.
func checkReduced(t *testing.T, literal, reduced []string) {
	t.Helper()
	if len(literal) != len(reduced) {
		t.Fatalf("%d literals, %d reduced values", len(literal), len(reduced))
	}
	for i, l := range literal {
		v, ok := new(big.Int).SetString(l, 10)
		if !ok {
			t.Fatalf("input[%d] = %q is not decimal", i, l)
		}
		if got := v.Mod(v, fr.Modulus()).String(); got != reduced[i] {
			t.Errorf("input[%d] mod p = %s, input_reduced_mod_p says %s", i, got, reduced[i])
		}
	}
}

// TestP2AgainstGnark is the differential test of doc/crypto.md §b "Library
// note": gnark-crypto v0.21.0's ecc/bn254/fr/poseidon2 carries the reference
// constants for t = 4, 8, 12 and 16, so both must agree there.
func TestP2AgainstGnark(t *testing.T) { cryptotest.ForEachPath(t, testP2AgainstGnark) }

func testP2AgainstGnark(t *testing.T) {
	for _, width := range []int{4, 8, 12, 16} {
		g := gnarkp2.NewPermutation(width, p2FullRounds, len(paramsFor(t, width).inner))
		for range 20 {
			s := randomFEs(width)
			want := append([]fr.Element(nil), s...)
			if err := g.Permutation(want); err != nil {
				t.Fatal(err)
			}
			permuteAny(t, s)
			for i := range s {
				if !s[i].Equal(&want[i]) {
					t.Fatalf("t=%d slot %d: got %s, gnark %s", width, i, s[i].String(), want[i].String())
				}
			}
		}
	}
}

// TestP2GnarkDiffersAtSmallWidths pins the documented difference: for t = 2
// and 3 gnark-crypto uses constants of its own (doc/crypto.md §b).
func TestP2GnarkDiffersAtSmallWidths(t *testing.T) {
	for _, width := range []int{2, 3} {
		g := gnarkp2.NewPermutation(width, p2FullRounds, len(paramsFor(t, width).inner))
		s := make([]fr.Element, width)
		want := make([]fr.Element, width)
		if err := g.Permutation(want); err != nil {
			t.Fatal(err)
		}
		permuteAny(t, s)
		if s[0].Equal(&want[0]) {
			t.Errorf("t=%d: gnark-crypto now matches the reference; update doc.go", width)
		}
	}
}

func TestP2Linear(t *testing.T) { cryptotest.ForEachPath(t, testP2Linear) }

func testP2Linear(t *testing.T) {
	// M4 against the matrix of doc/crypto.md §b, column by column.
	m := [4][4]uint64{{5, 7, 1, 3}, {4, 6, 1, 1}, {1, 3, 5, 7}, {1, 1, 4, 6}}
	for j := range 4 {
		var x [4]fr.Element
		x[j].SetOne()
		m4(&x)
		for i := range 4 {
			if want := fr.NewElement(m[i][j]); !x[i].Equal(&want) {
				t.Errorf("M4[%d][%d] = %s, want %d", i, j, x[i].String(), m[i][j])
			}
		}
	}
}

// TestP2PathsAgree compares the scalar and vector paths on random states
// of every width that can use the vector path.
func TestP2PathsAgree(t *testing.T) {
	if !field.VectorAvailable() {
		t.Skip("no AVX-512 IFMA here (or a noavx/purego build): only the scalar path can run")
	}
	for _, width := range []int{8, 12, 16} {
		p := paramsFor(t, width)
		for range 20 {
			scalar := fr.Vector(randomFEs(width))
			vector := append(fr.Vector(nil), scalar...)
			p.permuteOn(scalar, field.Scalar)
			p.permuteOn(vector, field.Vector)
			if !scalar.Equal(vector) {
				t.Fatalf("width %d: the scalar and vector paths disagree", width)
			}
		}
	}
}

// TestPaths: every width that can vectorize reports a calibrated choice,
// measured exactly where the vector path can run, and ForcePath overrides
// it.
func TestPaths(t *testing.T) {
	choices := Paths()
	if len(choices) != 3 {
		t.Fatalf("Paths() = %d choices, want 3 (t = 8, 12, 16)", len(choices))
	}
	for i, c := range choices {
		if want := p2OpName(8 + 4*i); c.Op != want {
			t.Errorf("choice %d is for %q, want %q", i, c.Op, want)
		}
		if c.Path != field.Scalar && c.Path != field.Vector {
			t.Errorf("%s: path %v", c.Op, c.Path)
		}
		if c.Measured != field.VectorAvailable() {
			t.Errorf("%s: measured = %v, vector path available = %v", c.Op, c.Measured, field.VectorAvailable())
		}
		t.Logf("%s: %v (scalar %v, vector %v)", c.Op, c.Path, c.ScalarTime, c.VectorTime)
	}
	cryptotest.MustForce(t, field.Scalar)
	defer cryptotest.MustForce(t, field.Auto)
	if got := field.Effective(choices[0].Path); got != field.Scalar {
		t.Errorf("forced scalar, effective path %v", got)
	}
}

package semaphore

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
)

// proofForms renders packed words in every request encoding of doc/crypto.md §g.
func proofForms(t testing.TB, w [8][32]byte) map[string]string {
	t.Helper()
	hexItems := make([]any, 8)
	decItems := make([]any, 8)
	intItems := make([]any, 8)
	var abi strings.Builder
	abi.WriteString("0x")
	for i := range w {
		n := new(big.Int).SetBytes(w[i][:])
		hexItems[i] = "0x" + n.Text(16)
		decItems[i] = n.Text(10)
		intItems[i] = json.RawMessage(n.Text(10))
		abi.WriteString(strings.ToUpper(hex.EncodeToString(w[i][:])))
	}
	nest := func(items []any) string {
		b, err := json.Marshal([]any{
			items[0:2],
			[]any{items[2:4], items[4:6]},
			items[6:8],
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	nestedHex := nest(hexItems)
	escaped, err := json.Marshal(nestedHex)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"abi-upper":   abi.String(),
		"nested-hex":  nestedHex,
		"nested-dec":  nest(decItems),
		"nested-int":  nest(intItems),
		"escaped-hex": string(escaped),
	}
}

// assertCode fails unless err is an *Error with the given code.
func assertCode(t *testing.T, err error, code, what string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: want *Error with code %s, got %v", what, code, err)
	}
	if e.Code() != code {
		t.Fatalf("%s: code %s (rule %q), want %s", what, e.Code(), e.Rule(), code)
	}
}

// TestVectorEncodings decodes every vector in every encoding and checks that
// all forms agree and round-trip (doc/crypto.md §g "Proof encodings").
func TestVectorEncodings(t *testing.T) {
	f := loadSemaphoreVectors(t)
	c := vectors.NewCounter(t, "semaphore_vectors.json")
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			if v.ExpectValid == nil {
				t.Fatal("expect_valid missing or null")
			}
			packed := eight(t, packedWords(t, v.ProofPacked))
			ref, refErr := ProofFromPacked(packed)
			if refErr != nil {
				if *v.ExpectValid {
					t.Fatalf("valid vector rejected: %v", refErr)
				}
				assertCode(t, refErr, CodeInvalidProof, "negative vector")
			}
			for form, s := range proofForms(t, packed) {
				p, err := ParseProof(s)
				if (err == nil) != (refErr == nil) {
					t.Fatalf("%s: err %v, packed err %v", form, err, refErr)
				}
				if err == nil && p.Packed() != ref.Packed() {
					t.Fatalf("%s decodes to a different proof", form)
				}
			}
			if v.ProofABIHex != nil {
				p, err := ParseProof(*v.ProofABIHex)
				if (err == nil) != (refErr == nil) {
					t.Fatalf("proof_abi_hex: err %v, packed err %v", err, refErr)
				}
				if err == nil && p.ABIHex() != strings.ToLower(*v.ProofABIHex) {
					t.Fatal("ABIHex does not reproduce proof_abi_hex")
				}
			}
			if refErr == nil && !isPadded(packed) && ref.Packed() != packed {
				t.Fatal("Packed does not reproduce proof_packed")
			}
			if v.ProofCompressed != nil && refErr == nil {
				want := four(t, packedWords(t, v.ProofCompressed))
				got, err := ref.Compress()
				if err != nil || got != want {
					t.Fatalf("Compress = %x, %v; want proof_compressed", got, err)
				}
				d, err := DecompressProof(want)
				if err != nil || d.Packed() != ref.Packed() {
					t.Fatalf("DecompressProof(proof_compressed): %v", err)
				}
			}
			c.Inc()
		})
	}
}

func isPadded(w [8][32]byte) bool {
	return w[4] == word{} && w[5] == word{} && w[6] == word{} && w[7] == word{}
}

// TestCompressionKAT checks both directions of the semaphore-rs KAT.
func TestCompressionKAT(t *testing.T) {
	f := loadSemaphoreVectors(t)
	c := vectors.NewCounter(t, "semaphore_vectors.json")
	flat := eight(t, decimalWords(t, f.CompressionKAT.Flat))
	compressed := four(t, decimalWords(t, f.CompressionKAT.Compressed))
	p, err := ProofFromPacked(flat)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Compress()
	if err != nil || got != compressed {
		t.Fatalf("Compress = %x, %v", got, err)
	}
	d, err := DecompressProof(compressed)
	if err != nil || d.Packed() != flat {
		t.Fatalf("DecompressProof: %v", err)
	}
	padded := [8][32]byte{compressed[0], compressed[1], compressed[2], compressed[3]}
	if q, err := ParseProof(proofForms(t, padded)["nested-dec"]); err != nil || q.Packed() != flat {
		t.Fatalf("padded nested decimal form: %v", err)
	}
	c.Inc()
}

// randomProof builds structurally valid points (not a valid SNARK proof).
func randomProof(t testing.TB) *Proof {
	t.Helper()
	var k [3]fr.Element
	var s [3]big.Int
	for i := range k {
		if _, err := k[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
		k[i].BigInt(&s[i])
	}
	var a, c bn254.G1Affine
	var b bn254.G2Affine
	a.ScalarMultiplicationBase(&s[0])
	b.ScalarMultiplicationBase(&s[1])
	c.ScalarMultiplicationBase(&s[2])
	p, err := NewProof(&a, &b, &c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompressRoundTrip(t *testing.T) {
	for range 64 {
		p := randomProof(t)
		cw, err := p.Compress()
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecompressProof(cw)
		if err != nil || d.Packed() != p.Packed() {
			t.Fatalf("round trip: %v", err)
		}
		padded := [8][32]byte{cw[0], cw[1], cw[2], cw[3]}
		viaPacked, err := ProofFromPacked(padded)
		if err != nil || viaPacked.Packed() != p.Packed() {
			t.Fatalf("padded round trip: %v", err)
		}
		abi, err := ParseProof(p.ABIHex())
		if err != nil || abi.Packed() != p.Packed() {
			t.Fatalf("ABI round trip: %v", err)
		}
	}
	if _, err := new(Proof).Compress(); err == nil {
		t.Fatal("zero Proof compressed")
	}
}

// TestTwistConstants pins 27/82 and 3/82 mod q to doc/crypto.md §g.
func TestTwistConstants(t *testing.T) {
	want0, _ := new(big.Int).SetString("19485874751759354771024239261021720505790618469301721065564631296452457478373", 10)
	want1, _ := new(big.Int).SetString("21621313080719284060999498358119991246151234191964923374119659383734918571893", 10)
	var neg fp.Element
	neg.Neg(&twistB.A1)
	if twistB.A0.BigInt(new(big.Int)).Cmp(want0) != 0 || neg.BigInt(new(big.Int)).Cmp(want1) != 0 {
		t.Fatalf("twist constant %v", twistB)
	}
}

// TestSqrtIsSpecRoot pins sqrtFp to a^((q+1)/4), the root that decides the
// compression flags.
func TestSqrtIsSpecRoot(t *testing.T) {
	e := new(big.Int).Add(fp.Modulus(), big.NewInt(1))
	e.Rsh(e, 2)
	for i := range 32 {
		var a, want fp.Element
		a.SetUint64(uint64(i))
		want.Exp(a, e)
		got, ok := sqrtFp(&a)
		var sq fp.Element
		sq.Square(&want)
		if ok != sq.Equal(&a) || (ok && !got.Equal(&want)) {
			t.Fatalf("sqrt(%d) = %v, %v; want %v", i, got, ok, want)
		}
	}
}

// validPackedHex returns a valid proof's words as 64-digit hex strings.
func validPackedHex(t *testing.T) [8]string {
	t.Helper()
	w := randomProof(t).Packed()
	var h [8]string
	for i := range w {
		h[i] = hex.EncodeToString(w[i][:])
	}
	return h
}

func TestParseProofRejectsFormat(t *testing.T) {
	h := validPackedHex(t)
	abi := "0x" + strings.Join(h[:], "")
	nested := func(items ...string) string {
		return "[[" + items[0] + "," + items[1] + "],[[" + items[2] + "," + items[3] + "],[" + items[4] + "," + items[5] + "]],[" + items[6] + "," + items[7] + "]]"
	}
	ok := make([]string, 8)
	for i := range h {
		ok[i] = `"0x` + h[i] + `"`
	}
	with := func(i int, item string) string {
		items := append([]string(nil), ok...)
		items[i] = item
		return nested(items...)
	}
	cases := map[string]string{
		"empty":               "",
		"short abi":           abi[:len(abi)-1],
		"long abi":            abi + "0",
		"abi 0X":              "0X" + abi[2:],
		"abi no prefix":       abi[2:] + "00",
		"abi non-hex":         abi[:len(abi)-1] + "g",
		"abi space":           " " + abi[1:],
		"nested shape 2":      "[[" + ok[0] + "," + ok[1] + "],[[" + ok[2] + "," + ok[3] + "],[" + ok[4] + "," + ok[5] + "]]]",
		"nested shape 3 in a": "[[" + ok[0] + "," + ok[1] + "," + ok[1] + "],[[" + ok[2] + "," + ok[3] + "],[" + ok[4] + "," + ok[5] + "]],[" + ok[6] + "," + ok[7] + "]]",
		"nested flat b":       "[[" + ok[0] + "," + ok[1] + "],[" + ok[2] + "," + ok[3] + "],[" + ok[6] + "," + ok[7] + "]]",
		"nested object":       `[{"a":1}]`,
		"nested bad json":     "[[1,2],[[3,4],[5,6]],[7,8]",
		"nested trailing":     nested(ok...) + "[1]",
		"item float":          with(0, "1.5"),
		"item negative":       with(0, "-1"),
		"item exponent":       with(0, "1e3"),
		"item bool":           with(0, "true"),
		"item null":           with(0, "null"),
		"item array":          with(0, "[1]"),
		"item empty hex":      with(0, `"0x"`),
		"item 65 hex":         with(0, `"0x0`+h[0]+`"`),
		"item 0X":             with(0, `"0X`+h[0]+`"`),
		"item bad hex":        with(0, `"0xzz"`),
		"item signed dec":     with(0, `"+1"`),
		"item empty string":   with(0, `""`),
		"item dec >= 2^256":   with(0, `"115792089237316195423570985008687907853269984665640564039457584007913129639936"`),
		"item 79 digits":      with(0, `"0`+strings.Repeat("1", 78)+`"`),
		"item int >= 2^256":   with(0, "115792089237316195423570985008687907853269984665640564039457584007913129639936"),
		"item hex spaces":     with(0, `" 0x1"`),
		"escaped unquoted":    strings.ReplaceAll(nested(ok...), `"`, `\"`),
		"escaped bad escape":  `"[[\"0x1\q"`,
		"escaped one quote":   `"[[\"0x1\"`,
	}
	for name, s := range cases {
		if _, err := ParseProof(s); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			assertCode(t, err, CodeInvalidFormat, name)
		}
	}
}

func TestParseProofRejectsInvalidPoints(t *testing.T) {
	h := validPackedHex(t)
	q := hex.EncodeToString(fp.Modulus().FillBytes(make([]byte, 32)))
	zero := strings.Repeat("0", 64)
	bump := func(s string) string { // +1 to the last digit: off the curve
		n, _ := new(big.Int).SetString(s, 16)
		return hex.EncodeToString(n.Add(n, big.NewInt(1)).FillBytes(make([]byte, 32)))
	}
	with := func(repl map[int]string) string {
		w := h
		for i, s := range repl {
			w[i] = s
		}
		return "0x" + strings.Join(w[:], "")
	}
	cases := map[string]string{
		"A.x = q":      with(map[int]string{0: q}),
		"B.x.im = q":   with(map[int]string{2: q}),
		"B.y.re = q":   with(map[int]string{5: q}),
		"C.y = q":      with(map[int]string{7: q}),
		"A infinity":   with(map[int]string{0: zero, 1: zero}),
		"C infinity":   with(map[int]string{6: zero, 7: zero}),
		"B infinity":   with(map[int]string{2: zero, 3: zero, 4: zero, 5: zero}),
		"A off curve":  with(map[int]string{1: bump(h[1])}),
		"C off curve":  with(map[int]string{7: bump(h[7])}),
		"B off twist":  with(map[int]string{5: bump(h[5])}),
		"B swapped":    with(map[int]string{2: h[3], 3: h[2], 4: h[5], 5: h[4]}),
		"B subgroup":   with(outsideSubgroup(t)),
		"cA = 0":       with(map[int]string{0: zero, 4: zero, 5: zero, 6: zero, 7: zero}),
		"cA x >= q":    with(map[int]string{0: hex.EncodeToString(new(big.Int).Lsh(fp.Modulus(), 1).FillBytes(make([]byte, 32))), 4: zero, 5: zero, 6: zero, 7: zero}),
		"compressed B": with(map[int]string{2: strings.Repeat("f", 64), 4: zero, 5: zero, 6: zero, 7: zero}),
	}
	for name, s := range cases {
		if _, err := ParseProof(s); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			assertCode(t, err, CodeInvalidProof, name)
		}
	}
}

// outsideSubgroup returns B words of a twist point outside the order-r
// subgroup: decompress candidates until one is on the twist but not in G2.
func outsideSubgroup(t *testing.T) map[int]string {
	t.Helper()
	for i := uint64(1); i < 1000; i++ {
		var x bn254.E2
		x.A0.SetUint64(i)
		a := twistRHS(&x)
		d, ok := twistNormRoot(&a)
		if !ok {
			continue
		}
		y, ok := g2Y(&a, d, false)
		if !ok {
			continue
		}
		p := bn254.G2Affine{X: x, Y: y}
		if !p.IsOnCurve() || p.IsInSubGroup() {
			continue
		}
		enc := func(e fp.Element) string { b := e.Bytes(); return hex.EncodeToString(b[:]) }
		return map[int]string{2: enc(x.A1), 3: enc(x.A0), 4: enc(y.A1), 5: enc(y.A0)}
	}
	t.Fatal("no twist point outside the subgroup found")
	return nil
}

func TestDecompressRejects(t *testing.T) {
	p := randomProof(t)
	good, err := p.Compress()
	if err != nil {
		t.Fatal(err)
	}
	var big254 word
	big254[0] = 0xff
	cases := map[string]func(c *[4][32]byte){
		"cA zero":         func(c *[4][32]byte) { c[0] = word{} },
		"cC zero":         func(c *[4][32]byte) { c[3] = word{} },
		"cA x >= q":       func(c *[4][32]byte) { c[0] = big254 },
		"B.x.re >= q":     func(c *[4][32]byte) { c[2] = big254 },
		"B.x.im >= q":     func(c *[4][32]byte) { c[1] = big254 },
		"B.x.im flipped":  func(c *[4][32]byte) { c[1][31] ^= 1 },
		"cC not on curve": func(c *[4][32]byte) { c[3] = shiftLeft(nonResidueX(t), 1) },
		"B outside G2":    func(c *[4][32]byte) { compressedOutside(t, c) },
		// Exactly one of (a0 ± d)/2 is a square when a1 ≠ 0 (−1 is not a
		// square mod q), so the other hint never decodes.
		"B hint flipped": func(c *[4][32]byte) { c[2][31] ^= 2 },
	}
	for name, mutate := range cases {
		c := good
		mutate(&c)
		if _, err := DecompressProof(c); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			assertCode(t, err, CodeInvalidProof, name)
		}
	}
}

// nonResidueX returns an x for which x³ + 3 has no square root.
func nonResidueX(t *testing.T) word {
	t.Helper()
	for i := uint64(1); ; i++ {
		var x fp.Element
		x.SetUint64(i)
		if _, ok := g1Y(&x); !ok {
			return x.Bytes()
		}
	}
}

// compressedOutside stores a compressed twist point outside G2 in c.
func compressedOutside(t *testing.T, c *[4][32]byte) {
	t.Helper()
	w := outsideSubgroup(t)
	var b bn254.G2Affine
	for i, dst := range map[int]*fp.Element{2: &b.X.A1, 3: &b.X.A0, 4: &b.Y.A1, 5: &b.Y.A0} {
		raw, _ := hex.DecodeString(w[i])
		dst.SetBytes(raw)
	}
	xIm, cBre, err := compressG2(&b)
	if err != nil {
		t.Fatal(err)
	}
	c[1], c[2] = xIm, cBre
}

func TestNewPublicInputsRange(t *testing.T) {
	r := word(fr.Modulus().FillBytes(make([]byte, 32)))
	rMinus1 := r
	rMinus1[31]--
	var zero word
	if _, err := NewPublicInputs(rMinus1, rMinus1, rMinus1, rMinus1); err != nil {
		t.Fatalf("r−1 rejected: %v", err)
	}
	for i := range 4 {
		in := [4]word{zero, zero, zero, zero}
		in[i] = r
		_, err := NewPublicInputs(in[0], in[1], in[2], in[3])
		assertCode(t, err, CodeInvalidProof, "input = r")
	}
}

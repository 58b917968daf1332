package oprfproof

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
)

func load(t *testing.T) *vectors.WorldID4 {
	t.Helper()
	f := vectors.LoadWorldID4(t)
	for _, b := range []*bool{f.VerifierCompressed.ExpectValid, f.WorldIDVerifier.Uniqueness.ExpectValid,
		f.WorldIDVerifier.Session.ExpectValid, f.WorldIDVerifier.BrokenProof.ExpectValid} {
		if b == nil {
			t.Fatal("world_id_4.json: an expect_valid is missing")
		}
	}
	return f
}

func word(t *testing.T, s string) [32]byte {
	t.Helper()
	w, err := ParseWord(s)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func fe(t *testing.T, s string) fr.Element {
	t.Helper()
	w := word(t, s)
	var e fr.Element
	if err := e.SetBytesCanonical(w[:]); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return e
}

func point(t *testing.T, p [2]string) Point { return Point{fe(t, p[0]), fe(t, p[1])} }

func proof(t *testing.T, words [5]string) *Proof {
	t.Helper()
	var w [5][32]byte
	for i, s := range words {
		w[i] = word(t, s)
	}
	p, err := ParseProof(w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rpID(t *testing.T, s string) uint64 {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(s, "rp_"))
	if err != nil || len(b) != 8 {
		t.Fatalf("rp_id %q", s)
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// TestVerifierVector: Verifier.t.sol's proof verifies with its 15 inputs
// as given, and fails when any one input changes.
func TestVerifierVector(t *testing.T) {
	f := load(t)
	v := f.VerifierCompressed
	var w [5][32]byte
	for i, s := range v.Proof {
		w[i] = word(t, s)
	}
	w[4] = word(t, v.PublicInputs[6]) // the root is input 6
	p, err := ParseProof(w)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := Key()
	if err != nil {
		t.Fatal(err)
	}
	in := make([]fr.Element, len(v.PublicInputs))
	for i, s := range v.PublicInputs {
		in[i] = fe(t, s)
	}
	if got := verifyInputs(vk, p, in); got != *v.ExpectValid {
		t.Fatalf("verify = %v, want %v", got, *v.ExpectValid)
	}
	for i := range in {
		tampered := append([]fr.Element(nil), in...)
		tampered[i].Add(&tampered[i], new(fr.Element).SetOne())
		if verifyInputs(vk, p, tampered) {
			t.Errorf("input %d + 1 still verifies", i)
		}
	}
	// The same statement through Statement.Inputs, the assembly the
	// endpoint uses.
	s := Statement{Nullifier: in[0], IssuerSchemaID: 1, IssuerKey: Point{in[2], in[3]}, ExpiresAtMin: in[4].Uint64(),
		GenesisIssuedAtMin: in[5], Root: in[6], RPID: in[8].Uint64(), Action: in[9], OPRFKey: Point{in[10], in[11]},
		SignalHash: in[12], Nonce: in[13], SessionID: in[14]}
	if !Verify(p, &s) {
		t.Fatal("Statement assembly does not reproduce the vector's inputs")
	}
}

// TestWorldIDVerifierVectors: the uniqueness and session proofs of
// WorldIDVerifierTest.t.sol verify with the anchors its mocks return, and
// every single-field change of the statement, and the broken proof, fail.
func TestWorldIDVerifierVectors(t *testing.T) {
	f := load(t)
	a := f.WorldIDVerifier.Anchors
	if a.TreeDepth != TreeDepth {
		t.Fatalf("tree depth %d, package %d", a.TreeDepth, TreeDepth)
	}
	u := f.WorldIDVerifier.Uniqueness
	uniq := Statement{Nullifier: fe(t, u.Nullifier), IssuerSchemaID: a.IssuerSchemaID, IssuerKey: point(t, a.IssuerPubkey),
		ExpiresAtMin: u.ExpiresAtMin, Root: fe(t, a.Root), RPID: rpID(t, a.RPID), Action: fe(t, u.Action),
		OPRFKey: point(t, a.OPRFPubkey), SignalHash: fe(t, u.SignalHash), Nonce: fe(t, u.Nonce)}
	s := f.WorldIDVerifier.Session
	session := Statement{Nullifier: fe(t, s.SessionNullifier[0]), IssuerSchemaID: a.IssuerSchemaID, IssuerKey: point(t, a.IssuerPubkey),
		ExpiresAtMin: s.ExpiresAtMin, Root: fe(t, a.Root), RPID: rpID(t, a.RPID), Action: fe(t, s.SessionNullifier[1]),
		OPRFKey: point(t, a.OPRFPubkey), SignalHash: fe(t, s.SignalHash), Nonce: fe(t, s.Nonce), SessionID: fe(t, s.SessionID)}
	c := vectors.NewCounter(t, "world_id_4.json")
	for _, tc := range []struct {
		name   string
		st     Statement
		p      *Proof
		expect bool
	}{{"uniqueness", uniq, proof(t, u.Proof), *u.ExpectValid}, {"session", session, proof(t, s.Proof), *s.ExpectValid}} {
		if got := Verify(tc.p, &tc.st); got != tc.expect {
			t.Fatalf("%s: verify = %v, want %v", tc.name, got, tc.expect)
		}
		c.Inc()
		one := new(fr.Element).SetOne()
		other := point(t, a.OtherPubkey)
		for _, m := range []struct {
			field  string
			mutate func(*Statement)
		}{
			{"nullifier", func(s *Statement) { s.Nullifier.Add(&s.Nullifier, one) }},
			{"issuer_schema_id", func(s *Statement) { s.IssuerSchemaID++ }},
			{"issuer key", func(s *Statement) { s.IssuerKey = other }},
			{"expires_at_min", func(s *Statement) { s.ExpiresAtMin++ }},
			{"genesis", func(s *Statement) { s.GenesisIssuedAtMin.SetOne() }},
			{"rp_id", func(s *Statement) { s.RPID = 2 }},
			{"action", func(s *Statement) { s.Action.Add(&s.Action, one) }},
			{"OPRF key", func(s *Statement) { s.OPRFKey = other }},
			{"signal", func(s *Statement) { s.SignalHash.Add(&s.SignalHash, one) }},
			{"nonce", func(s *Statement) { s.Nonce.Add(&s.Nonce, one) }},
			{"session id", func(s *Statement) { s.SessionID.Add(&s.SessionID, one) }},
		} {
			st := tc.st
			m.mutate(&st)
			if Verify(tc.p, &st) {
				t.Errorf("%s: changed %s still verifies", tc.name, m.field)
			}
		}
		// A root other than the proof's own is refused before any pairing.
		st := tc.st
		st.Root.SetUint64(2)
		if Verify(tc.p, &st) {
			t.Errorf("%s: another root verifies", tc.name)
		}
	}
	var broken [5][32]byte
	for i, s := range f.WorldIDVerifier.BrokenProof.ProofWords {
		broken[i] = word(t, s)
	}
	broken[4] = word(t, a.Root)
	if p, err := ParseProof(broken); err == nil && Verify(p, &uniq) != *f.WorldIDVerifier.BrokenProof.ExpectValid {
		t.Fatal("broken proof verifies")
	}
	c.Inc()
}

// TestParseProofRejects: a root ≥ r is a format error; a word that is
// not a curve point is a point error; every proof word is tampered once.
func TestParseProofRejects(t *testing.T) {
	f := load(t)
	u := f.WorldIDVerifier.Uniqueness
	var w [5][32]byte
	for i, s := range u.Proof {
		w[i] = word(t, s)
	}
	r := word(t, "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001")
	bad := w
	bad[4] = r
	if _, err := ParseProof(bad); !errors.Is(err, ErrProofFormat) {
		t.Fatalf("root = r: %v", err)
	}
	a := f.WorldIDVerifier.Anchors
	st := Statement{Nullifier: fe(t, u.Nullifier), IssuerSchemaID: a.IssuerSchemaID, IssuerKey: point(t, a.IssuerPubkey),
		ExpiresAtMin: u.ExpiresAtMin, Root: fe(t, a.Root), RPID: rpID(t, a.RPID), Action: fe(t, u.Action),
		OPRFKey: point(t, a.OPRFPubkey), SignalHash: fe(t, u.SignalHash), Nonce: fe(t, u.Nonce)}
	for i := range 4 {
		bad := w
		bad[i][31] ^= 4 // keep the flag bits, change x
		p, err := ParseProof(bad)
		if err == nil && Verify(p, &st) {
			t.Errorf("word %d tampered still verifies", i)
		}
		if err != nil && !errors.Is(err, ErrProofPoints) {
			t.Errorf("word %d: %v", i, err)
		}
	}
}

func TestParseWord(t *testing.T) {
	max := "115792089237316195423570985008687907853269984665640564039457584007913129639935" // 2^256 − 1
	for _, ok := range []string{"0", "1", "0x0", "0x00ff", "0xFF", "0X1f", "0X00", max, "0x" + strings.Repeat("f", 64), "0x" + strings.Repeat("0", 70) + "1"} {
		if _, err := ParseWord(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "0x", "-1", "+1", " 1", "1 ", "1e3", "0x" + strings.Repeat("f", 65), "0xg", "0X", "x1", "0b1", "0o7",
		"115792089237316195423570985008687907853269984665640564039457584007913129639936"} {
		if _, err := ParseWord(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if word(t, "0X1f") != word(t, "31") {
		t.Error("0X1f is not 31, as BigInt reads it")
	}
	if w := word(t, "256"); w[30] != 1 || w[31] != 0 {
		t.Errorf("256 = %x", w)
	}
}

// TestSessionCommitment: only IDKit 4's session_<commitment><seed> form,
// with the seed's 0x01 prefix and a non-zero commitment, is a session id.
func TestSessionCommitment(t *testing.T) {
	commitment := "2018a266d26fbc1cd41743cc3126321302b8f0af39c367fe5718eeafb341d494"
	seed := "01" + strings.Repeat("ab", 31)
	want := fe(t, "0x"+commitment)
	for _, id := range []string{"session_" + commitment + seed, "session_" + strings.ToUpper(commitment+seed)} {
		got, err := SessionCommitment(id)
		if err != nil || got != want {
			t.Errorf("%q: %v %v", id, got, err)
		}
	}
	r := "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"
	for _, bad := range []string{
		"", "session_", "session_" + commitment, "0x" + commitment, commitment, "0", "1", "12345", // numbers are not session ids
		"session_" + commitment + seed + "00", "session_" + commitment[2:] + seed, "SESSION_" + commitment + seed,
		"session_" + commitment + "00" + seed[2:], "session_" + commitment + "02" + seed[2:], // no session seed prefix
		"session_" + strings.Repeat("0", 64) + seed,                                            // commitment zero: a uniqueness proof's input
		"session_" + r + seed, "session_" + commitment + "01" + strings.Repeat("ff", 31) + "0", // a half ≥ r, odd length
		"session_" + commitment + "01" + strings.Repeat("g", 62),
	} {
		if _, err := SessionCommitment(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidAction(t *testing.T) {
	for _, tc := range []struct {
		first   byte
		session bool
		want    bool
	}{{0, false, true}, {2, false, false}, {1, false, false}, {2, true, true}, {0, true, false}, {1, true, false}} {
		var a [32]byte
		a[0], a[31] = tc.first, 7
		if got := ValidAction(a, tc.session); got != tc.want {
			t.Errorf("prefix %#x session %v: %v", tc.first, tc.session, got)
		}
	}
}

package registry

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/semaphore"
	"worldid/store/jsontest"
)

func word(t *testing.T, s string) [32]byte {
	t.Helper()
	w, err := oprfproof.ParseWord(s)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// v4Setup opens a registry configured with the vector's anchors, the
// way an operator would: the root through AddRootV4, the keys through
// AddTrustAnchor.
func v4Setup(t *testing.T, batching bool) (*Registry, *vectors.WorldID4, record.ClaimV4, *clock) {
	t.Helper()
	f := vectors.LoadWorldID4(t)
	a := f.WorldIDVerifier.Anchors
	u := f.WorldIDVerifier.Uniqueness
	if u.ExpectValid == nil || !*u.ExpectValid {
		t.Fatal("world_id_4.json: uniqueness.expect_valid must be true")
	}
	c := &clock{time.Unix(a.Now, 0)}
	o := Options{Store: jsontest.Open(t), LocalKey: mustKey(t, 16), Now: c.now, MinExpiration: time.Duration(a.MinExpirationThreshold) * time.Second}
	if batching {
		o.Rand = cryptoRand{}
	}
	r, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	root := word(t, a.Root)
	var rootFE fr.Element
	rootFE.SetBytes(root[:])
	if err := r.AddRootV4(t.Context(), "production", rootFE, c.t); err != nil {
		t.Fatal(err)
	}
	for _, an := range []record.TrustAnchor{
		{Kind: record.AnchorIssuerKey, ID: "1", X: a.IssuerPubkey[0], Y: a.IssuerPubkey[1], At: c.t},
		{Kind: record.AnchorOPRFKey, ID: a.RPID, X: a.OPRFPubkey[0], Y: a.OPRFPubkey[1], At: c.t},
	} {
		if err := r.AddTrustAnchor(t.Context(), an); err != nil {
			t.Fatal(err)
		}
	}
	rp, err := ParseRPID(a.RPID)
	if err != nil {
		t.Fatal(err)
	}
	claim := record.ClaimV4{Identifier: "orb", Environment: "production", RPID: rp, IssuerSchemaID: a.IssuerSchemaID,
		Nullifier: word(t, u.Nullifier), Action: word(t, u.Action), Nonce: word(t, u.Nonce), SignalHash: word(t, u.SignalHash),
		ExpiresAtMin: u.ExpiresAtMin}
	for i, s := range u.Proof {
		claim.Proof[i] = word(t, s)
	}
	return r, f, claim, c
}

type cryptoRand struct{}

func (cryptoRand) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(i*131 + 7) // deterministic: the tests only need non-zero randomizers
	}
	return len(b), nil
}

func plusOne(b [32]byte) [32]byte {
	n := new(big.Int).SetBytes(b[:])
	n.Add(n, big.NewInt(1))
	var out [32]byte
	n.FillBytes(out[:])
	return out
}

// TestUniquenessVectorV4: WorldIDVerifierTest's uniqueness proof verifies
// through CheckClaimV4 — the check and public-input assembly the endpoint
// uses — once its anchors are configured, and every single-field tamper
// is refused with the portal's code.
func TestUniquenessVectorV4(t *testing.T) {
	r, f, claim, c := v4Setup(t, false)
	a := f.WorldIDVerifier.Anchors
	if err := r.CheckClaimV4(t.Context(), claim); err != nil {
		t.Fatalf("vector: %v", err)
	}
	r_ := new(big.Int)
	r_.SetString("30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", 16)
	var modulus [32]byte
	r_.FillBytes(modulus[:])
	var all1 [32]byte // 2^256 − 1: as a G1 word its x is ≥ P
	for i := range all1 {
		all1[i] = 0xff
	}
	badA := claim.Proof
	badA[0] = all1
	if _, err := oprfproof.ParseProof(badA); !errors.Is(err, oprfproof.ErrProofPoints) {
		t.Fatalf("all-ones A: %v, want a point error", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*record.ClaimV4)
		code   string
	}{
		{"nullifier", func(c *record.ClaimV4) { c.Nullifier = plusOne(c.Nullifier) }, record.CodeInvalidProof},
		{"action", func(c *record.ClaimV4) { c.Action = plusOne(c.Action) }, record.CodeInvalidProof},
		{"signal", func(c *record.ClaimV4) { c.SignalHash = plusOne(c.SignalHash) }, record.CodeInvalidProof},
		{"nonce", func(c *record.ClaimV4) { c.Nonce = plusOne(c.Nonce) }, record.CodeInvalidProof},
		{"expires_at_min", func(c *record.ClaimV4) { c.ExpiresAtMin++ }, record.CodeInvalidProof},
		{"genesis", func(c *record.ClaimV4) { c.GenesisMin = plusOne(c.GenesisMin) }, record.CodeInvalidProof},
		// A session input makes it a session claim, whose action must
		// carry the session prefix 0x02 (WorldIDVerifierV2 InvalidAction).
		{"session id", func(c *record.ClaimV4) { c.SessionID = plusOne(c.SessionID) }, record.CodeVerificationFailed},
		{"proof word", func(c *record.ClaimV4) { c.Proof[3][31] ^= 4 }, record.CodeInvalidProof},
		{"root", func(c *record.ClaimV4) { c.Proof[4] = plusOne(c.Proof[4]) }, record.CodeInvalidRoot},
		{"staging root", func(c *record.ClaimV4) { c.Environment = "staging" }, record.CodeEnvironmentMismatch},
		{"unknown staging root", func(c *record.ClaimV4) { c.Environment, c.Proof[4] = "staging", plusOne(c.Proof[4]) }, record.CodeInvalidRoot},
		{"unknown issuer_schema_id", func(c *record.ClaimV4) { c.IssuerSchemaID = 2 }, record.CodeInvalidCredentialIssuer},
		{"rp_id without OPRF key", func(c *record.ClaimV4) { c.RPID = 2 }, record.CodeVerificationFailed},
		{"nullifier ≥ r", func(c *record.ClaimV4) { c.Nullifier = modulus }, record.CodeInvalidPublicInput},
		{"action prefix before the root", func(c *record.ClaimV4) { c.Action[0], c.Proof[4] = 2, modulus }, record.CodeVerificationFailed},
		{"genesis ≥ r", func(c *record.ClaimV4) { c.GenesisMin = modulus }, record.CodeInvalidPublicInput},
		// The contract's order: isValidRoot (false for any value ≥ r),
		// issuer key, OPRF key, expiry (its uint64 sum reverts on
		// overflow), the proof points, then the other inputs' range.
		{"root ≥ r", func(c *record.ClaimV4) { c.Proof[4] = modulus }, record.CodeInvalidRoot},
		{"root ≥ r before the issuer key", func(c *record.ClaimV4) { c.Proof[4], c.IssuerSchemaID = all1, 2 }, record.CodeInvalidRoot},
		{"issuer key before a value ≥ r", func(c *record.ClaimV4) { c.Nullifier, c.IssuerSchemaID = modulus, 2 }, record.CodeInvalidCredentialIssuer},
		{"OPRF key before a value ≥ r", func(c *record.ClaimV4) { c.Nonce, c.RPID = modulus, 2 }, record.CodeVerificationFailed},
		{"expiry overflows", func(c *record.ClaimV4) { c.ExpiresAtMin = math.MaxUint64 }, record.CodeVerificationFailed},
		{"expiry overflow before the points", func(c *record.ClaimV4) { c.ExpiresAtMin, c.Proof[0] = math.MaxUint64, all1 }, record.CodeVerificationFailed},
		{"largest expiry without overflow", func(c *record.ClaimV4) { c.ExpiresAtMin = math.MaxUint64 - uint64(a.MinExpirationThreshold) }, record.CodeInvalidProof},
		{"points before a value ≥ r", func(c *record.ClaimV4) { c.Nullifier, c.Proof[0] = modulus, all1 }, record.CodeInvalidProof},
	} {
		cl := claim
		tc.mutate(&cl)
		if code := codeOf(r.CheckClaimV4(t.Context(), cl)); code != tc.code {
			t.Errorf("%s: code %q, want %q", tc.name, code, tc.code)
		}
	}
	// Expiry: an hour after expires_at_min + the threshold.
	saved := c.t
	c.t = time.Unix(int64(claim.ExpiresAtMin)+a.MinExpirationThreshold+1, 0)
	if code := codeOf(r.CheckClaimV4(t.Context(), claim)); code != record.CodeVerificationFailed {
		t.Errorf("expired: code %q", code)
	}
	expiredOutOfField := claim
	expiredOutOfField.Nullifier = modulus
	if code := codeOf(r.CheckClaimV4(t.Context(), expiredOutOfField)); code != record.CodeVerificationFailed {
		t.Errorf("expired before a value ≥ r: code %q", code)
	}
	c.t = saved
	// Keys the operator replaces: the issuer key, then the OPRF key.
	for _, kind := range []string{record.AnchorIssuerKey, record.AnchorOPRFKey} {
		id := "1"
		if kind == record.AnchorOPRFKey {
			id = a.RPID
		}
		other := record.TrustAnchor{Kind: kind, ID: id, X: a.OtherPubkey[0], Y: a.OtherPubkey[1], At: c.t}
		if err := r.AddTrustAnchor(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		if code := codeOf(r.CheckClaimV4(t.Context(), claim)); code != record.CodeInvalidProof {
			t.Errorf("%s replaced: code %q", kind, code)
		}
		pk := a.IssuerPubkey
		if kind == record.AnchorOPRFKey {
			pk = a.OPRFPubkey
		}
		back := record.TrustAnchor{Kind: kind, ID: id, X: pk[0], Y: pk[1], At: c.t}
		if err := r.AddTrustAnchor(t.Context(), back); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.CheckClaimV4(t.Context(), claim); err != nil {
		t.Fatalf("after restoring the anchors: %v", err)
	}
}

// TestDefaultAnchorAndReplicas: a default anchor (the server's own PoH
// issuer key for schema 1) is used until the operator stores one, and a
// second registry on the same store sees stored anchors and 4.0 roots
// after Refresh.
func TestDefaultAnchorAndReplicas(t *testing.T) {
	a := vectors.LoadWorldID4(t).WorldIDVerifier.Anchors
	st := jsontest.Open(t)
	c := &clock{time.Unix(a.Now, 0)}
	def := record.TrustAnchor{Kind: record.AnchorIssuerKey, ID: "1", X: a.IssuerPubkey[0], Y: a.IssuerPubkey[1]}
	open := func() *Registry {
		r, err := Open(t.Context(), Options{Store: st, LocalKey: mustKey(t, 16), Now: c.now, DefaultAnchors: []record.TrustAnchor{def}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ra, rb := open(), open()
	if p, ok, err := ra.trustAnchor(t.Context(), record.AnchorIssuerKey, "production", 1); err != nil || !ok || p.X != vectors.Element(t, a.IssuerPubkey[0]) {
		t.Fatal("default issuer key not used")
	}
	other := record.TrustAnchor{Kind: record.AnchorIssuerKey, ID: "1", X: a.OtherPubkey[0], Y: a.OtherPubkey[1], At: c.t}
	if err := ra.AddTrustAnchor(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	var root fr.Element
	root.SetUint64(12345)
	if err := ra.AddRootV4(t.Context(), "staging", root, c.t); err != nil {
		t.Fatal(err)
	}
	if err := rb.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := rb.trustAnchor(t.Context(), record.AnchorIssuerKey, "production", 1); p.X != vectors.Element(t, a.OtherPubkey[0]) {
		t.Fatal("replica does not see the stored anchor")
	}
	if err := rb.checkRootV4(t.Context(), "staging", root); err != nil {
		t.Fatalf("replica does not see the 4.0 root: %v", err)
	}
	for _, bad := range []record.TrustAnchor{
		{Kind: "other", ID: "1", X: "0x01", Y: "0x01"},
		{Kind: record.AnchorIssuerKey, ID: "01", X: "0x01", Y: "0x01"},
		{Kind: record.AnchorOPRFKey, ID: "rp_ABC", X: "0x01", Y: "0x01"},
		{Kind: record.AnchorIssuerKey, ID: "1", X: "0x00", Y: "0x01"},
		{Kind: record.AnchorIssuerKey, ID: "1", X: "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", Y: "0x01"},
	} {
		if err := ra.AddTrustAnchor(t.Context(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestBatchingBothProtocols: with batching on, concurrent 3.0 and 4.0
// checks share batches and each gets Verify's answer, valid and invalid.
func TestBatchingBothProtocols(t *testing.T) {
	r, _, claim4, c := v4Setup(t, true)
	v := validVector(t, 16)
	rootBytes := hex32(t, v.Root)
	var root fr.Element
	root.SetBytes(rootBytes[:])
	if err := r.AddExternalRoot(t.Context(), "orb", "staging", root, v.Depth, c.t); err != nil {
		t.Fatal(err)
	}
	claim3 := record.Claim{Identifier: "orb", Environment: "staging", MerkleRoot: rootBytes, NullifierHash: hex32(t, v.NullifierHash),
		SignalHash: hex32(t, v.SignalHash), Proof: "0x" + strings.Join(trim0x(v.ProofPacked), "")}
	bad4 := claim4
	bad4.Nonce = plusOne(bad4.Nonce)
	bad3 := claim3
	bad3.SignalHash = plusOne(bad3.SignalHash)
	ext := hex32(t, v.ExternalNullifier)
	for round := range 4 {
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				switch i % 4 {
				case 0:
					errs[i] = r.CheckClaimV4(context.Background(), claim4)
				case 1:
					errs[i] = r.check(context.Background(), claim3, ext)
				case 2:
					errs[i] = r.CheckClaimV4(context.Background(), bad4)
				case 3:
					errs[i] = r.check(context.Background(), bad3, ext)
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if valid := i%4 < 2; (err == nil) != valid {
				t.Fatalf("round %d item %d: %v, want valid %v", round, i, err, valid)
			}
		}
	}
}

// fakeSource is a RootSource with fixed answers.
type fakeSource struct {
	tree  string
	valid map[fr.Element]bool
	err   error
}

func (f *fakeSource) Has(tree string) bool { return tree == f.tree }
func (f *fakeSource) ValidRoot(_ context.Context, _ string, root fr.Element) (bool, error) {
	return f.valid[root], f.err
}

// TestRootSource: a root no history knows is asked of the root source —
// 3.0 (checked with the published depth-30 key, so here a depth-16 vector
// with RootSourceDepth 16) and 4.0 alike; "not valid" is the root code,
// a source failure is an error and never a verification.
func TestRootSource(t *testing.T) {
	v := validVector(t, 16)
	rootBytes := hex32(t, v.Root)
	var root fr.Element
	root.SetBytes(rootBytes[:])
	src := &fakeSource{tree: "orb/staging", valid: map[fr.Element]bool{root: true}}
	c := &clock{time.Unix(1_800_000_000, 0)}
	r, err := Open(t.Context(), Options{Store: jsontest.Open(t), LocalKey: mustKey(t, 16), Now: c.now, Roots: src, RootSourceDepth: 16})
	if err != nil {
		t.Fatal(err)
	}
	claim := record.Claim{Identifier: "orb", Environment: "staging", MerkleRoot: rootBytes, NullifierHash: hex32(t, v.NullifierHash),
		SignalHash: hex32(t, v.SignalHash), Proof: "0x" + strings.Join(trim0x(v.ProofPacked), "")}
	ext := hex32(t, v.ExternalNullifier)
	if err := r.check(t.Context(), claim, ext); err != nil {
		t.Fatalf("valid on chain: %v", err)
	}
	src.valid = nil
	if code := codeOf(r.check(t.Context(), claim, ext)); code != record.CodeInvalidMerkleRoot {
		t.Fatalf("not valid on chain: %q", code)
	}
	src.err = context.DeadlineExceeded
	err = r.check(t.Context(), claim, ext)
	if _, isProof := err.(*record.ProofError); err == nil || isProof {
		t.Fatalf("unreachable source: %v, want a checker error", err)
	}
	claim.Environment = "production" // no source for orb/production
	if code := codeOf(r.check(t.Context(), claim, ext)); code != record.CodeInvalidMerkleRoot {
		t.Fatalf("tree without a source: %q", code)
	}

	// 4.0: the vector's root comes only from the source.
	r4, _, claim4, _ := v4Setup(t, false)
	r4.v4Roots["production"] = semaphore.NewRootHistory()
	src4 := &fakeSource{tree: record.V4RootTree("production")}
	r4.roots = src4
	if code := codeOf(r4.CheckClaimV4(t.Context(), claim4)); code != record.CodeInvalidRoot {
		t.Fatalf("4.0 root not on chain: %q", code)
	}
	var root4 fr.Element
	root4.SetBytes(claim4.Proof[4][:])
	src4.valid = map[fr.Element]bool{root4: true}
	if err := r4.CheckClaimV4(t.Context(), claim4); err != nil {
		t.Fatalf("4.0 root on chain: %v", err)
	}
	src4.err = context.DeadlineExceeded
	if err := r4.CheckClaimV4(t.Context(), claim4); !strings.HasPrefix(codeOf(err), "other: ") {
		t.Fatalf("4.0 unreachable source: %v", err)
	}
}

// TestVerifierVectorThroughCheck: Verifier.t.sol's uniqueness proof, whose
// anchors are its own public inputs, verifies through CheckClaimV4 once an
// operator configured them, like WorldIDVerifierTest's.
func TestVerifierVectorThroughCheck(t *testing.T) {
	v := vectors.LoadWorldID4(t).VerifierCompressed
	if v.ExpectValid == nil || !*v.ExpectValid || len(v.PublicInputs) != oprfproof.NPublic {
		t.Fatal("world_id_4.json: verifier_compressed must be a valid 15-input vector")
	}
	in := v.PublicInputs
	el := func(i int) fr.Element { return vectors.Element(t, in[i]) }
	if got := el(7); got.Uint64() != oprfproof.TreeDepth {
		t.Fatalf("tree depth input %v", got)
	}
	expires, rp := el(4), el(8)
	c := &clock{time.Unix(int64(expires.Uint64())+3600, 0)}
	r, err := Open(t.Context(), Options{Store: jsontest.Open(t), LocalKey: mustKey(t, 16), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddRootV4(t.Context(), "staging", el(6), c.t); err != nil {
		t.Fatal(err)
	}
	schema := el(1)
	for _, a := range []record.TrustAnchor{
		{Kind: record.AnchorIssuerKey, ID: schema.String(), X: in[2], Y: in[3]},
		{Kind: record.AnchorOPRFKey, ID: RPIDString(rp.Uint64()), X: in[10], Y: in[11]},
	} {
		if err := r.AddTrustAnchor(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	claim := record.ClaimV4{Identifier: "orb", Environment: "staging", RPID: rp.Uint64(), IssuerSchemaID: schema.Uint64(),
		Nullifier: word(t, in[0]), ExpiresAtMin: expires.Uint64(), GenesisMin: word(t, in[5]), Action: word(t, in[9]),
		SignalHash: word(t, in[12]), Nonce: word(t, in[13]), SessionID: word(t, in[14])}
	for i, s := range v.Proof {
		claim.Proof[i] = word(t, s)
	}
	claim.Proof[4] = word(t, in[6])
	// Its action's first byte is 0x15: Verifier.sol accepts the proof, but
	// WorldIDVerifierV2.verify refuses the action before anything else.
	if err := r.CheckClaimV4(t.Context(), claim); codeOf(err) != record.CodeVerificationFailed || !strings.Contains(err.Error(), "InvalidAction") {
		t.Fatalf("Verifier.t.sol vector, action prefix 0x15: %v", err)
	}
	p, err := oprfproof.ParseProof(claim.Proof)
	if err != nil {
		t.Fatal(err)
	}
	st := oprfproof.Statement{Nullifier: el(0), IssuerSchemaID: schema.Uint64(), IssuerKey: point(t, in[2], in[3]), ExpiresAtMin: expires.Uint64(),
		GenesisIssuedAtMin: el(5), Root: el(6), RPID: rp.Uint64(), Action: el(9), OPRFKey: point(t, in[10], in[11]), SignalHash: el(12), Nonce: el(13)}
	if !oprfproof.Verify(p, &st) {
		t.Fatal("Verifier.t.sol vector does not verify as a statement")
	}
}

func point(t *testing.T, x, y string) oprfproof.Point {
	t.Helper()
	return oprfproof.Point{X: vectors.Element(t, x), Y: vectors.Element(t, y)}
}

// TestSessionUniquenessConfusion: WorldIDVerifierV2's action prefixes
// keep the two proof types apart: the session vector's action (0x02)
// presented as a uniqueness claim, and the uniqueness vector's action
// (0x00) presented with a session input, are refused before any other
// check (InvalidAction).
func TestSessionUniquenessConfusion(t *testing.T) {
	r, f, uniq, _ := v4Setup(t, false)
	s := f.WorldIDVerifier.Session
	session := uniq
	session.Nullifier, session.Action, session.Nonce, session.SignalHash = word(t, s.SessionNullifier[0]), word(t, s.SessionNullifier[1]), word(t, s.Nonce), word(t, s.SignalHash)
	session.ExpiresAtMin, session.SessionID = s.ExpiresAtMin, word(t, s.SessionID)
	for i, w := range s.Proof {
		session.Proof[i] = word(t, w)
	}
	if err := r.CheckClaimV4(t.Context(), session); err != nil {
		t.Fatalf("session vector: %v", err)
	}
	asUniqueness := session
	asUniqueness.SessionID = [32]byte{}
	asSession := uniq
	asSession.SessionID = session.SessionID
	for name, c := range map[string]record.ClaimV4{"session as uniqueness": asUniqueness, "uniqueness as session": asSession} {
		if err := r.CheckClaimV4(t.Context(), c); codeOf(err) != record.CodeVerificationFailed || !strings.Contains(err.Error(), "InvalidAction") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

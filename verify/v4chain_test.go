package verify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/fakechain"
	"worldid/internal/vectors"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/registry"
	"worldid/rootsource"
	"worldid/semaphore"
	"worldid/store/jsontest"
)

// chainEnv is the endpoint over the real registry whose root and trust
// anchors come only from a JSON-RPC chain (rootsource against
// internal/fakechain) holding World's WorldIDVerifierTest state: no root
// or anchor is set by hand.
type chainEnv struct {
	*env
	reg   *registry.Registry
	chain *fakechain.Chain
	f     *vectors.WorldID4
	body  sessionBody
	now   time.Time
	// otherRP is a second registered rp_id with the same OPRF key.
	otherRP string
}

func newChainEnv(t testing.TB) *chainEnv {
	t.Helper()
	var f vectors.WorldID4
	vectors.Load(t, "world_id_4.json", &f)
	a := f.WorldIDVerifier.Anchors
	e := &chainEnv{f: &f, now: time.Unix(a.Now, 0), chain: fakechain.New()}
	rp, err := registry.ParseRPID(a.RPID)
	if err != nil {
		t.Fatal(err)
	}
	e.chain.AddRoot(vectors.Element(t, a.Root))
	e.chain.SetIssuerKey(a.IssuerSchemaID, vectors.Element(t, a.IssuerPubkey[0]), vectors.Element(t, a.IssuerPubkey[1]))
	e.chain.SetOPRFKey(rp, vectors.Element(t, a.OPRFPubkey[0]), vectors.Element(t, a.OPRFPubkey[1]))
	e.chain.SetOPRFKey(rp+1, vectors.Element(t, a.OPRFPubkey[0]), vectors.Element(t, a.OPRFPubkey[1])) // another rp_id, the same key
	srv := httptest.NewServer(e.chain)
	t.Cleanup(srv.Close)
	contract := func(tree string, kind rootsource.Kind, last byte) rootsource.Contract {
		c := rootsource.Contract{Tree: tree, Chain: "worldchain", Kind: kind}
		c.Address[19] = last
		return c
	}
	src, err := rootsource.New(rootsource.Options{RPC: map[string]string{"worldchain": srv.URL}, Now: func() time.Time { return e.now },
		Contracts: []rootsource.Contract{
			contract(record.V4RootTree("production"), rootsource.Registry, 1),
			contract(record.V4AnchorSet(record.AnchorIssuerKey, "production"), rootsource.IssuerRegistry, 2),
			contract(record.V4AnchorSet(record.AnchorOPRFKey, "production"), rootsource.OPRFKeyRegistry, 3),
		}})
	if err != nil {
		t.Fatal(err)
	}
	vk, err := semaphore.PublishedKey(16)
	if err != nil {
		t.Fatal(err)
	}
	e.reg, err = registry.Open(t.Context(), registry.Options{Store: jsontest.Open(t), LocalKey: vk,
		Now: func() time.Time { return e.now }, MinExpiration: time.Duration(a.MinExpirationThreshold) * time.Second, Roots: src, Keys: src})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.reg.Close)
	e.env = serveV4(t, e.now, e.reg,
		record.App{ID: "app_" + strings.Repeat("ab", 16), RPID: a.RPID, Name: "v4", CreatedAt: e.now},
		record.App{ID: "app_" + strings.Repeat("cd", 16), RPID: registry.RPIDString(rp + 1), Name: "other", CreatedAt: e.now})
	e.otherRP = registry.RPIDString(rp + 1)
	e.body = vectorSessionBody(&f)
	return e
}

func (e *chainEnv) postSession(t testing.TB, rpID string, b sessionBody) *httptest.ResponseRecorder {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return e.post("/api/v4/verify/"+rpID, string(raw))
}

// plusOneHex is a 0x-hex uint256 plus one, as 64 hex digits.
func plusOneHex(t testing.TB, s string) string {
	w, err := oprfproof.ParseWord(s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 31; i >= 0; i-- {
		if w[i]++; w[i] != 0 {
			break
		}
	}
	return fmt.Sprintf("0x%x", w)
}

// TestSessionVectorFromChain: World's session vector verifies through
// POST /api/v4/verify with its root, issuer key and OPRF key read from the
// chain, and every public input tampered — each value of the body, the
// rp_id (the route) and the keys the chain answers — is
// refused.
func TestSessionVectorFromChain(t *testing.T) {
	e := newChainEnv(t)
	a, s := e.f.WorldIDVerifier.Anchors, e.f.WorldIDVerifier.Session
	w := e.postSession(t, a.RPID, e.body)
	wantStatus(t, w, http.StatusOK)
	var ok SessionResponse
	decode(t, w, &ok)
	if !ok.Success || ok.Message != messageSession || !ok.Results[0].Success || ok.Results[0].Nullifier != s.SessionNullifier[0] {
		t.Fatalf("body %s", w.Body)
	}
	if c := e.chain.Calls(); c["isValidRoot"] != 1 || c["issuerSchemaIdToPubkey"] != 1 || c["getOprfPublicKey"] != 1 {
		t.Fatalf("chain calls %v, want one of each", c)
	}
	one := func(f func(*sessionBody, *sessionItem)) sessionBody {
		b := e.body
		b.Responses = []sessionItem{e.body.Responses[0]}
		f(&b, &b.Responses[0])
		return b
	}
	for _, tc := range []struct {
		name string
		rp   string
		body sessionBody
		code string
	}{
		{"nullifier", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.SessionNullifier[0] = plusOneHex(t, it.SessionNullifier[0]) }), record.CodeInvalidProof},
		{"action", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.SessionNullifier[1] = plusOneHex(t, it.SessionNullifier[1]) }), record.CodeInvalidProof},
		{"signal_hash", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.SignalHash = plusOneHex(t, it.SignalHash) }), record.CodeInvalidProof},
		{"nonce", a.RPID, one(func(b *sessionBody, _ *sessionItem) { b.Nonce = plusOneHex(t, b.Nonce) }), record.CodeInvalidProof},
		{"session id", a.RPID, one(func(b *sessionBody, _ *sessionItem) { b.SessionID = idkitSessionID(plusOneHex(t, s.SessionID)) }), record.CodeInvalidProof},
		{"expires_at_min", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.ExpiresAtMin = s.ExpiresAtMin + 1 }), record.CodeInvalidProof},
		{"credential_genesis_issued_at_min", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.GenesisMin = 1 }), record.CodeInvalidProof},
		{"issuer_schema_id", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.IssuerSchemaID = 7 }), record.CodeInvalidCredentialIssuer},
		{"proof word", a.RPID, one(func(_ *sessionBody, it *sessionItem) {
			it.Proof[2] = plusOneHex(t, plusOneHex(t, plusOneHex(t, plusOneHex(t, it.Proof[2]))))
		}), record.CodeInvalidProof},
		{"root", a.RPID, one(func(_ *sessionBody, it *sessionItem) { it.Proof[4] = plusOneHex(t, it.Proof[4]) }), record.CodeInvalidRoot},
		{"rp_id", e.otherRP, e.body, record.CodeInvalidProof},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := wantFailure(t, e.postSession(t, tc.rp, tc.body), http.StatusBadRequest, codeAllFailed)
			if len(f.Results) != 1 || f.Results[0].Code != tc.code {
				t.Fatalf("results %+v, want %s", f.Results, tc.code)
			}
		})
	}
	// The chain's keys tampered: another issuer key, another OPRF key.
	rp, _ := registry.ParseRPID(a.RPID)
	other := [2]fr.Element{vectors.Element(t, a.OtherPubkey[0]), vectors.Element(t, a.OtherPubkey[1])}
	e.chain.SetIssuerKey(1, other[0], other[1])
	e.now = e.now.Add(31 * time.Second) // past the cached answers
	if f := wantFailure(t, e.postSession(t, a.RPID, e.body), http.StatusBadRequest, codeAllFailed); f.Results[0].Code != record.CodeInvalidProof {
		t.Fatalf("other issuer key on chain: %+v", f.Results)
	}
	// A hand-set anchor wins over the chain.
	if err := e.reg.AddTrustAnchor(t.Context(), record.TrustAnchor{Kind: record.AnchorIssuerKey, ID: "1", X: a.IssuerPubkey[0], Y: a.IssuerPubkey[1]}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.postSession(t, a.RPID, e.body), http.StatusOK)
	e.chain.SetOPRFKey(rp, other[0], other[1])
	e.now = e.now.Add(31 * time.Second)
	if f := wantFailure(t, e.postSession(t, a.RPID, e.body), http.StatusBadRequest, codeAllFailed); f.Results[0].Code != record.CodeInvalidProof {
		t.Fatalf("other OPRF key on chain: %+v", f.Results)
	}
	// The chain down: the outcome is unknown, never valid.
	e.chain.SetOPRFKey(rp, vectors.Element(t, a.OPRFPubkey[0]), vectors.Element(t, a.OPRFPubkey[1]))
	e.chain.SetDown(true)
	e.now = e.now.Add(31 * time.Second)
	if f := wantFailure(t, e.postSession(t, a.RPID, e.body), http.StatusInternalServerError, codeInternal); f.Results[0].Code != codeVerificationErr {
		t.Fatalf("chain down: %+v", f.Results)
	}
}

// TestUniquenessVectorFromChain: World's uniqueness vector verifies at
// the checker with its anchors read from the chain, and every public input
// tampered is refused. It cannot be sent over HTTP: its action is a raw
// field element, and IDKit 4 sends an action only as a string, which the
// endpoint hashes (doc.go "Protocol 4.0").
func TestUniquenessVectorFromChain(t *testing.T) {
	e := newChainEnv(t)
	a, u := e.f.WorldIDVerifier.Anchors, e.f.WorldIDVerifier.Uniqueness
	rp, _ := registry.ParseRPID(a.RPID)
	word := func(s string) [32]byte {
		w, err := oprfproof.ParseWord(s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	claim := record.ClaimV4{Identifier: "proof_of_human", Environment: "production", RPID: rp, IssuerSchemaID: a.IssuerSchemaID,
		Nullifier: word(u.Nullifier), Action: word(u.Action), Nonce: word(u.Nonce), SignalHash: word(u.SignalHash), ExpiresAtMin: u.ExpiresAtMin}
	for i, s := range u.Proof {
		claim.Proof[i] = word(s)
	}
	if err := e.reg.CheckClaimV4(t.Context(), claim); err != nil {
		t.Fatalf("uniqueness vector: %v", err)
	}
	inc := func(w [32]byte) [32]byte { return word(plusOneHex(t, fmt.Sprintf("0x%x", w))) }
	for name, mutate := range map[string]func(*record.ClaimV4){
		"nullifier":     func(c *record.ClaimV4) { c.Nullifier = inc(c.Nullifier) },
		"action":        func(c *record.ClaimV4) { c.Action = inc(c.Action) },
		"nonce":         func(c *record.ClaimV4) { c.Nonce = inc(c.Nonce) },
		"signal_hash":   func(c *record.ClaimV4) { c.SignalHash = inc(c.SignalHash) },
		"expires":       func(c *record.ClaimV4) { c.ExpiresAtMin++ },
		"genesis":       func(c *record.ClaimV4) { c.GenesisMin = inc(c.GenesisMin) },
		"rp_id":         func(c *record.ClaimV4) { c.RPID++ },
		"proof word":    func(c *record.ClaimV4) { c.Proof[3][31] ^= 4 },
		"root":          func(c *record.ClaimV4) { c.Proof[4] = inc(c.Proof[4]) },
		"issuer schema": func(c *record.ClaimV4) { c.IssuerSchemaID = 2 },
		"session id":    func(c *record.ClaimV4) { c.SessionID = inc(c.SessionID) },
	} {
		c := claim
		mutate(&c)
		if err := e.reg.CheckClaimV4(t.Context(), c); err == nil {
			t.Errorf("%s tampered: verified", name)
		}
	}
}

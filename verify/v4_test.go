package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/registry"
	"worldid/semaphore"
	"worldid/store/jsontest"
)

// sessionBody is a session request as IDKit 4 builds it: session_id, a
// nonce, protocol 4.0, and items with the session nullifier.
type sessionItem struct {
	Identifier       string    `json:"identifier"`
	SignalHash       string    `json:"signal_hash,omitempty"`
	IssuerSchemaID   any       `json:"issuer_schema_id"`
	SessionNullifier [2]string `json:"session_nullifier"`
	ExpiresAtMin     any       `json:"expires_at_min"`
	GenesisMin       any       `json:"credential_genesis_issued_at_min,omitempty"`
	Proof            [5]string `json:"proof"`
}

type sessionBody struct {
	SessionID       string        `json:"session_id"`
	Nonce           string        `json:"nonce"`
	ProtocolVersion string        `json:"protocol_version"`
	Environment     string        `json:"environment,omitempty"`
	Responses       []sessionItem `json:"responses"`
}

// v4Env is the endpoint over the real registry, configured with the
// vector's anchors (root, issuer key of schema 1, OPRF key of its rp_id)
// and an app whose rp_id is the vector's. Its root source holds no root
// until a test adds one.
type v4Env struct {
	*env
	reg   *registry.Registry
	roots *treeRoots
	f     *vectors.WorldID4
	body  sessionBody
	now   time.Time
}

// treeRoots is a root source holding one valid root per tree.
type treeRoots struct {
	mu    sync.Mutex
	valid map[string]fr.Element
}

func (s *treeRoots) Has(tree string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.valid[tree]
	return ok
}

func (s *treeRoots) ValidRoot(_ context.Context, tree string, root fr.Element) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.valid[tree] == root, nil
}

func newV4Env(t *testing.T) *v4Env {
	t.Helper()
	f := vectors.LoadWorldID4(t)
	a := f.WorldIDVerifier.Anchors
	s := f.WorldIDVerifier.Session
	if s.ExpectValid == nil || !*s.ExpectValid {
		t.Fatal("world_id_4.json: session.expect_valid must be true")
	}
	e := &v4Env{f: f, now: time.Unix(a.Now, 0), roots: &treeRoots{valid: map[string]fr.Element{}}}
	vk, err := semaphore.PublishedKey(16)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(t.Context(), registry.Options{Store: jsontest.Open(t), LocalKey: vk,
		Now: func() time.Time { return e.now }, MinExpiration: time.Duration(a.MinExpirationThreshold) * time.Second, Roots: e.roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	rootWord, _ := oprfproof.ParseWord(a.Root)
	var root fr.Element
	root.SetBytes(rootWord[:])
	if err := reg.AddRootV4(t.Context(), "production", root, e.now); err != nil {
		t.Fatal(err)
	}
	for _, an := range []record.TrustAnchor{
		{Kind: record.AnchorIssuerKey, ID: "1", X: a.IssuerPubkey[0], Y: a.IssuerPubkey[1]},
		{Kind: record.AnchorOPRFKey, ID: a.RPID, X: a.OPRFPubkey[0], Y: a.OPRFPubkey[1]},
	} {
		if err := reg.AddTrustAnchor(t.Context(), an); err != nil {
			t.Fatal(err)
		}
	}
	e.reg = reg
	e.env = serveV4(t, e.now, reg, record.App{ID: "app_" + strings.Repeat("ab", 16), RPID: a.RPID, Name: "v4", CreatedAt: e.now})
	e.body = vectorSessionBody(f)
	return e
}

// serveV4 is the endpoint over a 4.0 checker, its store holding the test
// app and apps, its clock starting at start.
func serveV4(t testing.TB, start time.Time, checker CheckerV4, apps ...record.App) *env {
	t.Helper()
	e := &env{mux: http.NewServeMux(), store: newTestStore(t), checker: &fakeChecker{}, now: start}
	for _, app := range apps {
		e.store.addApp(app)
	}
	h, err := New(Options{Store: e.store, Checker: e.checker, CheckerV4: checker, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(e.mux)
	return e
}

// vectorSessionBody is World's session vector in the body IDKit 4 sends.
func vectorSessionBody(f *vectors.WorldID4) sessionBody {
	s := f.WorldIDVerifier.Session
	return sessionBody{SessionID: idkitSessionID(s.SessionID), Nonce: s.Nonce, ProtocolVersion: "4.0", Responses: []sessionItem{{
		Identifier: "proof_of_human", SignalHash: s.SignalHash, IssuerSchemaID: 1, SessionNullifier: s.SessionNullifier,
		ExpiresAtMin: s.ExpiresAtMin, Proof: s.Proof}}}
}

func (e *v4Env) postSession(t *testing.T, b sessionBody) *httptest.ResponseRecorder {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return e.post("/api/v4/verify/"+e.f.WorldIDVerifier.Anchors.RPID, string(raw))
}

// idkitSessionID is a session commitment in IDKit 4's session id form:
// session_, the commitment, then an OPRF seed with the session prefix 01
// (the seed is not a public input).
func idkitSessionID(commitment string) string {
	return "session_" + strings.TrimPrefix(commitment, "0x") + "01" + strings.Repeat("5a", 31)
}

// TestSessionVectorV4: WorldIDVerifierTest's session proof, posted in the
// IDKit 4 body shape, verifies once the operator configured its anchors;
// each single-field tamper is refused per item with the portal's code.
func TestSessionVectorV4(t *testing.T) {
	e := newV4Env(t)
	w := e.postSession(t, e.body)
	wantStatus(t, w, http.StatusOK)
	var ok SessionResponse
	decode(t, w, &ok)
	s := e.f.WorldIDVerifier.Session
	if !ok.Success || ok.SessionID != e.body.SessionID || ok.Environment != "production" || ok.Message != messageSession ||
		len(ok.Results) != 1 || !ok.Results[0].Success || ok.Results[0].Nullifier != s.SessionNullifier[0] ||
		ok.Results[0].Identifier != "proof_of_human" {
		t.Fatalf("body %s", w.Body)
	}
	// The identifier chooses nothing in 4.0 (issuer_schema_id and the
	// root do) and is echoed as sent, but IDKit 4's other credential type
	// names cannot claim schema 1's proof.
	for id, ok := range map[string]bool{"passport": false, "mnc": false, "selfie": false, "document-of-mine": true} {
		b := e.body
		b.Responses = []sessionItem{e.body.Responses[0]}
		b.Responses[0].Identifier = id
		w := e.postSession(t, b)
		if !ok {
			if f := wantFailure(t, w, http.StatusBadRequest, codeAllFailed); f.Results[0].Code != record.CodeInvalidCredentialIssuer || f.Results[0].Identifier != id {
				t.Fatalf("%s: %+v", id, f.Results)
			}
			continue
		}
		wantStatus(t, w, http.StatusOK)
		var r SessionResponse
		decode(t, w, &r)
		if len(r.Results) != 1 || !r.Results[0].Success || r.Results[0].Identifier != id {
			t.Fatalf("%s: body %s", id, w.Body)
		}
	}
	// The commitment as a bare number is not a session id IDKit sends.
	plain := e.body
	plain.SessionID = s.SessionID
	wantError(t, e.postSession(t, plain), http.StatusBadRequest, codeValidation, "session_id")
	// Numbers as decimal strings, as a client may send them.
	dec := e.body
	dec.Responses = []sessionItem{e.body.Responses[0]}
	dec.Responses[0].IssuerSchemaID, dec.Responses[0].ExpiresAtMin = "1", fmt.Sprint(s.ExpiresAtMin)
	wantStatus(t, e.postSession(t, dec), http.StatusOK)

	one := func(f func(*sessionBody, *sessionItem)) sessionBody {
		b := e.body
		b.Responses = []sessionItem{e.body.Responses[0]}
		f(&b, &b.Responses[0])
		return b
	}
	plus1 := func(hex string) string {
		w, _ := oprfproof.ParseWord(hex)
		var x fr.Element
		x.SetBytes(w[:])
		x.Add(&x, new(fr.Element).SetOne())
		return "0x" + fmt.Sprintf("%064x", x.Bytes())
	}
	for _, tc := range []struct {
		name string
		body sessionBody
		code string
	}{
		{"nullifier", one(func(_ *sessionBody, it *sessionItem) { it.SessionNullifier[0] = plus1(it.SessionNullifier[0]) }), record.CodeInvalidProof},
		{"action", one(func(_ *sessionBody, it *sessionItem) { it.SessionNullifier[1] = plus1(it.SessionNullifier[1]) }), record.CodeInvalidProof},
		{"signal", one(func(_ *sessionBody, it *sessionItem) { it.SignalHash = plus1(it.SignalHash) }), record.CodeInvalidProof},
		{"nonce", one(func(b *sessionBody, _ *sessionItem) { b.Nonce = plus1(b.Nonce) }), record.CodeInvalidProof},
		{"session id", one(func(b *sessionBody, _ *sessionItem) { b.SessionID = idkitSessionID(plus1(s.SessionID)) }), record.CodeInvalidProof},
		{"expiry", one(func(_ *sessionBody, it *sessionItem) { it.ExpiresAtMin = s.ExpiresAtMin + 1 }), record.CodeInvalidProof},
		{"proof word", one(func(_ *sessionBody, it *sessionItem) { it.Proof[0] = plus1(plus1(plus1(plus1(it.Proof[0])))) }), record.CodeInvalidProof},
		{"root", one(func(_ *sessionBody, it *sessionItem) { it.Proof[4] = plus1(it.Proof[4]) }), record.CodeInvalidRoot},
		{"issuer_schema_id", one(func(_ *sessionBody, it *sessionItem) { it.IssuerSchemaID = 7 }), record.CodeInvalidCredentialIssuer},
		{"nullifier ≥ r", one(func(_ *sessionBody, it *sessionItem) { it.SessionNullifier[0] = fieldModulus }), record.CodeInvalidPublicInput},
		{"nonce ≥ r", one(func(b *sessionBody, _ *sessionItem) { b.Nonce = "0x" + strings.Repeat("f", 64) }), record.CodeInvalidPublicInput},
		{"signal ≥ r", one(func(_ *sessionBody, it *sessionItem) { it.SignalHash = "0x" + strings.Repeat("f", 64) }), record.CodeInvalidPublicInput},
		// The contract's order: the root first (no registry root is ≥ r),
		// the proof points before the range of the other inputs, and an
		// expiry whose uint64 sum overflows reverts.
		{"root = r", one(func(_ *sessionBody, it *sessionItem) { it.Proof[4] = fieldModulus }), record.CodeInvalidRoot},
		{"root = 2^256 − 1", one(func(_ *sessionBody, it *sessionItem) { it.Proof[4] = "0x" + strings.Repeat("f", 64) }), record.CodeInvalidRoot},
		{"points before a value ≥ r", one(func(_ *sessionBody, it *sessionItem) {
			it.SessionNullifier[0], it.Proof[0] = fieldModulus, "0x"+strings.Repeat("f", 64)
		}), record.CodeInvalidProof},
		{"expiry overflows", one(func(_ *sessionBody, it *sessionItem) { it.ExpiresAtMin = uint64(math.MaxUint64) }), record.CodeVerificationFailed},
		// The root is production's: a staging request says so.
		{"staging", one(func(b *sessionBody, _ *sessionItem) { b.Environment = "staging" }), record.CodeEnvironmentMismatch},
		// A session action needs the session prefix byte 0x02.
		{"action prefix 00", one(func(_ *sessionBody, it *sessionItem) { it.SessionNullifier[1] = "0x00" + it.SessionNullifier[1][4:] }), record.CodeVerificationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := wantFailure(t, e.postSession(t, tc.body), http.StatusBadRequest, codeAllFailed)
			if len(f.Results) != 1 || f.Results[0].Code != tc.code {
				t.Fatalf("results %+v, want code %s", f.Results, tc.code)
			}
		})
	}
	// Anchors: an issuer key or OPRF key other than the proof's, a
	// missing OPRF key, an expired credential.
	a := e.f.WorldIDVerifier.Anchors
	for _, tc := range []struct {
		name  string
		setup func()
		code  string
	}{
		{"issuer key", func() { e.anchor(t, record.AnchorIssuerKey, "1", a.OtherPubkey) }, record.CodeInvalidProof},
		{"OPRF key", func() { e.anchor(t, record.AnchorOPRFKey, a.RPID, a.OtherPubkey) }, record.CodeInvalidProof},
		{"expired", func() { e.now = time.Unix(int64(s.ExpiresAtMin)+a.MinExpirationThreshold+1, 0) }, record.CodeVerificationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			f := wantFailure(t, e.postSession(t, e.body), http.StatusBadRequest, codeAllFailed)
			if f.Results[0].Code != tc.code {
				t.Fatalf("code %s, want %s", f.Results[0].Code, tc.code)
			}
			e.anchor(t, record.AnchorIssuerKey, "1", a.IssuerPubkey)
			e.anchor(t, record.AnchorOPRFKey, a.RPID, a.OPRFPubkey)
			e.now = time.Unix(a.Now, 0)
			wantStatus(t, e.postSession(t, e.body), http.StatusOK)
		})
	}
	// An app whose rp_id has no OPRF key.
	e.store.addApp(record.App{ID: "app_" + strings.Repeat("cd", 16), RPID: "rp_00000000000000aa", Name: "other"})
	raw, _ := json.Marshal(e.body)
	f := wantFailure(t, e.post("/api/v4/verify/rp_00000000000000aa", string(raw)), http.StatusBadRequest, codeAllFailed)
	if f.Results[0].Code != record.CodeVerificationFailed {
		t.Fatalf("missing OPRF key: %s", f.Results[0].Code)
	}
}

// fieldModulus is r, the BN254 scalar field modulus.
const fieldModulus = "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"

// TestStagingAppV4: a staging app's 4.0 proofs are checked in staging, as
// its 3.0 proofs are: an absent environment means staging — its operator
// roots and its registry contract on the root source — and production is
// refused.
func TestStagingAppV4(t *testing.T) {
	e := newV4Env(t)
	stagingID := "app_staging_" + strings.Repeat("ab", 16)
	e.store.changeApp("app_"+strings.Repeat("ab", 16), func(app *record.App) { // the vector rp_id's app
		app.ID, app.Staging = stagingID, true
	})
	// The vector's root is a production root only.
	f := wantFailure(t, e.postSession(t, e.body), http.StatusBadRequest, codeAllFailed)
	if f.Results[0].Code != record.CodeEnvironmentMismatch {
		t.Fatalf("production root for a staging app: %+v", f.Results)
	}
	prod := e.body
	prod.Environment = "production"
	wantError(t, e.postSession(t, prod), http.StatusBadRequest, codeValidation, "environment")
	// The staging registry contract holds it; the production one still does not.
	root := vectors.Element(t, e.f.WorldIDVerifier.Anchors.Root)
	e.roots.valid[record.V4RootTree("staging")] = root
	for _, env := range []string{"", "staging", "sandbox"} {
		b := e.body
		b.Environment = env
		w := e.postSession(t, b)
		wantStatus(t, w, http.StatusOK)
		var ok SessionResponse
		decode(t, w, &ok)
		if want := cmp.Or(env, "staging"); ok.Environment != want {
			t.Fatalf("environment %q: answered %q, want %q", env, ok.Environment, want)
		}
	}
	wantError(t, e.post("/api/v4/verify/"+stagingID, mustJSON(t, prod)), http.StatusBadRequest, codeValidation, "environment")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *v4Env) anchor(t *testing.T, kind, id string, p [2]string) {
	t.Helper()
	if err := e.reg.AddTrustAnchor(t.Context(), record.TrustAnchor{Kind: kind, ID: id, X: p[0], Y: p[1]}); err != nil {
		t.Fatal(err)
	}
}

// recordingV4 is a CheckerV4 that records claims and decides by the last
// byte of proof[3]: 0xee is invalid_proof, 0xbb a checker failure.
type recordingV4 struct {
	mu     sync.Mutex
	claims []record.ClaimV4
}

func (r *recordingV4) CheckClaimV4(_ context.Context, c record.ClaimV4) error {
	r.mu.Lock()
	r.claims = append(r.claims, c)
	r.mu.Unlock()
	switch c.Proof[3][31] {
	case 0xee:
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "bad"}
	case 0xbb:
		return fmt.Errorf("root source unreachable")
	}
	return nil
}

// testSessionID is an IDKit 4 session id of commitment 7.
var testSessionID = "session_" + strings.Repeat("0", 63) + "7" + "01" + strings.Repeat("0", 62)

const v4Item = `{"identifier":"selfie","issuer_schema_id":11,"nullifier":"0x0a0a","expires_at_min":1700000000,"proof":["1","2","3","4","0x05"]}`

func v4Body(members string, list ...string) string {
	if len(list) == 0 {
		list = []string{v4Item}
	}
	return `{"protocol_version":"4.0","nonce":"0x01","action":"vote",` + members + `"responses":[` + strings.Join(list, ",") + `]}`
}

func v4ItemWith(old, repl string) string { return strings.Replace(v4Item, old, repl, 1) }

// TestV4Requests: the claim the endpoint builds from an IDKit 4 body, how
// uniqueness proofs are recorded, and every bad input as a 400 naming the
// attribute or a per-item code — never a 500.
func TestV4Requests(t *testing.T) {
	e, chk := newV4Recording(t)
	w := e.post("/api/v4/verify/"+testRPID, v4Body(""))
	resp := wantSuccess(t, w)
	if resp.Nullifier != "0x"+strings.Repeat("0", 60)+"0a0a" || resp.Results[0].Identifier != "selfie" || resp.Message != messageVerified {
		t.Fatalf("body %s", w.Body)
	}
	c := chk.claims[0]
	action := semaphore.HashToField([]byte("vote"))
	var rp uint64
	fmt.Sscanf(strings.TrimPrefix(testRPID, "rp_"), "%x", &rp)
	if c.Action != action.Bytes() || c.RPID != rp || c.Nonce[31] != 1 || c.SignalHash != [32]byte{} || c.IssuerSchemaID != 11 ||
		c.ExpiresAtMin != 1700000000 || c.GenesisMin != [32]byte{} || c.SessionID != [32]byte{} || c.Proof[4][31] != 5 || c.Environment != "production" {
		t.Fatalf("claim %+v", c)
	}
	if got := e.store.count("vote", "production", resp.Nullifier); got != 1 {
		t.Fatalf("recorded %d times", got)
	}
	w = e.post("/api/v4/verify/"+testAppID, v4Body(`"environment":"sandbox",`))
	if r := wantSuccess(t, w); r.Environment != "sandbox" || e.store.count("vote", "staging", r.Nullifier) != 1 {
		t.Fatalf("sandbox: %s", w.Body)
	}
	// Sessions verify without recording anything.
	before := e.store.rows()
	w = e.post("/api/v4/verify/"+testRPID, `{"protocol_version":"4.0","nonce":"1","session_id":"`+testSessionID+`","responses":[`+
		strings.Replace(v4Item, `"nullifier":"0x0a0a"`, `"session_nullifier":["0x0b","0x0c"]`, 1)+`]}`)
	wantStatus(t, w, http.StatusOK)
	if !maps.EqualFunc(e.store.rows(), before, slices.Equal[[]string]) || !strings.Contains(w.Body.String(), `"session_id":"`+testSessionID+`"`) {
		t.Fatalf("session: %s", w.Body)
	}
	if c := chk.claims[len(chk.claims)-1]; c.SessionID[31] != 7 || c.Nullifier[31] != 0xb || c.Action[31] != 0xc {
		t.Fatalf("session claim %+v", c)
	}

	// Any identifier of at most 64 bytes is echoed unchanged; a 3.0 item
	// still names one of the 3.0 credential types.
	// IDKit's credential type names must carry their issuer_schema_id.
	for id, schema := range map[string]string{"proof_of_human": "1", "passport": "9303", "mnc": "9310", "ãé-" + strings.Repeat("x", 59): "11", "custom": "77"} {
		it := strings.Replace(v4ItemWith(`"selfie"`, `"`+id+`"`), `"issuer_schema_id":11`, `"issuer_schema_id":`+schema, 1)
		w := e.post("/api/v4/verify/"+testRPID, v4Body("", it))
		if r := wantSuccess(t, w); r.Results[0].Identifier != id {
			t.Fatalf("identifier %q: %s", id, w.Body)
		}
		wrong := strings.Replace(it, `"issuer_schema_id":`+schema, `"issuer_schema_id":12`, 1)
		w = e.post("/api/v4/verify/"+testRPID, v4Body("", wrong))
		if _, named := credentialSchemaIDs[id]; !named {
			wantSuccess(t, w) // any schema id for a name IDKit does not define
			continue
		}
		if f := wantFailure(t, w, http.StatusBadRequest, codeAllFailed); f.Results[0].Code != record.CodeInvalidCredentialIssuer {
			t.Fatalf("identifier %q with schema 12: %+v", id, f.Results)
		}
	}
	wantError(t, e.post("/api/v4/verify/"+testRPID, v4Body("", v4ItemWith(`"selfie"`, `"`+strings.Repeat("x", 65)+`"`))),
		http.StatusBadRequest, codeValidation, "responses[0].identifier")
	wantError(t, e.post("/api/v4/verify/"+testRPID, body(items(strings.Replace(validItem, `"orb"`, `"proof_of_human"`, 1)))),
		http.StatusBadRequest, codeValidation, "responses[0].identifier")

	const r = "21888242871839275222246405745257275088548364400416034343698204186575808495617"
	for _, tc := range []struct {
		name, body, code, attribute string
	}{
		{"proof word not a number", v4Body("", v4ItemWith(`"2"`, `"two"`)), codeValidation, "responses[0].proof[1]"},
		{"proof word 2^256", v4Body("", v4ItemWith(`"2"`, `"0x1`+strings.Repeat("0", 64)+`"`)), codeValidation, "responses[0].proof[1]"},
		{"proof word number", v4Body("", v4ItemWith(`"2"`, `2`)), codeValidation, "responses[0].proof"},
		{"issuer_schema_id missing", v4Body("", v4ItemWith(`"issuer_schema_id":11,`, ``)), codeValidation, "responses[0].issuer_schema_id"},
		{"issuer_schema_id negative", v4Body("", v4ItemWith(`"issuer_schema_id":11`, `"issuer_schema_id":-1`)), codeValidation, "responses[0].issuer_schema_id"},
		{"issuer_schema_id fraction", v4Body("", v4ItemWith(`"issuer_schema_id":11`, `"issuer_schema_id":1.5`)), codeValidation, "responses[0].issuer_schema_id"},
		{"issuer_schema_id 2^64", v4Body("", v4ItemWith(`"issuer_schema_id":11`, `"issuer_schema_id":18446744073709551616`)), codeValidation, "responses[0].issuer_schema_id"},
		{"issuer_schema_id object", v4Body("", v4ItemWith(`"issuer_schema_id":11`, `"issuer_schema_id":{}`)), codeValidation, "responses[0].issuer_schema_id"},
		{"issuer_schema_id leading zero", v4Body("", v4ItemWith(`"issuer_schema_id":11`, `"issuer_schema_id":"01"`)), codeValidation, "responses[0].issuer_schema_id"},
		{"expires_at_min missing", v4Body("", v4ItemWith(`"expires_at_min":1700000000,`, ``)), codeValidation, "responses[0].expires_at_min"},
		{"nullifier missing", v4Body("", v4ItemWith(`"nullifier":"0x0a0a",`, ``)), codeValidation, "responses[0].nullifier"},
		{"nullifier hex without 0x", v4Body("", v4ItemWith(`"0x0a0a"`, `"0a0a"`)), codeValidation, "responses[0].nullifier"},
		{"signal_hash upper case", v4Body("", v4ItemWith(`"nullifier"`, `"signal_hash":"0xAB","nullifier"`)), codeValidation, "responses[0].signal_hash"},
		{"merkle_root in 4.0", v4Body("", v4ItemWith(`"nullifier"`, `"merkle_root":"0x01","nullifier"`)), codeValidation, "responses[0]"},
		{"nonce not a number", `{"protocol_version":"4.0","nonce":"abc","action":"vote","responses":[` + v4Item + `]}`, codeValidation, "nonce"},
		{"action missing", `{"protocol_version":"4.0","nonce":"1","responses":[` + v4Item + `]}`, codeValidation, "action"},
		{"session with action", `{"protocol_version":"4.0","nonce":"1","action":"vote","session_id":"` + testSessionID + `","responses":[` + v4Item + `]}`, codeValidation, "action"},
		{"session id malformed", `{"protocol_version":"4.0","nonce":"1","session_id":"session_12","responses":[` + v4Item + `]}`, codeValidation, "session_id"},
		{"session item with nullifier", `{"protocol_version":"4.0","nonce":"1","session_id":"` + testSessionID + `","responses":[` + v4Item + `]}`, codeValidation, "responses[0].nullifier"},
		{"session_nullifier not an array", `{"protocol_version":"4.0","nonce":"1","session_id":"` + testSessionID + `","responses":[` +
			strings.Replace(v4Item, `"nullifier":"0x0a0a"`, `"session_nullifier":"1"`, 1) + `]}`, codeValidation, "responses[0].session_nullifier"},
		{"session_nullifier missing", `{"protocol_version":"4.0","nonce":"1","session_id":"` + testSessionID + `","responses":[` +
			strings.Replace(v4Item, `"nullifier":"0x0a0a",`, ``, 1) + `]}`, codeValidation, "responses[0].session_nullifier"},
		{"session_nullifier of 1", `{"protocol_version":"4.0","nonce":"1","session_id":"` + testSessionID + `","responses":[` +
			strings.Replace(v4Item, `"nullifier":"0x0a0a"`, `"session_nullifier":["1"]`, 1) + `]}`, codeValidation, "responses[0].session_nullifier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.post("/api/v4/verify/"+testRPID, tc.body), http.StatusBadRequest, tc.code, tc.attribute)
		})
	}
	for _, tc := range []struct {
		name, body, code string
		status           int
	}{
		{"checker refuses", v4Body("", v4ItemWith(`"4"`, `"0xee"`)), record.CodeInvalidProof, http.StatusBadRequest},
		{"3.0 item in 4.0", v4Body("", validItem), record.CodeInvalidProof, http.StatusBadRequest},
		{"proof length 4", v4Body("", v4ItemWith(`,"0x05"]`, `]`)), record.CodeInvalidProof, http.StatusBadRequest},
		{"proof length 6", v4Body("", v4ItemWith(`"0x05"]`, `"0x05","6"]`)), record.CodeInvalidProof, http.StatusBadRequest},
		{"checker failed", v4Body("", v4ItemWith(`"4"`, `"0xbb"`)), codeVerificationErr, http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := codeAllFailed
			if tc.status == http.StatusInternalServerError {
				want = codeInternal
			}
			f := wantFailure(t, e.post("/api/v4/verify/"+testRPID, tc.body), tc.status, want)
			if f.Results[0].Code != tc.code {
				t.Fatalf("results %+v, want %s", f.Results, tc.code)
			}
		})
	}
	// Values ≥ r reach the checker as sent: it answers them in the
	// contract's order (a root ≥ r is invalid_root, other values are
	// checked after the proof points).
	var rWord [32]byte
	rBig, _ := new(big.Int).SetString(r, 10)
	rBig.FillBytes(rWord[:])
	for _, tc := range []struct {
		name, body string
		got        func(record.ClaimV4) [32]byte
	}{
		{"nullifier = r", v4Body("", v4ItemWith(`"0x0a0a"`, `"`+r+`"`)), func(c record.ClaimV4) [32]byte { return c.Nullifier }},
		{"root = r", v4Body("", v4ItemWith(`"0x05"`, `"`+r+`"`)), func(c record.ClaimV4) [32]byte { return c.Proof[4] }},
		{"signal_hash = r", v4Body("", v4ItemWith(`"nullifier"`, `"signal_hash":"0x`+rBig.Text(16)+`","nullifier"`)), func(c record.ClaimV4) [32]byte { return c.SignalHash }},
		{"nonce = r", `{"protocol_version":"4.0","nonce":"` + r + `","action":"vote","responses":[` + v4Item + `]}`, func(c record.ClaimV4) [32]byte { return c.Nonce }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantSuccess(t, e.post("/api/v4/verify/"+testRPID, tc.body))
			if got := tc.got(chk.claims[len(chk.claims)-1]); got != rWord {
				t.Fatalf("checker got %x, want r", got)
			}
		})
	}
	// One good and one refused item: the good one is recorded.
	w = e.post("/api/v4/verify/"+testRPID, v4Body("", v4ItemWith(`"4"`, `"0xee"`), v4ItemWith(`"0x0a0a"`, `"0x0b0b"`)))
	if r := wantSuccess(t, w); r.Results[0].Success || !r.Results[1].Success || r.Nullifier != "0x"+strings.Repeat("0", 60)+"0b0b" {
		t.Fatalf("mixed: %s", w.Body)
	}
}

// TestV4WithoutChecker: a server without 4.0 verification answers each
// 4.0 item feature_unavailable, never 500.
func TestV4WithoutChecker(t *testing.T) {
	e := newEnv(t)
	f := wantFailure(t, e.post("/api/v4/verify/"+testRPID, v4Body("")), http.StatusBadRequest, codeAllFailed)
	if f.Results[0].Code != record.CodeFeatureUnavailable {
		t.Fatalf("%+v", f.Results)
	}
}

// TestV4ItemIn30Request: a protocol 4.0 item in a 3.0 request fails on its
// own with a per-item code; the 3.0 items beside it are checked and
// recorded as usual.
func TestV4ItemIn30Request(t *testing.T) {
	e := newEnv(t)
	f := wantFailure(t, e.post("/api/v4/verify/"+testRPID, body(items(v4Item))), http.StatusBadRequest, codeAllFailed)
	if len(f.Results) != 1 || f.Results[0].Code != record.CodeInvalidProof || f.Results[0].Identifier != "selfie" {
		t.Fatalf("results %+v", f.Results)
	}
	w := e.post("/api/v4/verify/"+testRPID, body(items(v4Item, validItem)))
	if r := wantSuccess(t, w); r.Results[0].Success || r.Results[0].Code != record.CodeInvalidProof || !r.Results[1].Success {
		t.Fatalf("mixed: %s", w.Body)
	}
}

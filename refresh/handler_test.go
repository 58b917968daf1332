package refresh

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/credential"
	"worldid/field"
	"worldid/internal/httpapi"
	"worldid/record"
)

const (
	sub1 = "0x0000000000000000000000000000000000000000000000000000000000000abc"
	sub2 = "0x0000000000000000000000000000000000000000000000000000000000000def"
)

// issued decodes and checks a 200 answer's credential against the issuer.
func (e *testEnv) issued(r *result) *credential.Credential {
	e.t.Helper()
	r.expect(e.t, http.StatusOK, "")
	data, err := base64.StdEncoding.Strict().DecodeString(r.Credential)
	if err != nil {
		e.t.Fatalf("credential is not padded standard base64: %v", err)
	}
	c, err := credential.Parse(data)
	if err != nil {
		e.t.Fatal(err)
	}
	if !c.Verify(e.issuer.Public()) {
		e.t.Fatal("credential does not verify under the issuer key")
	}
	if canon, _ := c.MarshalJSON(); !bytes.Equal(canon, data) {
		e.t.Fatal("credential is not the canonical v0.3.0 JSON")
	}
	return c
}

func TestCredentialOnlyRefresh(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 1)
	e.signup(id, "signup-1")
	// The form sub may be short and uppercase (PrefixedHex); the proof
	// and the store use its canonical form.
	header := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	c := e.issued(e.do(idCommOf(id), []part{{name: "sub", value: "0xABC"}, {name: "encrypted_user_id", value: "secret"}}, header))

	idComm, _ := field.ParseStrict(idCommOf(id))
	sub, _ := field.ParseStrict(sub1)
	want := credential.Credential{
		IssuerSchemaID:  1,
		Sub:             sub,
		GenesisIssuedAt: t0, // first issuance, not the signup's verified_at
		ExpiresAt:       uint64(t0 + 3*365*24*3600),
	}
	want.Claims[0] = credential.RefreshClaim(idComm, sub, t0)
	if c.IssuerSchemaID != want.IssuerSchemaID || c.Sub != want.Sub || c.GenesisIssuedAt != want.GenesisIssuedAt ||
		c.ExpiresAt != want.ExpiresAt || c.Claims != want.Claims || !c.AssociatedDataHash.IsZero() {
		t.Errorf("credential fields differ: %+v", c)
	}
	if len(e.store.refreshes) != 1 {
		t.Fatalf("%d refreshes recorded", len(e.store.refreshes))
	}
	got := e.store.refreshes[0]
	canon, _ := c.MarshalJSON()
	if got.Credential != string(canon) || !strings.HasPrefix(got.ProofKey, proofKeyPrefix) || got.ProofExpiresAt.Unix() != t0+300+60 { // the window plus maxReplicaSkew
		t.Errorf("recorded credential %q, proof key %q until %v", got.Credential, got.ProofKey, got.ProofExpiresAt)
	}
	got.Credential, got.ProofKey, got.ProofExpiresAt = "", "", time.Time{}
	if got != (record.Refresh{IDCommitment: idCommOf(id), Sub: sub1, At: time.Unix(t0, 0).UTC(), CredentialID: c.ID}) {
		t.Errorf("recorded %+v", got)
	}
	if e.store.pin(t, idCommOf(id)) != sub1 {
		t.Error("sub not pinned in canonical form")
	}
	if strings.Contains(e.store.state(t), "secret") {
		t.Error("encrypted_user_id was stored")
	}

	t.Run("replay", func(t *testing.T) {
		before := e.store.state(t)
		e.do(idCommOf(id), []part{{name: "sub", value: sub1}}, header).expect(t, 401, CodeInvalidProof)
		if e.store.state(t) != before {
			t.Error("replay changed the store")
		}
	})
	t.Run("window", func(t *testing.T) {
		e.clock.unix.Store(t0 + 301)
		defer e.clock.unix.Store(t0)
		r := e.do(idCommOf(id), []part{{name: "sub", value: sub1}}, header)
		r.expect(t, 401, CodeInvalidProof)
		if !strings.Contains(r.Message, "timestamp") {
			t.Errorf("window failure message %q", r.Message)
		}
	})
	t.Run("sub mismatch", func(t *testing.T) {
		before := e.store.state(t)
		r := e.do(idCommOf(id), []part{{name: "sub", value: sub2}}, encodeProof(t, proofJSON(t, id, sub2, t0, nil)))
		r.expect(t, 400, CodeSubMismatch)
		if len(e.store.refreshes) != 1 || e.store.pin(t, idCommOf(id)) != sub1 {
			t.Errorf("mismatching refresh changed the pin or records (%s → %s)", before, e.store.state(t))
		}
	})
	t.Run("bad proofs", func(t *testing.T) {
		testBadProofs(t, e, header)
	})
}

// testBadProofs: every malformed or mismatching x-zkp-proof is 401 and
// stores nothing. good is a header already used once.
func testBadProofs(t *testing.T, e *testEnv, good string) {
	raw, _ := base64.StdEncoding.DecodeString(good)
	var p record.RefreshProof
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*record.RefreshProof)) string {
		q := p
		f(&q)
		return encodeProof(t, q)
	}
	other := identity(t, 99)
	zero := "0x" + strings.Repeat("0", 64)
	cases := map[string]string{
		"missing":          "",
		"not base64":       "%%%",
		"unpadded base64":  strings.TrimRight(good, "="),
		"url base64":       strings.NewReplacer("+", "-", "/", "_").Replace(encodeProof(t, map[string]string{"proof": "??>>??"})),
		"not JSON":         base64.StdEncoding.EncodeToString([]byte("proof")),
		"JSON array":       base64.StdEncoding.EncodeToString([]byte("[1]")),
		"unknown member":   encodeProof(t, map[string]any{"id_commitment": p.IDCommitment, "sub": p.Sub, "timestamp": p.Timestamp, "merkle_root": p.MerkleRoot, "nullifier_hash": p.NullifierHash, "proof": p.Proof, "x": 1}),
		"missing member":   encodeProof(t, map[string]any{"id_commitment": p.IDCommitment, "sub": p.Sub, "timestamp": p.Timestamp, "merkle_root": p.MerkleRoot, "proof": p.Proof}),
		"duplicate member": base64.StdEncoding.EncodeToString(append([]byte(`{"sub":"`+p.Sub+`",`), raw[1:]...)),
		"timestamp string": base64.StdEncoding.EncodeToString(bytes.Replace(raw, []byte(`"timestamp":`+strconv.FormatInt(p.Timestamp, 10)), []byte(`"timestamp":"`+strconv.FormatInt(p.Timestamp, 10)+`"`), 1)),
		"timestamp float":  base64.StdEncoding.EncodeToString(bytes.Replace(raw, []byte(`"timestamp":`+strconv.FormatInt(p.Timestamp, 10)), []byte(`"timestamp":`+strconv.FormatInt(p.Timestamp, 10)+`.0`), 1)),
		"short sub":        edit(func(q *record.RefreshProof) { q.Sub = "0xabc" }),
		"other sub":        edit(func(q *record.RefreshProof) { q.Sub = sub2 }),
		"other idComm":     edit(func(q *record.RefreshProof) { q.IDCommitment = idCommOf(other) }),
		"other timestamp":  edit(func(q *record.RefreshProof) { q.Timestamp++ }),
		"wrong root":       edit(func(q *record.RefreshProof) { q.MerkleRoot = zero }),
		"wrong nullifier":  edit(func(q *record.RefreshProof) { q.NullifierHash = zero }),
		"proof not hex":    edit(func(q *record.RefreshProof) { q.Proof = "0x" + strings.Repeat("zz", 256) }),
		"proof zero":       edit(func(q *record.RefreshProof) { q.Proof = "0x" + strings.Repeat("0", 512) }),
		"proof other point": edit(func(q *record.RefreshProof) {
			q.Proof = q.Proof[:2+128] + q.Proof[2+256:2+384] + q.Proof[2+128:2+256] + q.Proof[2+384:]
		}),
		"escaped duplicate":    base64.StdEncoding.EncodeToString(append([]byte(`{"\u0073ub":"`+p.Sub+`",`), raw[1:]...)),
		"too long":             strings.Repeat("A", maxProofHeader+4),
		"uppercase pcp_digest": edit(func(q *record.RefreshProof) { q.PCPDigest = strings.Repeat("A", 64) }),
		"short pcp_digest":     edit(func(q *record.RefreshProof) { q.PCPDigest = strings.Repeat("a", 63) }),
		"pcp_digest not bound": edit(func(q *record.RefreshProof) { q.PCPDigest = strings.Repeat("a", 64) }),
	}
	before := e.store.state(t)
	for name, h := range cases {
		r := e.do(p.IDCommitment, []part{{name: "sub", value: p.Sub}}, h)
		if r.status != 401 || r.Error != CodeInvalidProof {
			t.Errorf("%s: %d %s %s", name, r.status, r.Error, r.Message)
		}
	}
	// A PCP digest the proof does not bind.
	r := e.do(p.IDCommitment, []part{{name: "sub", value: p.Sub}, {partHashesJSON, "{}", true}}, good)
	r.expect(t, 401, CodeInvalidProof)
	// The proof of one identity presented for another's idComm.
	e.do(idCommOf(other), []part{{name: "sub", value: p.Sub}}, good).expect(t, 401, CodeInvalidProof)
	if e.store.state(t) != before {
		t.Error("a rejected proof changed the store")
	}
}

// TestNoSignupRecord: a valid proof in a request that then fails spends
// nothing (a failed request costs no durable write), so the same
// proof works once the signup is imported.
func TestNoSignupRecord(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 2)
	header := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	before := e.store.state(t)
	e.do(idCommOf(id), []part{{name: "sub", value: sub1}}, header).expect(t, 404, CodeNoSignupRecord)
	if e.store.state(t) != before {
		t.Error("404 wrote to the store")
	}
	e.signup(id, "signup-2")
	e.issued(e.do(idCommOf(id), []part{{name: "sub", value: sub1}}, header))
}

// TestRepeatRefresh: an identity that holds a credential gets that same
// credential back (doc/interfaces.md: not a general re-issuance endpoint),
// with the proof still spent; genesis_issued_at is the first issuance and
// does not follow a re-imported signup. With Options.Reissue each refresh
// issues a new credential, keeping genesis_issued_at.
func TestRepeatRefresh(t *testing.T) {
	for _, reissue := range []bool{false, true} {
		t.Run(fmt.Sprint("reissue=", reissue), func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.Reissue = reissue })
			id := identity(t, 4)
			e.signup(id, "signup-4")
			parts := []part{{name: "sub", value: sub1}}
			first := e.do(idCommOf(id), parts, encodeProof(t, proofJSON(t, id, sub1, t0, nil)))
			c1 := e.issued(first)
			if err := e.store.PutSignup(t.Context(), record.Signup{IDCommitment: idCommOf(id), SignupID: "signup-4", VerifiedAt: time.Unix(1_600_000_000, 0)}); err != nil {
				t.Fatal(err)
			}
			e.clock.unix.Add(100)
			header := encodeProof(t, proofJSON(t, id, sub1, t0+100, nil))
			second := e.do(idCommOf(id), parts, header)
			c2 := e.issued(second)
			if c2.GenesisIssuedAt != t0 || c1.GenesisIssuedAt != t0 {
				t.Errorf("genesis_issued_at %d, %d; want the first issuance %d", c1.GenesisIssuedAt, c2.GenesisIssuedAt, t0)
			}
			if same := second.Credential == first.Credential; same == reissue {
				t.Errorf("second credential same as the first: %v", same)
			}
			if want := map[bool]int{false: 1, true: 2}[reissue]; len(e.store.refreshes) != want {
				t.Errorf("%d refreshes recorded, want %d", len(e.store.refreshes), want)
			}
			e.do(idCommOf(id), parts, header).expect(t, 401, CodeInvalidProof) // spent either way
		})
	}
}

// TestRepeatRefreshExpired: a held credential that has expired is not
// returned; a new one is issued.
func TestRepeatRefreshExpired(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Validity = time.Hour })
	id := identity(t, 5)
	e.signup(id, "signup-5")
	parts := []part{{name: "sub", value: sub1}}
	first := e.do(idCommOf(id), parts, encodeProof(t, proofJSON(t, id, sub1, t0, nil)))
	e.issued(first)
	e.clock.unix.Add(3600)
	second := e.do(idCommOf(id), parts, encodeProof(t, proofJSON(t, id, sub1, t0+3600, nil)))
	if c := e.issued(second); second.Credential == first.Credential || c.GenesisIssuedAt != t0 {
		t.Errorf("expired credential returned again, or genesis moved to %d", c.GenesisIssuedAt)
	}
}

// TestConcurrentPins: two first refreshes with different subs at once;
// exactly one pins, the other gets SUB_MISMATCH.
func TestConcurrentPins(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 3)
	e.signup(id, "signup-3")
	subs := []string{sub1, sub2}
	headers := make([]string, len(subs))
	for i, s := range subs {
		headers[i] = encodeProof(t, proofJSON(t, id, s, t0, nil))
	}
	results := make([]*result, len(subs))
	var wg sync.WaitGroup
	for i := range subs {
		wg.Go(func() { results[i] = e.do(idCommOf(id), []part{{name: "sub", value: subs[i]}}, headers[i]) })
	}
	wg.Wait()
	ok := 0
	for _, r := range results {
		switch {
		case r.status == 200:
			ok++
		case r.status != 400 || r.Error != CodeSubMismatch:
			t.Errorf("loser got %d %s", r.status, r.Error)
		}
	}
	if ok != 1 || len(e.store.refreshes) != 1 {
		t.Fatalf("%d successes, %d records", ok, len(e.store.refreshes))
	}
	if e.store.pin(t, idCommOf(id)) != e.store.refreshes[0].Sub {
		t.Error("pinned sub is not the winner's")
	}
}

// TestHeldCredentialStaysWithItsSub replays TestConcurrentPins' losing
// interleaving deterministically: the pin is read before the winner
// commits, so only the recorded refreshes show the other sub.
func TestHeldCredentialStaysWithItsSub(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 3)
	e.signup(id, "signup-3")
	e.issued(e.do(idCommOf(id), []part{{name: "sub", value: sub1}}, encodeProof(t, proofJSON(t, id, sub1, t0, nil))))
	e.store.hidePin(idCommOf(id))
	r := e.do(idCommOf(id), []part{{name: "sub", value: sub2}}, encodeProof(t, proofJSON(t, id, sub2, t0, nil)))
	r.expect(t, 400, CodeSubMismatch)
}

// pcpEnv is a handler whose store trusts the Orb keys of the PCP vectors,
// and the last valid vector.
func pcpEnv(t *testing.T) (*testEnv, *pcpVector) {
	f := loadPCP(t)
	if len(f.Vectors) == 0 {
		t.Skip("pcp_v2_3.json has no valid PCP in its vectors list")
	}
	e := newEnv(t, nil)
	for orb, names := range f.OrbKeyRegistry {
		// A stored key that does not parse is skipped, not fatal.
		pems := []string{"not a PEM key"}
		for _, n := range names {
			pems = append(pems, f.Keys[n].PublicKeyPEM)
		}
		for _, pem := range pems {
			if err := e.store.AddOrbKey(t.Context(), orb, pem); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e, &f.Vectors[len(f.Vectors)-1]
}

func withSub(ps []part) []part { return append(ps, part{name: "sub", value: sub1}) }

// TestPCPUpgradesHeldCredential: an identity holding a credential-only
// credential that refreshes with a PCP gets a new credential whose
// claims[0] is the sponge over hashes.json; a later credential-only
// refresh returns that PCP credential, not a downgraded one.
func TestPCPUpgradesHeldCredential(t *testing.T) {
	e, v := pcpEnv(t)
	alice := identity(t, 4)
	e.signup(alice, v.Form["signup_id"])
	plain := e.do(idCommOf(alice), withSub(nil), encodeProof(t, proofJSON(t, alice, sub1, t0, nil)))
	e.issued(plain)

	e.clock.unix.Add(1)
	withPCP := e.do(idCommOf(alice), withSub(v.parts()), encodeProof(t, proofJSON(t, alice, sub1, t0+1, []byte(v.HashesJSON))))
	c := e.issued(withPCP)
	if withPCP.Credential == plain.Credential || v.Claims0 == nil || field.Format(&c.Claims[0]) != *v.Claims0 {
		t.Fatalf("PCP refresh answered claims[0] = %s (same credential as before: %v), want %v",
			field.Format(&c.Claims[0]), withPCP.Credential == plain.Credential, v.Claims0)
	}

	e.clock.unix.Add(1)
	again := e.do(idCommOf(alice), withSub(nil), encodeProof(t, proofJSON(t, alice, sub1, t0+2, nil)))
	if e.issued(again); again.Credential != withPCP.Credential {
		t.Error("a credential-only refresh after the PCP one did not return the PCP credential")
	}
	if len(e.store.refreshes) != 2 {
		t.Errorf("%d refreshes recorded, want 2", len(e.store.refreshes))
	}
}

func TestPCPRefresh(t *testing.T) {
	e, v := pcpEnv(t)
	hj := []byte(v.HashesJSON)

	alice, bob, carol := identity(t, 4), identity(t, 5), identity(t, 6)
	e.signup(alice, v.Form["signup_id"])
	e.signup(bob, v.Form["signup_id"])
	e.signup(carol, "another-signup")

	t.Run("failing check", func(t *testing.T) {
		parts := withSub(v.parts())
		for i := range parts {
			if parts[i].name == "iris_code_shares_1" {
				parts[i].value += " "
			}
		}
		r := e.do(idCommOf(alice), parts, encodeProof(t, proofJSON(t, alice, sub1, t0-1, hj)))
		r.expect(t, 422, CodePCPValidationFailed)
		if !strings.Contains(r.Message, "iris_share_hash") {
			t.Errorf("message %q does not name the check", r.Message)
		}
	})
	t.Run("partial", func(t *testing.T) {
		r := e.do(idCommOf(alice), withSub([]part{{partHashesJSON, v.HashesJSON, true}}), encodeProof(t, proofJSON(t, alice, sub1, t0-2, hj)))
		r.expect(t, 422, CodePCPValidationFailed)
		if !strings.Contains(r.Message, "partial") || !strings.Contains(r.Message, "hashes.sign") {
			t.Errorf("message %q", r.Message)
		}
	})
	t.Run("signup_id", func(t *testing.T) {
		r := e.do(idCommOf(carol), withSub(v.parts()), encodeProof(t, proofJSON(t, carol, sub1, t0, hj)))
		r.expect(t, 422, CodePCPValidationFailed)
		if !strings.Contains(r.Message, "signup_id") {
			t.Errorf("message %q", r.Message)
		}
	})
	if len(e.store.refreshes) != 0 {
		t.Fatal("a failed PCP refresh was recorded")
	}

	c := e.issued(e.do(idCommOf(alice), withSub(v.parts()), encodeProof(t, proofJSON(t, alice, sub1, t0, hj))))
	if v.Claims0 == nil || field.Format(&c.Claims[0]) != *v.Claims0 {
		t.Errorf("claims[0] = %s, want %v", field.Format(&c.Claims[0]), v.Claims0)
	}
	for i := 1; i < credential.MaxClaims; i++ {
		if !c.Claims[i].IsZero() {
			t.Errorf("claims[%d] ≠ 0", i)
		}
	}
	if got := e.store.refreshes[0].PCPDigest; got != v.HashesJSONSHA256 {
		t.Errorf("recorded digest %s", got)
	}

	t.Run("reuse by another identity", func(t *testing.T) {
		r := e.do(idCommOf(bob), withSub(v.parts()), encodeProof(t, proofJSON(t, bob, sub1, t0, hj)))
		r.expect(t, 422, CodePCPValidationFailed)
		if !strings.Contains(r.Message, "pcp_reuse") {
			t.Errorf("message %q", r.Message)
		}
		if e.store.pin(t, idCommOf(bob)) != "" {
			t.Error("reuse pinned a sub")
		}
	})
}

// TestRequestErrors covers every failure of the envelope (before the
// proof check) and of the body (after it, with a valid proof); none may
// write anything.
func TestRequestErrors(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 7)
	idComm := idCommOf(id)
	proof := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	okParts := []part{{name: "sub", value: sub1}}
	body, ct := multipartBody(t, okParts)
	req := func(method, target string, body []byte) *http.Request {
		return httptest.NewRequest(method, target, bytes.NewReader(body))
	}
	before := e.store.state(t)
	check := func(name string, r *result, status int, code string) {
		t.Helper()
		if r.status != status || r.Error != code || r.Success {
			t.Errorf("%s: %d %q %s, want %d %q", name, r.status, r.Error, r.Message, status, code)
		}
	}
	get := e.doRaw(req(http.MethodGet, Path+"?idComm="+idComm, nil), ct, "")
	check("GET", get, 405, CodeMethodNotAllowed)
	if get.header.Get("Allow") != http.MethodPost {
		t.Errorf("405 Allow = %q", get.header.Get("Allow"))
	}
	check("no idComm", e.doRaw(req(http.MethodPost, Path, body), ct, ""), 400, CodeInvalidRequest)
	check("two idComm", e.doRaw(req(http.MethodPost, Path+"?idComm=1&idComm=1", body), ct, ""), 400, CodeInvalidRequest)
	check("idComm ≥ p", e.doRaw(req(http.MethodPost, Path+"?idComm=0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", body), ct, ""), 400, CodeInvalidRequest)
	check("idComm leading zero", e.doRaw(req(http.MethodPost, Path+"?idComm=01", body), ct, ""), 400, CodeInvalidRequest)
	check("form urlencoded", e.doRaw(req(http.MethodPost, Path+"?idComm=1", []byte("sub=0x1")), "application/x-www-form-urlencoded", ""), 400, CodeInvalidRequest)
	check("no boundary", e.doRaw(req(http.MethodPost, Path+"?idComm=1", body), "multipart/form-data", ""), 400, CodeInvalidRequest)
	check("mixed", e.doRaw(req(http.MethodPost, Path+"?idComm=1", body), strings.Replace(ct, "form-data", "mixed", 1), ""), 400, CodeInvalidRequest)
	// The proof is in the header and is checked before the body is read.
	check("proof before body", e.doRaw(req(http.MethodPost, Path+"?idComm="+idComm, body[:len(body)-10]), ct, "garbage"), 401, CodeInvalidProof)
	check("truncated", e.doRaw(req(http.MethodPost, Path+"?idComm="+idComm, body[:len(body)-10]), ct, proof), 400, CodeInvalidRequest)
	check("empty body", e.doRaw(req(http.MethodPost, Path+"?idComm="+idComm, nil), ct, proof), 400, CodeInvalidRequest)
	check("duplicate sub", e.do(idComm, []part{{name: "sub", value: sub1}, {name: "sub", value: sub1}}, proof), 400, CodeInvalidRequest)
	check("duplicate PCP field", e.do(idComm, []part{{name: "sub", value: sub1}, {name: "orb_id", value: "a"}, {name: "orb_id", value: "a"}}, proof), 400, CodeInvalidRequest)
	check("unknown field", e.do(idComm, []part{{name: "sub", value: sub1}, {name: "subx", value: "1"}}, proof), 400, CodeInvalidRequest)
	check("nameless field", e.do(idComm, []part{{name: "", value: "1"}}, proof), 400, CodeInvalidRequest)
	cte, cteType := rawPart(t, "Content-Transfer-Encoding: base64\r\n", "MHgx")
	check("base64 part", e.doRaw(req(http.MethodPost, Path+"?idComm="+idComm, cte), cteType, proof), 400, CodeInvalidRequest)

	for name, sub := range map[string]string{
		"missing":       "",
		"no prefix":     "abc",
		"0X prefix":     "0Xabc",
		"empty digits":  "0x",
		"65 digits":     "0x" + strings.Repeat("0", 65),
		"not hex":       "0xg",
		"≥ p":           "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001",
		"whitespace":    " 0x1",
		"decimal":       "123",
		"negative":      "-0x1",
		"trailing text": "0x1 ",
	} {
		parts := []part{{name: "sub", value: sub}}
		if name == "missing" {
			parts = []part{{name: "encrypted_user_id", value: "x"}}
		}
		check("sub "+name, e.do(idComm, parts, proof), 400, CodeInvalidSub)
	}
	check("sub other than the proof's", e.do(idComm, []part{{name: "sub", value: sub2}}, proof), 401, CodeInvalidProof)
	check("hashes.json the proof does not name", e.do(idComm, []part{{name: "sub", value: sub1}, {partHashesJSON, "{}", true}}, proof), 401, CodeInvalidProof)
	check("no proof", e.do(idComm, okParts, ""), 401, CodeInvalidProof)
	if e.store.state(t) != before {
		t.Error("a rejected request changed the store")
	}
}

// rawPart builds a one-part body with extra part headers.
func rawPart(t *testing.T, headers, value string) ([]byte, string) {
	const b = "BOUNDARY"
	body := "--" + b + "\r\nContent-Disposition: form-data; name=\"sub\"\r\n" + headers + "\r\n" + value + "\r\n--" + b + "--\r\n"
	return []byte(body), "multipart/form-data; boundary=" + b
}

func TestDisabled(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.store.SetRefreshEnabled(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	r := e.do("1", []part{{name: "sub", value: sub1}}, "")
	if r.status != 503 || r.Success || r.Error != "" || strings.Contains(r.raw, `"error"`) {
		t.Fatalf("disabled: %d %s", r.status, r.raw)
	}
}

// TestStorageErrors: storage failures are 503 or 500 with a generic
// message, never the cause.
func TestStorageErrors(t *testing.T) {
	e := newEnv(t, nil)
	for cause, want := range map[error]struct {
		status int
		code   string
	}{
		fmt.Errorf("disk full: %w", record.ErrUnavailable): {503, CodeServiceUnavailable},
		errors.New("secret internal detail"):               {500, CodeInternal},
		fmt.Errorf("commit: %w", context.Canceled):         {httpapi.StatusClientClosed, CodeInternal},
	} {
		e.store.fail = cause
		r := e.do("1", []part{{name: "sub", value: sub1}}, "")
		r.expect(t, want.status, want.code)
		if strings.Contains(r.raw, "disk full") || strings.Contains(r.raw, "secret") {
			t.Errorf("cause leaked: %s", r.raw)
		}
	}
}

func TestPayloadTooLarge(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 7)
	proof := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	before := e.store.state(t)
	r := httptest.NewRequest(http.MethodPost, Path+"?idComm=1", strings.NewReader(""))
	r.ContentLength = maxBody + 1
	e.doRaw(r, "multipart/form-data; boundary=x", "").expect(t, 413, CodePayloadTooLarge)

	for name, size := range map[string]int{partHashesSign: maxHashesSign + 1, "sub": maxTextPart + 1, partHashesJSON: maxHashesJSON + 1, "iris_code_shares_0": maxShare + 1} {
		e.do(idCommOf(id), []part{{name: name, value: strings.Repeat("a", size)}}, proof).expect(t, 413, CodePayloadTooLarge)
	}
	// Unknown length: a preamble of short lines beyond the total cap.
	big := &repeatReader{n: maxBody + 1}
	r = httptest.NewRequest(http.MethodPost, Path+"?idComm="+idCommOf(id), big)
	r.ContentLength = -1
	e.doRaw(r, "multipart/form-data; boundary=x", proof).expect(t, 413, CodePayloadTooLarge)
	if e.store.state(t) != before {
		t.Error("413 changed the store")
	}
}

// TestPartHeadersBounded: part headers count against maxFraming, so an
// authenticated client cannot make mime/multipart hold its 10 MiB of
// headers per part.
func TestPartHeadersBounded(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 7)
	e.signup(id, "signup-7")
	proof := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	before := e.store.state(t)
	body := "--x\r\nContent-Disposition: form-data; name=\"sub\"\r\nX-Padding: " +
		strings.Repeat("a", 2<<20) + "\r\n\r\n" + sub1 + "\r\n--x--\r\n"
	r := httptest.NewRequest(http.MethodPost, Path+"?idComm="+idCommOf(id), strings.NewReader(body))
	res := e.doRaw(r, "multipart/form-data; boundary=x", proof)
	res.expect(t, 413, CodePayloadTooLarge)
	if !strings.Contains(res.Message, "part headers") {
		t.Errorf("message %q does not name the part headers", res.Message)
	}
	if e.store.state(t) != before {
		t.Error("413 changed the store")
	}
}

// repeatReader yields n bytes of 1000-byte lines "aa…a\r\n".
type repeatReader struct{ n, i int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for j := range k {
		p[j] = 'a'
		switch r.i % 1000 {
		case 998:
			p[j] = '\r'
		case 999:
			p[j] = '\n'
		}
		r.i++
	}
	r.n -= k
	return k, nil
}

// TestRateLimits: every request spends its source's budget (IPv6 per
// /64); only a verified proof spends the identity's, so strangers naming
// a public idComm cannot lock its holder out.
func TestRateLimits(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.PerIP = Rate{Burst: 2, Every: 30 * time.Second}
		o.PerIDComm = Rate{Burst: 1, Every: time.Hour}
	})
	victim := identity(t, 3)
	e.signup(victim, "signup-3")
	parts := []part{{name: "sub", value: sub1}}
	e.do(idCommOf(victim), parts, "").expect(t, 401, CodeInvalidProof)
	e.do(idCommOf(victim), parts, "").expect(t, 401, CodeInvalidProof)
	r := e.do(idCommOf(victim), parts, "")
	r.expect(t, 429, CodeRateLimitExceeded)
	if r.header.Get("Retry-After") != "30" {
		t.Errorf("per-IP Retry-After %q", r.header.Get("Retry-After"))
	}
	// Junk naming the victim from many addresses never touches its budget.
	for i := range 20 {
		e.remote = fmt.Sprintf("198.51.100.%d:1", i)
		e.do(idCommOf(victim), parts, "").expect(t, 401, CodeInvalidProof)
	}
	e.remote = "[2001:db8::1]:443"
	e.issued(e.do(idCommOf(victim), parts, encodeProof(t, proofJSON(t, victim, sub1, t0, nil))))
	e.remote = "[2001:db8::2]:443" // same /64: its second token
	r = e.do(idCommOf(victim), parts, encodeProof(t, proofJSON(t, victim, sub1, t0+1, nil)))
	r.expect(t, 429, CodeRateLimitExceeded)
	if r.header.Get("Retry-After") != "3600" {
		t.Errorf("per-idComm Retry-After %q", r.header.Get("Retry-After"))
	}
	e.do(idCommOf(victim), parts, "").expect(t, 429, CodeRateLimitExceeded) // the /64's bucket is empty
	e.clock.unix.Add(30)
	e.do(idCommOf(victim), parts, "").expect(t, 401, CodeInvalidProof)
}

func TestNewValidates(t *testing.T) {
	e := newEnv(t, nil)
	for name, clear := range map[string]func(*Options){
		"Store":        func(o *Options) { o.Store = nil },
		"VerifyingKey": func(o *Options) { o.VerifyingKey = nil },
		"IssuerKey":    func(o *Options) { o.IssuerKey = nil },
	} {
		o := e.h.o
		clear(&o)
		if h, err := New(o); err == nil || h != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: %v, %v", name, h, err)
		}
	}
	o := e.h.o
	o.Validity = -time.Second
	if _, err := New(o); err == nil {
		t.Error("New accepted a negative validity")
	}
	o = e.h.o
	o.PerIP = Rate{Burst: 3}
	if _, err := New(o); err == nil {
		t.Error("New accepted a rate without an interval")
	}
}

// TestSelfVerifyCatchesBadKey: an issuer key that disagrees with the
// handler's cached public key makes self-verification fail.
func TestSelfVerifyCatchesBadKey(t *testing.T) {
	e := newEnv(t, nil)
	other := newEnv(t, nil)
	var sub fr.Element
	sub.SetUint64(1)
	stranger, err := babyjub.NewPrivateKey(bytes.Repeat([]byte{5}, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	e.h.issuer = stranger.Public()
	if _, _, err := e.h.buildCredential(sub, sub, time.Unix(0, 0), time.Unix(t0, 0)); err == nil {
		t.Error("self-verification passed with a wrong issuer key")
	}
	if _, _, err := other.h.buildCredential(sub, sub, time.Unix(-1, 0), time.Unix(t0, 0)); err == nil {
		t.Error("genesis before 1970 accepted")
	}
}

// TestRepeatedProofHeader: two x-zkp-proof headers, even both valid, are
// ambiguous and count as no valid proof.
func TestRepeatedProofHeader(t *testing.T) {
	e := newEnv(t, nil)
	id := identity(t, 1)
	e.signup(id, "signup-1")
	header := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	body, ct := multipartBody(t, []part{{name: "sub", value: sub1}})
	r := httptest.NewRequest(http.MethodPost, Path+"?idComm="+idCommOf(id), bytes.NewReader(body))
	r.Header.Add("x-zkp-proof", header)
	r.Header.Add("x-zkp-proof", header)
	e.doRaw(r, ct, "").expect(t, http.StatusUnauthorized, CodeInvalidProof)
	if len(e.store.refreshes) != 0 {
		t.Fatal("a refresh was recorded")
	}
}

// TestFullTablesRefuseNoOne: junk naming many identities from many
// addresses (105,000 such requests once filled the table and every new
// identity got 429) cannot make the limiters refuse a newcomer.
func TestFullTablesRefuseNoOne(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.PerIP = Rate{Burst: 2, Every: time.Hour}
		o.PerIDComm = Rate{Burst: 2, Every: time.Hour}
		o.MaxRateKeys = 10
	})
	parts := []part{{name: "sub", value: sub1}}
	for i := range 100 {
		e.remote = fmt.Sprintf("198.51.100.%d:1", i)
		for range 2 {
			e.do(fmt.Sprint(i+1), parts, "").expect(t, 401, CodeInvalidProof)
		}
	}
	id := identity(t, 6)
	e.signup(id, "signup-6")
	e.remote = "203.0.113.9:1"
	e.issued(e.do(idCommOf(id), parts, encodeProof(t, proofJSON(t, id, sub1, t0, nil))))
	if n := e.h.perIP.Keys(); n > 10 {
		t.Errorf("per-IP table grew to %d", n)
	}
}

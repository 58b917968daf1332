package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"worldid/admin"
	"worldid/internal/vectors"
	"worldid/internal/wallet"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

type verifyAnswer struct {
	status    int
	request   string
	Success   bool   `json:"success"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	CreatedAt string `json:"created_at"`
	Nullifier string `json:"nullifier"`
}

func postVerify(t *testing.T, ctx context.Context, p *serverProc, rpID string, body []byte) verifyAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.public+"/api/v4/verify/"+rpID, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := verifyAnswer{status: resp.StatusCode, request: string(body)}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return a
}

func verifyBothEnvironments(t *testing.T, ctx context.Context, p *serverProc, rp *relyingParty, w *wallet.Wallet) verifyAnswer {
	var first verifyAnswer
	for _, env := range []string{"production", "staging"} {
		item, err := w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "e2e-vote", Signal: "yes", Environment: env})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": rand.Text(), "action": "e2e-vote",
			"environment": env, "responses": []wallet.ResponseItem{item}})
		a := postVerify(t, ctx, p, rp.app.RPID, body)
		if a.status != 200 || !a.Success || a.Nullifier != item.Nullifier {
			t.Fatalf("%s: %+v", env, a)
		}
		if env == "production" {
			first = a
		}
	}
	// A proof against a production root sent to staging: the trees differ
	// once a second identity joins production only.
	newWallet(t, ctx, p, [2]string{"orb", "production"})
	item, err := w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "e2e-cross", Signal: "yes"})
	if err != nil {
		t.Fatal(err)
	}
	cross, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": "e2e-cross",
		"environment": "staging", "responses": []wallet.ResponseItem{item}})
	if b := postVerify(t, ctx, p, rp.app.RPID, cross); b.status != 400 || b.Code != "all_verifications_failed" {
		t.Errorf("production proof at staging: %+v", b)
	}
	// max_verifications: a fresh action limited to one use.
	if _, err := p.adminClient.SetActionLimit(ctx, admin.ActionLimitRequest{RPID: rp.app.RPID, Action: "once", MaxVerifications: 1}); err != nil {
		t.Fatal(err)
	}
	item, err = w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "once", Signal: "x"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": "once", "responses": []wallet.ResponseItem{item}})
	if a := postVerify(t, ctx, p, rp.app.AppID, body); a.status != 200 {
		t.Fatalf("first use via app_ id: %+v", a)
	}
	if a := postVerify(t, ctx, p, rp.app.RPID, body); a.status != 400 || a.Code != "max_verifications_reached" {
		t.Fatalf("second use: %+v", a)
	}
	return first
}

// ---- Values at and beyond the edges ----

// bn254R is p, the BN254 scalar field modulus (doc/crypto.md §a), in "0x" + 64 hex.
var bn254R = "0x" + hex.EncodeToString(fr.Modulus().FillBytes(make([]byte, 32)))

// proofWords splits an ABI proof ("0x" + 8 big-endian words) into words
// [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y] (doc/crypto.md §g).
func proofWords(t *testing.T, abi string) [8][32]byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(abi, "0x"))
	if err != nil || len(b) != 8*32 {
		t.Fatalf("not an ABI proof: %q", abi)
	}
	var w [8][32]byte
	for i := range w {
		copy(w[i][:], b[32*i:])
	}
	return w
}

func editProof(t *testing.T, abi string, edit func(w *[8][32]byte)) string {
	w := proofWords(t, abi)
	edit(&w)
	return "0x" + hex.EncodeToString(bytes.Join([][]byte{w[0][:], w[1][:], w[2][:], w[3][:], w[4][:], w[5][:], w[6][:], w[7][:]}, nil))
}

// twistPointOutsideSubgroup is a point on BN254's G2 curve (the twist)
// that is not in the order-r subgroup: SvdW maps to the curve without
// clearing the cofactor.
func twistPointOutsideSubgroup(t *testing.T) bn254.G2Affine {
	var u bn254.E2
	for i := uint64(1); i < 64; i++ {
		u.A0.SetUint64(i)
		if q := bn254.MapToCurve2(&u); q.IsOnCurve() && !q.IsInSubGroup() {
			return q
		}
	}
	t.Fatal("no twist point outside the subgroup")
	return bn254.G2Affine{}
}

func (e *hostileEnv) prove(t *testing.T, action string) wallet.ResponseItem {
	t.Helper()
	item, err := e.w.Prove(e.ctx, wallet.ProofRequest{AppID: e.rp.app.AppID, Action: action, Signal: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	return item
}

func verifyRequest(action string, items ...string) string {
	return `{"protocol_version":"3.0","nonce":"n","action":` + quoteJSON(action) + `,"responses":[` + strings.Join(items, ",") + `]}`
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// itemJSON encodes a proof item with members replaced (a nil value
// deletes the member).
func itemJSON(t *testing.T, item wallet.ResponseItem, replace map[string]any) string {
	t.Helper()
	var m map[string]any
	b, _ := json.Marshal(item)
	json.Unmarshal(b, &m)
	for k, v := range replace {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func attributeIs(want string) func(*testing.T, reply) {
	return func(t *testing.T, r reply) {
		var b struct{ Attribute string }
		if json.Unmarshal(r.body, &b) != nil || b.Attribute != want {
			t.Errorf("attribute %q, want %q", b.Attribute, want)
		}
	}
}

func resultCodeIs(want string) func(*testing.T, reply) {
	return func(t *testing.T, r reply) {
		var b struct {
			Results []struct {
				Success bool
				Code    string
			}
		}
		if json.Unmarshal(r.body, &b) != nil || len(b.Results) != 1 || b.Results[0].Success || b.Results[0].Code != want {
			t.Errorf("results %s, want one failure %q", r.body, want)
		}
	}
}

func (e *hostileEnv) hostileVerify(t *testing.T) {
	item := e.prove(t, "hostile-verify")
	once := e.prove(t, "hostile-once")
	if _, err := e.p.adminClient.SetActionLimit(e.ctx, admin.ActionLimitRequest{RPID: e.rp.app.RPID, Action: "hostile-once", MaxVerifications: 1}); err != nil {
		t.Fatal(err)
	}
	target := e.p.public + "/api/v4/verify/" + e.rp.app.RPID
	onceBody := verifyRequest("hostile-once", itemJSON(t, once, nil))
	if r := call(http.MethodPost, target, "application/json", onceBody)(t); r.status != http.StatusOK {
		t.Fatalf("first use: %d %s", r.status, r.body)
	}
	const ct = "application/json"
	good := itemJSON(t, item, nil)
	post := func(body string) func(*testing.T) reply { return call(http.MethodPost, target, ct, body) }
	withItem := func(replace map[string]any) func(*testing.T) reply {
		return post(verifyRequest("hostile-verify", itemJSON(t, item, replace)))
	}
	withProof := func(edit func(w *[8][32]byte)) func(*testing.T) reply {
		return withItem(map[string]any{"proof": editProof(t, item.Proof, edit)})
	}
	g2 := twistPointOutsideSubgroup(t)
	q := fp.Modulus()
	invalid := func(attribute string, send func(*testing.T) reply) hostileCase {
		return hostileCase{name: attribute, send: send, status: 400, code: "validation_error", check: attributeIs(attribute)}
	}
	cases := []hostileCase{
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: "method_not_allowed"},
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", verifyRequest("a", good)), status: 415, code: "invalid_content_type"},
		{name: "no content type", send: call(http.MethodPost, target, "", verifyRequest("a", good)), status: 415, code: "invalid_content_type"},
		{name: "latin1 charset", send: call(http.MethodPost, target, "application/json; charset=iso-8859-1", verifyRequest("a", good)), status: 415, code: "invalid_content_type"},
		{name: "body over 64 KiB", send: post(verifyRequest(strings.Repeat("a", 64<<10), good)), status: 413, code: "request_too_large"},
		{name: "not JSON", send: post("protocol_version=3.0"), status: 400, code: "invalid_request"},
		{name: "two objects", send: post(verifyRequest("a", good) + "{}"), status: 400, code: "invalid_request"},
		invalid("action", post(strings.Replace(verifyRequest("hostile-verify", good), `"action"`, `"action":"other","action"`, 1))),
		invalid("responses[0].nullifier", post(verifyRequest("hostile-verify", strings.Replace(good, `"nullifier"`, `"nullifier":"0x1","nullifier"`, 1)))),
		invalid("protocol_version", post(strings.Replace(verifyRequest("a", good), `"3.0"`, `"5.0"`, 1))),
		invalid("nonce", post(strings.Replace(verifyRequest("a", good), `"3.0"`, `"4.0"`, 1))), // a 4.0 nonce is a number
		// A 3.0 item in a 4.0 request fails on its own, per item.
		{name: "3.0 item in a 4.0 request", send: post(strings.Replace(strings.Replace(verifyRequest("a", good), `"3.0"`, `"4.0"`, 1), `"nonce":"n"`, `"nonce":"1"`, 1)),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		// With a valid proof, neither may be ignored.
		invalid("session_id", post(strings.Replace(verifyRequest("hostile-verify", good), "{", `{"session_id":"0x01",`, 1))),
		{name: "invalid UTF-8 in action", send: post(strings.Replace(verifyRequest("hostile-verify", good), `"hostile-verify"`, "\"hostile-verify\xff\"", 1)),
			status: 400, code: "invalid_request"},
		invalid("responses", post(verifyRequest("hostile-verify"))),
		invalid("responses", post(verifyRequest("hostile-verify", strings.Split(strings.Repeat(good+"\n", 17), "\n")[:17]...))),
		invalid("responses[0].nullifier", withItem(map[string]any{"nullifier": bn254R})),
		invalid("responses[0].merkle_root", withItem(map[string]any{"merkle_root": "0x" + strings.Repeat("f", 64)})),
		invalid("responses[0].signal_hash", withItem(map[string]any{"signal_hash": strings.ToUpper(item.SignalHash)})),
		invalid("responses[0].signal_hash", withItem(map[string]any{"signal_hash": bn254R})),
		invalid("responses[0].max_age", withItem(map[string]any{"max_age": 3599})),
		invalid("responses[0].max_age", post(verifyRequest("hostile-verify", strings.Replace(good, `{`, `{"max_age":3600.0,`, 1)))),
		invalid("responses[0].identifier", withItem(map[string]any{"identifier": "../orb"})),
		invalid("responses[0].proof", withItem(map[string]any{"proof": nil})),
		{name: "B on the twist outside the subgroup", send: withProof(func(w *[8][32]byte) {
			w[2], w[3], w[4], w[5] = g2.X.A1.Bytes(), g2.X.A0.Bytes(), g2.Y.A1.Bytes(), g2.Y.A0.Bytes()
		}), status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "B in snarkjs coordinate order", send: withProof(func(w *[8][32]byte) {
			w[2], w[3], w[4], w[5] = w[3], w[2], w[5], w[4]
		}), status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "A off the curve", send: withProof(func(w *[8][32]byte) {
			w[0], w[1] = [32]byte{31: 1}, [32]byte{31: 1}
		}), status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "A.x equal to q", send: withProof(func(w *[8][32]byte) { q.FillBytes(w[0][:]) }),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "C at infinity", send: withProof(func(w *[8][32]byte) { w[6], w[7] = [32]byte{}, [32]byte{} }),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "proof with 0X prefix", send: withItem(map[string]any{"proof": "0X" + item.Proof[2:]}),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_format")},
		{name: "proof for another action", send: post(verifyRequest("hostile-other", good)),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "max_verifications reached", send: post(onceBody), status: 400, code: "max_verifications_reached"},
		{name: "upper-case rp id", send: call(http.MethodPost, e.p.public+"/api/v4/verify/"+strings.ToUpper(e.rp.app.RPID), ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "unknown rp id", send: call(http.MethodPost, e.p.public+"/api/v4/verify/rp_0000000000000000", ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "unknown app id", send: call(http.MethodPost, e.p.public+"/api/v4/verify/app_"+strings.Repeat("0", 32), ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "encoded traversal", send: call(http.MethodPost, e.p.public+"/api/v4/verify/..%2F..%2Fadmin%2Fapps", ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "deeper path", send: call(http.MethodPost, target+"/x", ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		// net/http cleans dot segments with a redirect to the same server.
		{name: "dot segments", send: call(http.MethodPost, e.p.public+"/api/v4/verify/../../admin/apps", ct, verifyRequest("a", good)), status: 307, code: ""},
	}
	runHostile(t, e.dataDir, cases)
}

// hostileVerifyVectors sends every VerifyHex vector of field_element.json
// as a merkle_root: a rejected encoding and a value ≥ p are validation
// errors naming the attribute; anything else reaches the proof check.
func (e *hostileEnv) hostileVerifyVectors(t *testing.T) {
	var file fieldVectors
	vectors.Load(t, "field_element.json", &file)
	count := vectors.NewCounter(t, "field_element.json")
	item := wallet.ResponseItem{Identifier: "orb", Nullifier: "0x01", Proof: "0x00"}
	target := e.p.public + "/api/v4/verify/" + e.rp.app.RPID
	var cases []hostileCase
	for _, v := range file.VerifyHex {
		c := hostileCase{name: v.Name, status: 400,
			send: call(http.MethodPost, target, "application/json", verifyRequest("vectors", itemJSON(t, item, map[string]any{"merkle_root": v.Input, "signal_hash": nil})))}
		switch accept, below := v.verdict(t); {
		case accept && below:
			c.code = "all_verifications_failed"
		default:
			c.code, c.check = "validation_error", attributeIs("responses[0].merkle_root")
		}
		cases = append(cases, c)
		count.Inc()
	}
	runHostile(t, e.dataDir, cases)
}

// fieldVectors is the structure of field_element.json (vectors README).
type fieldVectors struct {
	IDCommitment []fieldVector `json:"id_commitment"`
	PrefixedHex  []fieldVector `json:"prefixed_hex"`
	VerifyHex    []fieldVector `json:"verify_hex"`
}

type fieldVector struct {
	Name     string  `json:"name"`
	Input    string  `json:"input"`
	Expected string  `json:"expected"`
	ValueHex *string `json:"value_hex"`
}

// verdict reads the closed vocabulary accept/reject and whether an
// accepted value is below p.
func (v fieldVector) verdict(t *testing.T) (accept, below bool) {
	t.Helper()
	switch v.Expected {
	case "accept":
		if v.ValueHex == nil {
			t.Fatalf("vector %s: accepted without value_hex", v.Name)
		}
		b, err := hex.DecodeString(strings.TrimPrefix(*v.ValueHex, "0x"))
		if err != nil || len(b) != 32 {
			t.Fatalf("vector %s: value_hex %q", v.Name, *v.ValueHex)
		}
		return true, new(big.Int).SetBytes(b).Cmp(fr.Modulus()) < 0
	case "reject":
		return false, false
	}
	t.Fatalf("vector %s: expected %q is neither accept nor reject", v.Name, v.Expected)
	return false, false
}

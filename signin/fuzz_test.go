package signin

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"worldid/bridge"
	"worldid/internal/oauth"
)

// testNullifier is a valid field element in canonical form.
const testNullifier = "0x0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"

// FuzzParseProof: a wallet answer's proof fields are accepted only in
// their bounds, with a canonical nullifier hash as the subject.
func FuzzParseProof(f *testing.F) {
	f.Add("0x00", "0x01", testNullifier, "orb")
	f.Add(strings.Repeat("0", 4097), "0x01", testNullifier, "device")
	f.Add("0x00", "%20%200X1f%20", "0X"+strings.Repeat("f", 64), "document")
	f.Fuzz(func(t *testing.T, proof, root, nullifier, level string) {
		s, e := parseProof(proof, root, nullifier, level)
		if e != nil {
			return
		}
		if len(s.proof) > maxProofBytes || (s.level != oauth.LevelOrb && s.level != oauth.LevelDevice) || len(s.sub) != 66 || !isLowerHex(s.sub[2:], 64) {
			t.Fatalf("accepted %q %q %q %q: %+v", proof, root, nullifier, level, s)
		}
	})
}

// FuzzOpenTokens feeds arbitrary plaintexts to the request-token parser
// through a provider whose sealing is the identity: never a panic, and a
// browser token opens only with an id and binding of the right size.
func FuzzOpenTokens(f *testing.F) {
	fl := &Flow{provider: plainSealer{}}
	id := bytes.Repeat([]byte{1}, requestIDBytes)
	f.Add(must(fl.sealPending(pendingRequest{ID: id, Binding: make([]byte, bindingBytes), Expires: 1, Request: oauth.Request{ClientID: "app"}})))
	f.Add(must(fl.sealPending(pendingRequest{ID: id, Binding: make([]byte, bindingBytes), Expires: 1, Request: oauth.Request{ClientID: "app"},
		Bridge: &bridgeRef{ID: "0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b", Key: make([]byte, 32)}})))
	f.Add("browser.e30")
	f.Fuzz(func(t *testing.T, token string) {
		if req, err := fl.openPending(token); err == nil && (len(req.ID) != requestIDBytes || len(req.Binding) != bindingBytes ||
			req.Bridge != nil && !req.Bridge.valid()) {
			t.Fatalf("opened %q to %+v", token, req)
		}
	})
}

// plainSealer "seals" as purpose "." base64url(plaintext), so that the
// token parsers can be fuzzed on their plaintext.
type plainSealer struct{ Provider }

func (plainSealer) Seal(purpose string, plaintext []byte) (string, error) {
	return purpose + "." + base64.RawURLEncoding.EncodeToString(plaintext), nil
}

func (plainSealer) Open(purpose, token string) ([]byte, error) {
	body, ok := strings.CutPrefix(token, purpose+".")
	if !ok {
		return nil, errBadToken
	}
	// Canonical only, as the provider's own opening (oidc decodeSegment):
	// the decoder alone skips \r and \n.
	b, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != body {
		return nil, errBadToken
	}
	return b, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func isLowerHex(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789abcdef") == ""
}

// FuzzAnswerV4 feeds arbitrary 4.0 answers to answerV4: never a panic,
// and an accepted answer is one proof_of_human item with five proof words
// and a subject in canonical form.
func FuzzAnswerV4(f *testing.F) {
	f.Add(`{"id":"req_1","version":1,"responses":[{"identifier":"proof_of_human","issuer_schema_id":1,"proof":["1","2","3","4","0x5"],"nullifier":"` + testNullifier + `","expires_at_min":1}]}`)
	f.Add(`{"id":"x","responses":[{"identifier":"proof_of_human","issuer_schema_id":1,"proof":["1"],"nullifier":"0x` + strings.Repeat("f", 64) + `"}]}`)
	f.Add(`{"session_id":"s","responses":[]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var r bridge.ProofResponse
		if json.Unmarshal([]byte(raw), &r) != nil {
			return
		}
		item, sub, e := answerV4(r)
		if e != nil {
			return
		}
		if item.Identifier != credentialV4 || len(item.Proof) != 5 || len(sub) != 66 || !isLowerHex(sub[2:], 64) {
			t.Fatalf("accepted %q: %+v %s", raw, item, sub)
		}
	})
}

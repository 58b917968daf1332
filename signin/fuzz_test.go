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

func FuzzParseSubmission(f *testing.F) {
	f.Add("request=" + strings.Repeat("ab", 32) + "&proof=0x00&merkle_root=0x01&nullifier_hash=" + testNullifier + "&verification_level=orb")
	f.Add("request=x&request=y")
	f.Add("merkle_root=%20%200X1f%20")
	f.Fuzz(func(t *testing.T, raw string) {
		v, e := oauth.ParseQuery(raw)
		if e != nil {
			return
		}
		s, e := parseSubmission(v)
		if e != nil {
			return
		}
		if s.request == "" || len(s.request) > maxWalletToken || (s.level != oauth.LevelOrb && s.level != oauth.LevelDevice) || len(s.sub) != 66 || !isLowerHex(s.sub[2:], 64) {
			t.Fatalf("accepted %q: %+v", raw, s)
		}
	})
}

// FuzzOpenTokens feeds arbitrary plaintexts to both request-token
// parsers through a provider whose sealing is the identity: never a
// panic, a browser token opens only with an id and binding of the right
// size, and a wallet token opens only when it is the canonical encoding
// of what it opened to.
func FuzzOpenTokens(f *testing.F) {
	fl := &Flow{provider: plainSealer{}}
	id := bytes.Repeat([]byte{1}, requestIDBytes)
	f.Add(must(fl.sealPending(pendingRequest{ID: id, Binding: make([]byte, bindingBytes), Expires: 1, Request: oauth.Request{ClientID: "app"}})))
	f.Add(must(fl.sealWallet(walletRequest{ID: id, Expires: 1, ClientID: "app", ReturnHost: "rp.example"})))
	f.Add(must(fl.sealPending(pendingRequest{ID: id, Binding: make([]byte, bindingBytes), Expires: 1, Request: oauth.Request{ClientID: "app"},
		Bridge: &bridgeRef{ID: "0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b", Key: make([]byte, 32)}})))
	f.Add("browser.e30")
	f.Add("wallet.AAAA")
	f.Fuzz(func(t *testing.T, token string) {
		if req, err := fl.openPending(token); err == nil && (len(req.ID) != requestIDBytes || len(req.Binding) != bindingBytes ||
			req.Bridge != nil && !req.Bridge.valid()) {
			t.Fatalf("opened %q to %+v", token, req)
		}
		if req, err := fl.openWallet(token); err == nil {
			if again := must(fl.sealWallet(req)); again != token {
				t.Fatalf("wallet token %q opened to %+v, which seals to %q", token, req, again)
			}
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

package verify

import (
	"net/http"
	"strings"
	"testing"

	"worldid/internal/vectors"
)

// FuzzVerify: no body makes the endpoint panic or answer anything but the
// documented statuses, and whatever is accepted reached the checker as
// canonical field elements.
func FuzzVerify(f *testing.F) {
	f.Add(body(items(validItem)))
	f.Add(body(items(validItem, itemWith(`"signal_hash":"0x1"`), itemWith(`"max_age":3600`)) + `,"environment":"sandbox"`))
	f.Add(body(items(itemWith(`"nullifier":"` + pHex + `"`))))
	f.Add(body(items(itemWith(`"proof":"invalid_proof"`))))
	f.Add(`{"a":{"b":[` + validItem + `]}}`)
	f.Add(v4Body(""))
	f.Add(v4Body(`"environment":"staging",`, v4ItemWith(`"0x05"`, `"`+pHex+`"`), validItem))
	f.Add(`{"protocol_version":"4.0","nonce":"1","session_id":"session_` + strings.Repeat("ab", 64) + `","responses":[` +
		strings.Replace(v4Item, `"nullifier":"0x0a0a"`, `"session_nullifier":["0x0b","12"]`, 1) + `]}`)
	f.Add(`[`)
	var v fieldElementVectors
	vectors.Load(f, "field_element.json", &v)
	for _, vec := range v.VerifyHex {
		f.Add(body(items(itemWith(`"nullifier":`+quote(f, vec.Input)), itemWith(`"merkle_root":`+quote(f, vec.Input)))))
	}
	f.Fuzz(func(t *testing.T, b string) {
		e := newEnv(t)
		w := e.post(rpPath, b)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, b, w.Body)
		}
		for _, c := range e.checker.seen() {
			for _, x := range [][32]byte{c.MerkleRoot, c.NullifierHash, c.SignalHash} {
				if canonicalHex(x) >= pHex {
					t.Fatalf("value ≥ p reached the checker: %x", x)
				}
			}
		}
	})
}

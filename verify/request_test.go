package verify

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/sha3"

	"worldid/internal/vectors"
)

// validItem and validBody are the smallest accepted request, as raw JSON,
// so that each case below breaks exactly one rule.
const validItem = `{"identifier":"orb","merkle_root":"` + rootHex + `","nullifier":"0x0a0a","proof":"valid"}`

func body(members string) string {
	return `{"protocol_version":"3.0","nonce":"n","action":"vote",` + members + `}`
}

func items(list ...string) string {
	return `"responses":[` + strings.Join(list, ",") + `]`
}

// itemWith replaces or adds one member of validItem.
func itemWith(member string) string {
	name := member[:strings.Index(member, ":")]
	if i := strings.Index(validItem, name); i >= 0 {
		end := i + strings.IndexAny(validItem[i:], ",}")
		return validItem[:i] + member + validItem[end:]
	}
	return strings.TrimSuffix(validItem, "}") + "," + member + "}"
}

// itemWithout removes one member of validItem.
func itemWithout(name string) string {
	i := strings.Index(validItem, `"`+name+`"`)
	end := i + strings.IndexAny(validItem[i:], ",}")
	if validItem[end] == ',' {
		end++
	} else {
		i-- // drop the preceding comma instead
	}
	return validItem[:i] + validItem[end:]
}

func TestBadRequests(t *testing.T) {
	const attrRoot, attrNull, attrSignal = "responses[0].merkle_root", "responses[0].nullifier", "responses[0].signal_hash"
	seventeen := make([]string, 17)
	for i := range seventeen {
		seventeen[i] = validItem
	}
	for _, tc := range []struct {
		name, body, code, attribute string
	}{
		{"empty body", ``, codeInvalidRequest, ""},
		{"truncated", `{"protocol_version":"3.0"`, codeInvalidRequest, ""},
		{"syntax", `{"protocol_version" "3.0"}`, codeInvalidRequest, ""},
		{"array body", `[]`, codeInvalidRequest, ""},
		{"string body", `"x"`, codeInvalidRequest, ""},
		{"null body", `null`, codeInvalidRequest, ""},
		{"two objects", body(items(validItem)) + `{}`, codeInvalidRequest, ""},
		{"trailing garbage", body(items(validItem)) + `x`, codeInvalidRequest, ""},
		{"trailing comma", `{"protocol_version":"3.0",}`, codeInvalidRequest, ""},
		{"broken array", body(`"responses":[}`), codeInvalidRequest, ""},
		{"array starts with comma", body(`"responses":[,]`), codeInvalidRequest, ""},
		{"bad unknown value", body(items(validItem) + `,"extra":[1,}`), codeInvalidRequest, ""},
		{"deep nesting", body(items(validItem) + `,"extra":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), codeInvalidRequest, ""},
		{"nesting 65 deep", body(items(validItem) + `,"extra":` + strings.Repeat("[", 64) + strings.Repeat("]", 64)), codeInvalidRequest, ""},
		// encoding/json would read these as U+FFFD, so the recorded action
		// would differ from what the client signed.
		{"action invalid UTF-8", "{\"protocol_version\":\"3.0\",\"nonce\":\"n\",\"action\":\"vo\xffte\"," + items(validItem) + "}", codeInvalidRequest, ""},
		{"action truncated UTF-8", "{\"protocol_version\":\"3.0\",\"nonce\":\"n\",\"action\":\"vot\xc3\"," + items(validItem) + "}", codeInvalidRequest, ""},
		{"action encoded surrogate", "{\"protocol_version\":\"3.0\",\"nonce\":\"n\",\"action\":\"\xed\xa0\x80\"," + items(validItem) + "}", codeInvalidRequest, ""},
		{"action unpaired surrogate escape", `{"protocol_version":"3.0","nonce":"n","action":"vote\ud800",` + items(validItem) + `}`, codeInvalidRequest, ""},
		{"invalid UTF-8 in an unknown member", body(items(validItem) + ",\"extra\":[\"\xff\"]"), codeInvalidRequest, ""},
		{"invalid UTF-8 in a member name", body(items(validItem) + ",\"\xff\":1"), codeInvalidRequest, ""},

		{"protocol_version missing", `{"nonce":"n","action":"vote",` + items(validItem) + `}`, codeValidation, "protocol_version"},
		{"protocol_version number", `{"protocol_version":3.0,"nonce":"n","action":"vote",` + items(validItem) + `}`, codeValidation, "protocol_version"},
		{"protocol_version 5.0", `{"protocol_version":"5.0","nonce":"n","action":"vote",` + items(validItem) + `}`, codeValidation, "protocol_version"},
		{"protocol_version 4.0, nonce not a number", `{"protocol_version":"4.0","nonce":"n","action":"vote",` + items(validItem) + `}`, codeValidation, "nonce"},
		{"session_id in 3.0", body(items(validItem) + `,"session_id":"1"`), codeValidation, "session_id"},
		{"nonce missing", `{"protocol_version":"3.0","action":"vote",` + items(validItem) + `}`, codeValidation, "nonce"},
		{"nonce empty", `{"protocol_version":"3.0","nonce":"","action":"vote",` + items(validItem) + `}`, codeValidation, "nonce"},
		{"nonce object", `{"protocol_version":"3.0","nonce":{},"action":"vote",` + items(validItem) + `}`, codeValidation, "nonce"},
		{"action missing", `{"protocol_version":"3.0","nonce":"n",` + items(validItem) + `}`, codeValidation, "action"},
		{"action null", `{"protocol_version":"3.0","nonce":"n","action":null,` + items(validItem) + `}`, codeValidation, "action"},
		{"action case-folded", `{"protocol_version":"3.0","nonce":"n","Action":"vote",` + items(validItem) + `}`, codeValidation, "action"},
		{"action twice", body(items(validItem) + `,"action":"other"`), codeValidation, "action"},
		{"action_description number", body(items(validItem) + `,"action_description":1`), codeValidation, "action_description"},
		{"environment unknown", body(items(validItem) + `,"environment":"dev"`), codeValidation, "environment"},
		{"environment case", body(items(validItem) + `,"environment":"Production"`), codeValidation, "environment"},
		{"environment bool", body(items(validItem) + `,"environment":true`), codeValidation, "environment"},
		{"session_id with 3.0", body(items(validItem) + `,"session_id":"0x01"`), codeValidation, "session_id"},
		{"session_id empty", body(items(validItem) + `,"session_id":""`), codeValidation, "session_id"},
		{"session_id number", body(items(validItem) + `,"session_id":1`), codeValidation, "session_id"},
		{"invalid UTF-8 in action", strings.Replace(body(items(validItem)), `"vote"`, "\"vo\xffte\"", 1), codeInvalidRequest, ""},
		{"invalid UTF-8 in an unknown member", body(items(validItem) + ",\"x\":\"\xc3\""), codeInvalidRequest, ""},
		{"invalid UTF-8 in a member name", body(items(validItem) + ",\"\xed\xa0\x80\":1"), codeInvalidRequest, ""},

		{"responses missing", body(`"x":1`), codeValidation, "responses"},
		{"responses null", body(`"responses":null`), codeValidation, "responses"},
		{"responses empty", body(`"responses":[]`), codeValidation, "responses"},
		{"responses object", body(`"responses":{}`), codeValidation, "responses"},
		{"responses over the cap", body(items(seventeen...)), codeValidation, "responses"},
		{"item null", body(items(`null`)), codeValidation, "responses[0]"},
		{"item string", body(items(validItem, `"orb"`)), codeValidation, "responses[1]"},
		{"item member twice", body(items(itemWith(`"proof":"valid","proof":"valid"`))), codeValidation, "responses[0].proof"},
		{"action twice, once escaped", body(items(validItem) + `,"\u0061ction":"vote"`), codeValidation, "action"},
		{"unknown member twice", body(items(validItem) + `,"extra":1,"extra":2`), codeValidation, "extra"},
		{"duplicate inside an unknown member", body(items(itemWith(`"extra":{"a":[{"b":1,"b":1}]}`))), codeValidation, "responses[0].extra.a[0].b"},

		{"identifier missing", body(items(itemWithout("identifier"))), codeValidation, "responses[0].identifier"},
		{"identifier unknown", body(items(itemWith(`"identifier":"iris"`))), codeValidation, "responses[0].identifier"},
		{"identifier upper case", body(items(itemWith(`"identifier":"ORB"`))), codeValidation, "responses[0].identifier"},
		{"identifier number", body(items(itemWith(`"identifier":1`))), codeValidation, "responses[0].identifier"},
		{"proof missing", body(items(itemWithout("proof"))), codeValidation, "responses[0].proof"},
		{"proof empty", body(items(itemWith(`"proof":""`))), codeValidation, "responses[0].proof"},

		{"merkle_root missing", body(items(itemWithout("merkle_root"))), codeValidation, attrRoot},
		{"merkle_root number", body(items(itemWith(`"merkle_root":12`))), codeValidation, attrRoot},
		{"merkle_root not hex", body(items(itemWith(`"merkle_root":"0xzz"`))), codeValidation, attrRoot},
		{"merkle_root 65 digits", body(items(itemWith(`"merkle_root":"0x1` + strings.Repeat("0", 64) + `"`))), codeValidation, attrRoot},
		{"merkle_root p", body(items(itemWith(`"merkle_root":"` + pHex + `"`))), codeValidation, attrRoot},
		{"merkle_root 2^256-1", body(items(itemWith(`"merkle_root":"0x` + strings.Repeat("f", 64) + `"`))), codeValidation, attrRoot},
		{"merkle_root only prefix", body(items(itemWith(`"merkle_root":"0x"`))), codeValidation, attrRoot},
		{"merkle_root decimal-looking is hex", body(items(itemWith(`"merkle_root":"` + strings.Repeat("9", 65) + `"`))), codeValidation, attrRoot},

		{"nullifier missing", body(items(itemWithout("nullifier"))), codeValidation, attrNull},
		{"nullifier empty", body(items(itemWith(`"nullifier":""`))), codeValidation, attrNull},
		{"nullifier only prefix", body(items(itemWith(`"nullifier":"0x"`))), codeValidation, attrNull},
		{"nullifier 0X prefix", body(items(itemWith(`"nullifier":"0X1"`))), codeValidation, attrNull},
		{"nullifier whitespace", body(items(itemWith(`"nullifier":" 0x1"`))), codeValidation, attrNull},
		{"nullifier sign", body(items(itemWith(`"nullifier":"-1"`))), codeValidation, attrNull},
		{"nullifier p", body(items(itemWith(`"nullifier":"` + strings.ToUpper(pHex[2:]) + `"`))), codeValidation, attrNull},
		{"nullifier number", body(items(itemWith(`"nullifier":10`))), codeValidation, attrNull},

		{"signal_hash upper case", body(items(itemWith(`"signal_hash":"0xAB"`))), codeValidation, attrSignal},
		{"signal_hash no prefix", body(items(itemWith(`"signal_hash":"ab"`))), codeValidation, attrSignal},
		{"signal_hash empty", body(items(itemWith(`"signal_hash":""`))), codeValidation, attrSignal},
		{"signal_hash p", body(items(itemWith(`"signal_hash":"` + pHex + `"`))), codeValidation, attrSignal},
		{"signal_hash 65 digits", body(items(itemWith(`"signal_hash":"0x` + strings.Repeat("0", 65) + `"`))), codeValidation, attrSignal},

		{"max_age below", body(items(itemWith(`"max_age":3599`))), codeValidation, "responses[0].max_age"},
		{"max_age above", body(items(itemWith(`"max_age":604801`))), codeValidation, "responses[0].max_age"},
		{"max_age negative", body(items(itemWith(`"max_age":-3600`))), codeValidation, "responses[0].max_age"},
		{"max_age string", body(items(itemWith(`"max_age":"3600"`))), codeValidation, "responses[0].max_age"},
		{"max_age fraction", body(items(itemWith(`"max_age":3600.5`))), codeValidation, "responses[0].max_age"},
		{"max_age exponent", body(items(itemWith(`"max_age":4e3`))), codeValidation, "responses[0].max_age"},
		{"max_age huge", body(items(itemWith(`"max_age":99999999999999999999999`))), codeValidation, "responses[0].max_age"},
		{"second item bad", body(items(validItem, itemWith(`"nullifier":"xyz"`))), codeValidation, "responses[1].nullifier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			wantError(t, e.post(rpPath, tc.body), http.StatusBadRequest, tc.code, tc.attribute)
			if n := len(e.checker.seen()); n != 0 {
				t.Errorf("%d proofs checked for a bad request", n)
			}
		})
	}
}

// TestAcceptedVariants: what the parser deliberately accepts.
func TestAcceptedVariants(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"minimal", body(items(validItem))},
		{"unknown members", body(items(itemWith(`"verification_level":"orb"`), itemWith(`"extra":{"a":[1,2,{"b":null}]}`)) +
			`,"user_presence_completed":true,"session_id":null,"integrity_bundle":{"version":1}`)},
		{"4.0 members ignored in 3.0", body(items(itemWith(`"issuer_schema_id":{}`), itemWith(`"expires_at_min":"x"`),
			itemWith(`"session_nullifier":7`), itemWith(`"credential_genesis_issued_at_min":[]`)))},
		{"nulls are absent", body(items(itemWith(`"signal_hash":null`), itemWith(`"max_age":null`)) + `,"environment":null,"action_description":null`)},
		{"every identifier", body(items(itemWith(`"identifier":"device"`), itemWith(`"identifier":"document"`),
			itemWith(`"identifier":"secure_document"`), itemWith(`"identifier":"face"`), itemWith(`"identifier":"selfie"`)))},
		{"max_age bounds", body(items(itemWith(`"max_age":3600`), itemWith(`"max_age":604800`)))},
		{"hex forms", body(items(itemWith(`"merkle_root":"  0X0936D98C83151035b528d1631df5c3607a740bd296b4c79c627130a96645dcc7 "`),
			itemWith(`"nullifier":"A0A"`), itemWith(`"merkle_root":"123"`), itemWith(`"signal_hash":"0x0"`)))},
		{"p-1", body(items(itemWith(`"nullifier":"0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000000"`)))},
		{"sixteen items", body(items(strings.Repeat(validItem+",", 15) + validItem))},
		{"whitespace around", "\n\t " + body(items(validItem)) + " \r\n"},
		{"nesting 64 deep", body(items(validItem) + `,"extra":` + strings.Repeat("[", 63) + strings.Repeat("]", 63))},
		{"escapes in names and strings", `{"protocol_version":"3.0","nonce":"\u00e9\ud83d\ude00","\u0061ction":"vote",` + items(validItem) + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			wantSuccess(t, e.post(rpPath, tc.body))
		})
	}
}

// TestActionIsUnescaped: the action the checker and the store see is the
// JSON string decoded, never the escaped text or a replacement character.
func TestActionIsUnescaped(t *testing.T) {
	e := newEnv(t)
	resp := wantSuccess(t, e.post(rpPath, `{"protocol_version":"3.0","nonce":"n","action":"vot\u00e9 \ud83d\ude00",`+items(validItem)+`}`))
	if got := e.checker.seen()[0].Action; got != "voté 😀" || resp.Action != got {
		t.Fatalf("action %q, answered %q", got, resp.Action)
	}
}

func TestTooLarge(t *testing.T) {
	e := newEnv(t)
	padding := `,"pad":"` + strings.Repeat("x", maxBody) + `"`
	wantError(t, e.post(rpPath, body(items(validItem)+padding)), http.StatusRequestEntityTooLarge, codeTooLarge, "")
	// Exactly at the limit is accepted.
	b := body(items(validItem) + `,"pad":""`)
	b = b[:len(b)-2] + strings.Repeat("x", maxBody-len(b)) + `"}`
	if len(b) != maxBody {
		t.Fatalf("built %d bytes", len(b))
	}
	wantSuccess(t, e.post(rpPath, b))
}

// TestDeclaredTooLarge: a Content-Length over the cap is refused before
// a byte of the body is read.
func TestDeclaredTooLarge(t *testing.T) {
	e := newEnv(t)
	body := &countingReader{r: strings.NewReader(body(items(validItem)))}
	r := httptest.NewRequest(http.MethodPost, rpPath, body)
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = maxBody + 1
	w := httptest.NewRecorder()
	e.mux.ServeHTTP(w, r)
	wantError(t, w, http.StatusRequestEntityTooLarge, codeTooLarge, "")
	if body.n != 0 {
		t.Fatalf("read %d bytes of a body declared too large", body.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestMaxResponsesOption: the cap is configurable.
func TestMaxResponsesOption(t *testing.T) {
	e := newEnv(t)
	h, err := New(Options{Store: e.store, Checker: e.checker, MaxResponses: 2})
	if err != nil {
		t.Fatal(err)
	}
	e.mux = http.NewServeMux()
	h.Register(e.mux)
	wantSuccess(t, e.post(rpPath, body(items(validItem, validItem))))
	wantError(t, e.post(rpPath, body(items(validItem, validItem, validItem))), http.StatusBadRequest, codeValidation, "responses")
}

// TestDefaultSignalHash recomputes hashToField(empty) = Keccak-256("") >> 8
// (doc/crypto.md §g).
func TestDefaultSignalHash(t *testing.T) {
	d := sha3.NewLegacyKeccak256().Sum(nil)
	want := "0x00" + hex.EncodeToString(d[:31])
	if defaultSignalHash != want {
		t.Errorf("defaultSignalHash %s, want %s", defaultSignalHash, want)
	}
}

// fieldElementVectors is the verify_hex list of field_element.json.
type fieldElementVectors struct {
	VerifyHex []struct {
		Input    string `json:"input"`
		Expected string `json:"expected"`
		ValueHex string `json:"value_hex"`
	} `json:"verify_hex"`
}

// TestVerifyHexVectors runs the VerifyHex vectors through merkle_root, the
// member with no extra schema pattern: accepted inputs below p must verify
// with exactly value_hex; rejected ones and values ≥ p are validation errors.
func TestVerifyHexVectors(t *testing.T) {
	var v fieldElementVectors
	vectors.Load(t, "field_element.json", &v)
	c := vectors.NewCounter(t, "field_element.json")
	for _, vec := range v.VerifyHex {
		e := newEnv(t)
		w := e.post(rpPath, body(items(itemWith(`"merkle_root":`+quote(t, vec.Input)))))
		switch vec.Expected {
		case "accept":
			if vec.ValueHex >= pHex {
				wantError(t, w, http.StatusBadRequest, codeValidation, "responses[0].merkle_root")
				break
			}
			wantSuccess(t, w)
			if got := canonicalHex(e.checker.seen()[0].MerkleRoot); got != vec.ValueHex {
				t.Errorf("%q: root %s, want %s", vec.Input, got, vec.ValueHex)
			}
		case "reject":
			wantError(t, w, http.StatusBadRequest, codeValidation, "responses[0].merkle_root")
		default:
			t.Fatalf("%q: unknown expected %q", vec.Input, vec.Expected)
		}
		c.Inc()
	}
}

func quote(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package oidc

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

var b64 = base64.RawURLEncoding

// signRaw signs arbitrary header and payload bytes with k, the way an
// attacker holding the key (or we, for the negative cases) would.
func signRaw(k *rsa.PrivateKey, header, payload string) string {
	in := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(payload))
	sum := sha256.Sum256([]byte(in))
	sig := must(rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:]))
	return in + "." + b64.EncodeToString(sig)
}

func hs256(secret []byte, header, payload string) string {
	in := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(payload))
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(in))
	return in + "." + b64.EncodeToString(m.Sum(nil))
}

// accessPayload is a valid access token payload for the fixture at now.
func accessPayload(f *fixture, edit func(map[string]any)) string {
	now := f.clock.Now()
	c := map[string]any{
		"iss": f.issuer, "sub": testNullifier, "aud": testClientID, "client_id": testClientID,
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "auth_time": now.Unix(), "jti": "j",
		"scope": "openid", "verification_level": "orb", "grant_id": "g",
	}
	if edit != nil {
		edit(c)
	}
	return string(must(json.Marshal(c)))
}

func flipBit(token string, pos int) string {
	b := []byte(token)
	c := b[pos]
	// Move to another base64url character so only the decoded bits change.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, c)
	b[pos] = alphabet[i^1]
	return string(b)
}

// TestJWSNegative runs Wycheproof-style cases against access token
// verification: every one must be rejected, and the baseline accepted.
func TestJWSNegative(t *testing.T) {
	f := newFixture(t)
	signer := f.p.keySet().signer
	kid := signer.rec.ID
	key := signer.priv
	header := `{"alg":"RS256","kid":"` + kid + `","typ":"at+jwt"}`
	valid := signRaw(key, header, accessPayload(f, nil))
	if _, err := f.p.parseAccessToken(valid); err != nil {
		t.Fatalf("baseline rejected: %v", err)
	}
	issued := must(f.p.signAccessToken(f.p.keySet(), grant{id: "g", clientID: testClientID, scope: "openid", sub: testNullifier, level: "orb", authTime: testStart}, testStart))
	if _, err := f.p.parseAccessToken(issued); err != nil {
		t.Fatalf("issued token rejected: %v", err)
	}
	pubDER := must(x509.MarshalPKIXPublicKey(&key.PublicKey))
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	otherKey := must(rsa.GenerateKey(nil, 2048))
	parts := strings.Split(valid, ".")
	payload := accessPayload(f, nil)
	withClaim := func(k string, v any) string {
		return signRaw(key, header, accessPayload(f, func(c map[string]any) { c[k] = v }))
	}
	now := f.clock.Now()

	cases := map[string]string{
		"empty":                   "",
		"alg none":                b64.EncodeToString([]byte(`{"alg":"none","kid":"`+kid+`","typ":"at+jwt"}`)) + "." + parts[1] + ".",
		"alg none with signature": b64.EncodeToString([]byte(`{"alg":"none","kid":"`+kid+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2],
		"alg None":                signRaw(key, `{"alg":"None","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"HS256 with PEM key":      hs256(pubPEM, `{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"HS256 with DER key":      hs256(pubDER, `{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"HS256 with modulus":      hs256(key.N.Bytes(), `{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"RS384":                   signRaw(key, `{"alg":"RS384","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"PS256":                   signRaw(key, `{"alg":"PS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"kid unknown":             signRaw(key, `{"alg":"RS256","kid":"nope","typ":"at+jwt"}`, payload),
		"kid missing":             signRaw(key, `{"alg":"RS256","typ":"at+jwt"}`, payload),
		"typ missing":             signRaw(key, `{"alg":"RS256","kid":"`+kid+`"}`, payload),
		"typ JWT (ID token)":      signRaw(key, `{"alg":"RS256","kid":"`+kid+`","typ":"JWT"}`, payload),
		"crit":                    signRaw(key, `{"alg":"RS256","crit":["exp"],"kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"jku":                     signRaw(key, `{"alg":"RS256","jku":"https://evil/","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"jwk":                     signRaw(key, `{"alg":"RS256","jwk":{"kty":"RSA"},"kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"x5u":                     signRaw(key, `{"alg":"RS256","kid":"`+kid+`","typ":"at+jwt","x5u":"https://evil/"}`, payload),
		"b64 false":               signRaw(key, `{"alg":"RS256","b64":false,"kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"duplicate alg":           signRaw(key, `{"alg":"RS256","alg":"none","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"duplicate kid":           signRaw(key, `{"alg":"RS256","kid":"x","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"header whitespace":       signRaw(key, `{"alg": "RS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"header member order":     signRaw(key, `{"kid":"`+kid+`","alg":"RS256","typ":"at+jwt"}`, payload),
		"header escaped":          signRaw(key, `{"alg":"RS\u0032\u0035\u0036","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"header trailing data":    signRaw(key, header+`{}`, payload),
		"header array":            signRaw(key, `["RS256"]`, payload),
		"header null":             signRaw(key, `null`, payload),
		"header number member":    signRaw(key, `{"alg":"RS256","kid":1,"typ":"at+jwt"}`, payload),
		"header not JSON":         signRaw(key, `{alg:RS256}`, payload),
		"other key, known kid":    signRaw(otherKey, header, payload),
		"padding":                 valid + "=",
		"padded header":           parts[0] + "=." + parts[1] + "." + parts[2],
		"std alphabet":            strings.NewReplacer("-", "+", "_", "/").Replace(valid),
		"newline":                 parts[0] + ".\n" + parts[1] + "." + parts[2],
		"CR in signature":         parts[0] + "." + parts[1] + "." + parts[2][:10] + "\r" + parts[2][10:],
		"space":                   parts[0] + ". " + parts[1] + "." + parts[2],
		"non-canonical bits":      nonCanonical(valid),
		"two segments":            parts[0] + "." + parts[1],
		"four segments":           valid + ".x",
		"trailing dot":            valid + ".",
		"leading dot":             "." + valid,
		"empty payload":           parts[0] + ".." + parts[2],
		"empty signature":         parts[0] + "." + parts[1] + ".",
		"short signature":         parts[0] + "." + parts[1] + "." + b64.EncodeToString(must(b64.DecodeString(parts[2]))[1:]),
		"long signature":          parts[0] + "." + parts[1] + "." + b64.EncodeToString(append([]byte{0}, must(b64.DecodeString(parts[2]))...)),
		"signature first bit":     flipBit(valid, len(parts[0])+len(parts[1])+2),
		"signature middle bit":    flipBit(valid, len(valid)-170),
		"signature last char":     flipBit(valid, len(valid)-2),
		"payload bit":             flipBit(valid, len(parts[0])+5),
		"header bit":              flipBit(valid, 3),
		"swapped payload":         parts[0] + "." + b64.EncodeToString([]byte(accessPayload(f, func(c map[string]any) { c["sub"] = "0x01" }))) + "." + parts[2],
		"oversize":                parts[0] + "." + strings.Repeat("A", maxJWTBytes) + "." + parts[2],
		"wrong iss":               withClaim("iss", "https://evil.example"),
		"iss trailing slash":      withClaim("iss", f.issuer+"/"),
		"aud other":               withClaim("aud", "app_ffffffffffffffffffffffffffffffff"),
		"aud array":               withClaim("aud", []string{testClientID}),
		"aud missing":             withClaim("aud", ""),
		"exp now":                 withClaim("exp", now.Unix()),
		"exp past":                withClaim("exp", now.Add(-time.Second).Unix()),
		"exp string":              withClaim("exp", "9999999999"),
		"iat future":              withClaim("iat", now.Add(2*time.Minute).Unix()),
		"no grant":                withClaim("grant_id", ""),
		"bad level":               withClaim("verification_level", "face"),
		"unknown claim":           withClaim("admin", true),
		"payload not object":      signRaw(key, header, `[]`),
		"payload trailing":        signRaw(key, header, payload+` {}`),
		"claim case-folded":       signRaw(key, header, strings.Replace(payload, `"iss":`, `"ISS":`, 1)),
		"claim twice":             signRaw(key, header, `{"sub":"0x01",`+payload[1:]),
		"claim invalid UTF-8":     signRaw(key, header, strings.Replace(payload, `"jti":"j"`, "\"jti\":\"j\xff\"", 1)),
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) {
			if token == valid {
				t.Fatal("case does not change the token")
			}
			if c, err := f.p.parseAccessToken(token); err == nil {
				t.Fatalf("accepted: %+v", c)
			}
		})
	}
}

// nonCanonical changes the last character of the signature so that it
// decodes to the same bytes with non-zero trailing bits.
func nonCanonical(token string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := token[len(token)-1]
	i := strings.IndexByte(alphabet, last)
	// 256-byte signatures encode to 342 characters: the last one carries
	// 4 data bits and 2 padding bits.
	return token[:len(token)-1] + string(alphabet[i|1])
}

func TestDecodeSegment(t *testing.T) {
	for _, s := range []string{"", "=", "AA==", "A", "AB", "a+b/", "QQ\n", "QR"} {
		if _, err := decodeSegment(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	for s, want := range map[string]string{"QQ": "A", "QUI": "AB", "QUJD": "ABC", "-_8": "\xfb\xff"} {
		if got, err := decodeSegment(s); err != nil || string(got) != want {
			t.Errorf("%q: %q %v", s, got, err)
		}
	}
}

func TestIDTokenVerifiesAsIDTokenOnly(t *testing.T) {
	f := newFixture(t)
	set := f.p.keySet()
	g := grant{id: "g", clientID: testClientID, scope: "openid", sub: testNullifier, level: "device", authTime: testStart}
	id := must(f.p.signIDToken(set, g, testStart, "", ""))
	if _, err := verifyJWT(id, typIDToken, set.byHeader); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyJWT(id, typAccessToken, set.byHeader); err == nil {
		t.Fatal("an ID token verifies as an access token")
	}
}

package oidc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
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

// signES signs like signRaw with ES256 (R ‖ S, RFC 7518 §3.4).
func signES(k *ecdsa.PrivateKey, header, payload string) string {
	in := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(payload))
	sum := sha256.Sum256([]byte(in))
	r, s := must2(ecdsa.Sign(rand.Reader, k, sum[:]))
	if n := elliptic.P256().Params().N; s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
		s.Sub(n, s)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return in + "." + b64.EncodeToString(sig)
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
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
	kid := signer.ecJWK.Kid
	key := signer.ec
	rsaKey, rsaKid := signer.priv, signer.rec.ID
	header := `{"alg":"ES256","kid":"` + kid + `","typ":"at+jwt"}`
	valid := signES(key, header, accessPayload(f, nil))
	if _, err := f.p.parseAccessToken(valid); err != nil {
		t.Fatalf("baseline rejected: %v", err)
	}
	issued := must(f.p.signAccessToken(f.p.keySet(), grant{id: "g", clientID: testClientID, scope: "openid", sub: testNullifier, level: "orb", authTime: testStart}, testStart))
	if _, err := f.p.parseAccessToken(issued); err != nil {
		t.Fatalf("issued token rejected: %v", err)
	}
	pubDER := must(x509.MarshalPKIXPublicKey(&key.PublicKey))
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	otherKey := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	parts := strings.Split(valid, ".")
	payload := accessPayload(f, nil)
	withClaim := func(k string, v any) string {
		return signES(key, header, accessPayload(f, func(c map[string]any) { c[k] = v }))
	}
	now := f.clock.Now()

	cases := map[string]string{
		"empty":                   "",
		"alg none":                b64.EncodeToString([]byte(`{"alg":"none","kid":"`+kid+`","typ":"at+jwt"}`)) + "." + parts[1] + ".",
		"alg none with signature": b64.EncodeToString([]byte(`{"alg":"none","kid":"`+kid+`","typ":"at+jwt"}`)) + "." + parts[1] + "." + parts[2],
		"alg None":                signES(key, `{"alg":"None","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"HS256 with PEM key":      hs256(pubPEM, `{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"HS256 with DER key":      hs256(pubDER, `{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"HS256 with modulus":      hs256(rsaKey.N.Bytes(), `{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"RS384":                   signRaw(rsaKey, `{"alg":"RS384","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"PS256":                   signRaw(rsaKey, `{"alg":"PS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"kid unknown":             signES(key, `{"alg":"ES256","kid":"nope","typ":"at+jwt"}`, payload),
		"kid missing":             signES(key, `{"alg":"ES256","typ":"at+jwt"}`, payload),
		"typ missing":             signES(key, `{"alg":"ES256","kid":"`+kid+`"}`, payload),
		"typ JWT (ID token)":      signES(key, `{"alg":"ES256","kid":"`+kid+`","typ":"JWT"}`, payload),
		"crit":                    signES(key, `{"alg":"ES256","crit":["exp"],"kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"jku":                     signES(key, `{"alg":"ES256","jku":"https://evil/","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"jwk":                     signES(key, `{"alg":"ES256","jwk":{"kty":"RSA"},"kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"x5u":                     signES(key, `{"alg":"ES256","kid":"`+kid+`","typ":"at+jwt","x5u":"https://evil/"}`, payload),
		"b64 false":               signES(key, `{"alg":"ES256","b64":false,"kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"duplicate alg":           signES(key, `{"alg":"ES256","alg":"none","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"duplicate kid":           signES(key, `{"alg":"ES256","kid":"x","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"header whitespace":       signES(key, `{"alg": "RS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"header member order":     signES(key, `{"kid":"`+kid+`","alg":"ES256","typ":"at+jwt"}`, payload),
		"header escaped":          signES(key, `{"alg":"ES\u0032\u0035\u0036","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"header trailing data":    signES(key, header+`{}`, payload),
		"header array":            signES(key, `["ES256"]`, payload),
		"RS256 by the RSA key":    signRaw(rsaKey, `{"alg":"RS256","kid":"`+rsaKid+`","typ":"at+jwt"}`, payload),
		"RS256 under the EC kid":  signRaw(rsaKey, `{"alg":"RS256","kid":"`+kid+`","typ":"at+jwt"}`, payload),
		"ES256 under the RSA kid": signES(key, `{"alg":"ES256","kid":"`+rsaKid+`","typ":"at+jwt"}`, payload),
		"high-S copy":             highS(valid),
		"zero signature":          parts[0] + "." + parts[1] + "." + b64.EncodeToString(make([]byte, 64)),
		"header null":             signES(key, `null`, payload),
		"header number member":    signES(key, `{"alg":"ES256","kid":1,"typ":"at+jwt"}`, payload),
		"header not JSON":         signES(key, `{alg:RS256}`, payload),
		"other key, known kid":    signES(otherKey, header, payload),
		"padding":                 valid + "=",
		"padded header":           parts[0] + "=." + parts[1] + "." + parts[2],
		"std alphabet":            stdAlphabet(valid),
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
		"signature middle bit":    flipBit(valid, len(valid)-43),
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
		"payload not object":      signES(key, header, `[]`),
		"payload trailing":        signES(key, header, payload+` {}`),
		"claim case-folded":       signES(key, header, strings.Replace(payload, `"iss":`, `"ISS":`, 1)),
		"claim twice":             signES(key, header, `{"sub":"0x01",`+payload[1:]),
		"claim invalid UTF-8":     signES(key, header, strings.Replace(payload, `"jti":"j"`, "\"jti\":\"j\xff\"", 1)),
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

// stdAlphabet spells token in the standard base64 alphabet; an ES256
// token may happen to contain neither "-" nor "_", and then its last
// character becomes "+".
func stdAlphabet(token string) string {
	if std := strings.NewReplacer("-", "+", "_", "/").Replace(token); std != token {
		return std
	}
	return token[:len(token)-1] + "+"
}

// nonCanonical changes the last character of the signature so that it
// decodes to the same bytes with non-zero trailing bits.
func nonCanonical(token string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := token[len(token)-1]
	i := strings.IndexByte(alphabet, last)
	// 64-byte ES256 signatures encode to 86 characters: the last one
	// carries 4 data bits and 2 padding bits.
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

// TestAccessTokenES256 checks an issued access token with nothing but the
// published JWKS: the header names the EC key, and the signature verifies
// with that key's coordinates (RFC 7518 §3.4, §6.2.1).
func TestAccessTokenES256(t *testing.T) {
	f := newFixture(t)
	tr := f.tokensFor(authorizeQuery())
	parts := strings.Split(tr.AccessToken, ".")
	var h map[string]string
	if json.Unmarshal(must(b64.DecodeString(parts[0])), &h) != nil || h["alg"] != "ES256" || h["typ"] != "at+jwt" {
		t.Fatalf("access token header %v", h)
	}
	var set struct{ Keys []map[string]string }
	if err := json.Unmarshal(f.p.keySet().jwks, &set); err != nil {
		t.Fatal(err)
	}
	var pub *ecdsa.PublicKey
	for _, k := range set.Keys {
		if k["kid"] == h["kid"] && k["kty"] == "EC" && k["crv"] == "P-256" {
			raw := append([]byte{4}, append(must(b64.DecodeString(k["x"])), must(b64.DecodeString(k["y"]))...)...)
			pub = must(ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw))
		}
	}
	if pub == nil {
		t.Fatalf("kid %q is not an EC key of the JWKS", h["kid"])
	}
	sig := must(b64.DecodeString(parts[2]))
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the access token does not verify with the published EC key")
	}
	// The ID token stays RS256 under the RSA key.
	var ih map[string]string
	if json.Unmarshal(must(b64.DecodeString(strings.Split(tr.IDToken, ".")[0])), &ih) != nil || ih["alg"] != "RS256" || ih["kid"] != sharedKey().ID {
		t.Fatalf("ID token header %v", ih)
	}
}

// highS is token with its ES256 signature (r, s) replaced by (r, n−s),
// which ecdsa.Verify accepts too.
func highS(token string) string {
	i := strings.LastIndexByte(token, '.')
	sig := must(b64.DecodeString(token[i+1:]))
	n := elliptic.P256().Params().N
	s := new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:]))
	s.FillBytes(sig[32:])
	return token[:i+1] + b64.EncodeToString(sig)
}

// TestHighSCopyIsMalleable: the high-S copy refused in TestJWSNegative is
// a signature ecdsa.Verify accepts, so only the low-S rule refuses it; and
// every access token issued here has a low S.
func TestHighSCopyIsMalleable(t *testing.T) {
	f := newFixture(t)
	signer := f.p.keySet().signer
	for range 16 {
		issued := must(f.p.signAccessToken(f.p.keySet(), grant{id: "g", clientID: testClientID, scope: "openid", sub: testNullifier, level: "orb", authTime: testStart}, testStart))
		copyToken := highS(issued)
		i := strings.LastIndexByte(copyToken, '.')
		sig := must(b64.DecodeString(copyToken[i+1:]))
		digest := sha256.Sum256([]byte(copyToken[:i]))
		if !ecdsa.Verify(&signer.ec.PublicKey, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatal("the high-S copy does not verify under ecdsa.Verify")
		}
		if _, err := f.p.parseAccessToken(issued); err != nil {
			t.Fatalf("issued token rejected: %v", err)
		}
		if _, err := f.p.parseAccessToken(copyToken); err == nil {
			t.Fatal("high-S copy accepted")
		}
	}
}

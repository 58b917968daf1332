package oidc

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"

	"worldid/internal/leaf/strictjson"
	"worldid/internal/oauth"
	"worldid/record"
)

// Client authentication with a signed JWT (private_key_jwt: RFC 7523 §2.2
// and §3, OIDC Core §9). The app registers its public keys inline
// (record.App.JWKS) or their https jwks_uri (jwksuri.go).
const (
	assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// maxAssertionLifetime bounds exp − now: an assertion is made for one
	// request (RFC 7523 §3 lets the server limit it), and its jti is
	// remembered until exp.
	maxAssertionLifetime = 10 * time.Minute
	// assertionKeyPrefix marks this use of the store's single-use keys.
	assertionKeyPrefix = "client-assertion:"
	minRSABits         = 2048
	maxJTIBytes        = 256
)

// assertionHeader is the JOSE header of a client assertion: RS256 or
// ES256 only (no "none", no HMAC under a public key).
type assertionHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// assertionClaims are RFC 7523 §3's claims; aud is a string or an array.
type assertionClaims struct {
	Iss string          `json:"iss"`
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *int64          `json:"exp"`
	Iat *int64          `json:"iat"`
	Nbf *int64          `json:"nbf"`
	Jti string          `json:"jti"`
}

// parsedAssertion is a client assertion split and decoded, not yet
// verified.
type parsedAssertion struct {
	header       assertionHeader
	claims       assertionClaims
	signingInput string
	signature    []byte
}

// parseAssertion checks the form parameters and the assertion's
// structure (bounded, three canonical base64url segments, JSON header and
// claims); the signature is checked by verifyAssertion.
func parseAssertion(params map[string]string, authorization string) (parsedAssertion, *oauth.Error) {
	var a parsedAssertion
	switch {
	case params["client_assertion_type"] != assertionType:
		return a, errUnauthenticated("client_assertion_type must be " + assertionType)
	case params["client_assertion"] == "":
		return a, oauth.ErrRequired("client_assertion")
	case authorization != "" || params["client_secret"] != "":
		return a, oauth.ErrInvalid("client_assertion", "use one client authentication method only")
	}
	token := params["client_assertion"]
	if len(token) > maxJWTBytes || strings.Count(token, ".") != 2 {
		return a, errUnauthenticated("client_assertion is not a compact JWS")
	}
	rawHeader, rest, _ := strings.Cut(token, ".")
	rawPayload, rawSig, _ := strings.Cut(rest, ".")
	header, err1 := decodeSegment(rawHeader)
	payload, err2 := decodeSegment(rawPayload)
	sig, err3 := decodeSegment(rawSig)
	if err := errors.Join(err1, err2, err3); err != nil {
		return a, errUnauthenticated("client_assertion is not canonical base64url")
	}
	if strictjson.Decode(header, &a.header) != nil || strictjson.Decode(payload, &a.claims) != nil {
		return a, errUnauthenticated("client_assertion header or claims are malformed")
	}
	if a.header.Alg != algRS256 && a.header.Alg != algES256 {
		return a, errUnauthenticated("client_assertion must be signed with RS256 or ES256")
	}
	a.signingInput, a.signature = token[:len(rawHeader)+1+len(rawPayload)], sig
	return a, nil
}

// authenticateAssertion authenticates the client of a private_key_jwt
// request: the app named by iss (= sub, = client_id when given) must use
// private_key_jwt; the signature must verify under one of its registered
// keys; aud must name this issuer, its token endpoint or the endpoint
// called; exp must be in the future by at most maxAssertionLifetime; and
// the jti is spent once (a replay is refused on every replica).
func (p *Provider) authenticateAssertion(r *http.Request, params map[string]string) (record.App, *oauth.Error) {
	a, e := parseAssertion(params, r.Header.Get("Authorization"))
	if e != nil {
		return record.App{}, e
	}
	c := a.claims
	if c.Iss == "" || c.Sub != c.Iss || (params["client_id"] != "" && params["client_id"] != c.Iss) {
		return record.App{}, errUnauthenticated("client_assertion iss and sub must both be the client_id")
	}
	app, err := p.store.App(r.Context(), c.Iss)
	if errors.Is(err, record.ErrNotFound) {
		return app, errUnauthenticated("invalid client credentials")
	}
	if err != nil {
		return app, p.out.Internal(r.Context(), "authenticate client", err)
	}
	if app.TokenEndpointAuthMethod != record.AuthPrivateKeyJWT {
		return app, errUnauthenticated("this client is not registered for private_key_jwt")
	}
	jwks := app.JWKS
	if app.JWKSURI != "" {
		if jwks, err = p.fetchJWKS(r.Context(), app.JWKSURI); err != nil {
			p.log.Info("oidc: client jwks_uri", "client_id", app.ID, "err", err)
			return app, errUnauthenticated("the client's jwks_uri could not be read")
		}
	}
	if err := verifyAssertion(a, jwks); err != nil {
		return app, errUnauthenticated("client_assertion: " + err.Error())
	}
	if e := p.checkAssertionClaims(c, r.URL.Path); e != nil {
		return app, e
	}
	return app, p.spendAssertion(r.Context(), c)
}

// checkAssertionClaims: aud, exp, iat, nbf and jti (RFC 7523 §3).
func (p *Provider) checkAssertionClaims(c assertionClaims, path string) *oauth.Error {
	now := p.now().Unix()
	switch {
	case !audienceContains(c.Aud, p.issuer, p.issuer+pathToken, p.issuer+path):
		return errUnauthenticated("client_assertion aud must be the issuer or the token endpoint")
	case c.Exp == nil || *c.Exp <= now:
		return errUnauthenticated("client_assertion is expired or has no exp")
	case *c.Exp > now+int64(maxAssertionLifetime.Seconds()):
		return errUnauthenticated(fmt.Sprintf("client_assertion exp is more than %v away", maxAssertionLifetime))
	case c.Iat != nil && *c.Iat > now+maxClockSkew, c.Nbf != nil && *c.Nbf > now+maxClockSkew:
		return errUnauthenticated("client_assertion is not valid yet")
	case c.Jti == "" || len(c.Jti) > maxJTIBytes:
		return errUnauthenticated("client_assertion needs a jti of at most 256 bytes")
	}
	return nil
}

// spendAssertion remembers the assertion's jti until its exp.
func (p *Provider) spendAssertion(ctx context.Context, c assertionClaims) *oauth.Error {
	key := assertionKeyPrefix + oauth.HashHex(c.Iss+"\x00"+c.Jti)
	err := p.store.UseProofOnce(ctx, key, time.Unix(*c.Exp, 0))
	switch {
	case errors.Is(err, record.ErrExists):
		return errUnauthenticated("client_assertion was already used (jti replayed)")
	case err != nil:
		return p.out.Internal(ctx, "authenticate client: spend jti", err)
	}
	return nil
}

// audienceContains: aud is one of want, or an array holding one.
func audienceContains(aud json.RawMessage, want ...string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return slices.Contains(want, one)
	}
	var many []string
	if json.Unmarshal(aud, &many) != nil {
		return false
	}
	return slices.ContainsFunc(many, func(s string) bool { return slices.Contains(want, s) })
}

// clientJWK is one key of a registered JWKS (RFC 7517 §4, RFC 7518 §6).
type clientJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// verifyAssertion checks the signature under a key of the registered
// JWKS: the key whose kid the header names, else any key of the
// algorithm's type.
func verifyAssertion(a parsedAssertion, jwks string) error {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal([]byte(jwks), &set) != nil || len(set.Keys) == 0 {
		return errors.New("the client has no usable registered JWKS")
	}
	digest := sha256.Sum256([]byte(a.signingInput))
	for _, raw := range set.Keys {
		var k clientJWK
		if json.Unmarshal(raw, &k) != nil || (a.header.Kid != "" && k.Kid != a.header.Kid) || (k.Use != "" && k.Use != "sig") ||
			(k.Alg != "" && k.Alg != a.header.Alg) {
			continue
		}
		if verifyWithJWK(k, a.header.Alg, digest[:], a.signature) == nil {
			return nil
		}
	}
	return errors.New("the signature verifies under no registered key")
}

// verifyWithJWK verifies an RS256 (RSA ≥ 2048 bits) or ES256 (P-256, R ‖
// S) signature.
func verifyWithJWK(k clientJWK, alg string, digest, sig []byte) error {
	switch {
	case alg == algRS256 && k.Kty == "RSA":
		n, err1 := decodeSegment(k.N)
		e, err2 := decodeSegment(k.E)
		if errors.Join(err1, err2) != nil || len(e) > 4 {
			return errors.New("malformed RSA key")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits {
			return errors.New("RSA key shorter than 2048 bits")
		}
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest, sig)
	case alg == algES256 && k.Kty == "EC" && k.Crv == "P-256":
		x, err1 := decodeSegment(k.X)
		y, err2 := decodeSegment(k.Y)
		if errors.Join(err1, err2) != nil || len(x) != 32 || len(y) != 32 || len(sig) != es256Size {
			return errors.New("malformed EC key or signature")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return err
		}
		if !ecdsa.Verify(pub, digest, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return errors.New("signature does not verify")
		}
		return nil
	}
	return errors.New("key type does not match alg")
}

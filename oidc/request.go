package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"worldid/internal/leaf/strictjson"
)

// Pending sign-ins are not stored (doc.go "Pending sign-ins"): the
// browser's wait-page URL and the wallet's link each carry the request
// sealed with AES-256-GCM under a key derived from the signing key, which
// every replica loads from the store. The store only learns of a request
// when the wallet or the browser acts on it (record.SigninProgress).
const (
	sealInfo       = "worldid oidc sign-in request seal v1" // HKDF info
	sealKIDPrefix  = 8                                      // characters of the kid that name the sealing key
	requestIDBytes = 16
	bindingBytes   = 32
	// Additional data of the two token kinds, so that one cannot be used
	// as the other.
	purposeBrowser = "browser"
	purposeWallet  = "wallet"
	// maxTokenBytes bounds a token before it is decoded: a browser token
	// with a 512-byte state and nonce and a long redirect URI stays well
	// below it.
	maxTokenBytes = 16 << 10
)

// newSealer derives a signing key's sealing AEAD: HKDF-SHA256 of its
// PKCS #8 encoding. The key never leaves the process and rotates with the
// signing key; a retired key still opens tokens while it is published
// (24 h, far beyond the 10-minute request lifetime).
func newSealer(der []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, der, nil, sealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

var errBadToken = errors.New("oidc: request token is malformed or was not issued here")

// seal encrypts plaintext under the current signer: kid prefix, ".",
// base64url(nonce ‖ ciphertext).
func (p *Provider) seal(purpose string, plaintext []byte) (string, error) {
	k := p.keySet().signer
	nonce, err := p.random(k.seal.NonceSize())
	if err != nil {
		return "", err
	}
	sealed := k.seal.Seal(nonce, nonce, plaintext, []byte(purpose))
	return k.rec.ID[:sealKIDPrefix] + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// open authenticates and decrypts a token sealed by any published key.
func (p *Provider) open(purpose, token string) ([]byte, error) {
	prefix, body, ok := strings.Cut(token, ".")
	if !ok || len(prefix) != sealKIDPrefix || len(token) > maxTokenBytes {
		return nil, errBadToken
	}
	raw, err := decodeSegment(body)
	if err != nil {
		return nil, errBadToken
	}
	for kid, k := range p.keySet().published {
		if !strings.HasPrefix(kid, prefix) || len(raw) < k.seal.NonceSize() {
			continue
		}
		n := k.seal.NonceSize()
		if plain, err := k.seal.Open(nil, raw[:n], raw[n:], []byte(purpose)); err == nil {
			return plain, nil
		}
	}
	return nil, errBadToken
}

// pendingRequest is the browser's token: the validated authorization
// request, its id, expiry and the hash of the browser's binding secret.
type pendingRequest struct {
	ID            []byte `json:"i"`
	Binding       []byte `json:"b"` // SHA-256 of the cookie's secret
	Expires       int64  `json:"e"` // Unix seconds
	ClientID      string `json:"c"`
	RedirectURI   string `json:"r"`
	ResponseType  string `json:"t"`
	Mode          string `json:"m"`
	Scope         string `json:"s"`
	State         string `json:"st,omitempty"`
	Nonce         string `json:"n,omitempty"`
	CodeChallenge string `json:"p,omitempty"`
}

func (r *pendingRequest) expiresAt() time.Time { return time.Unix(r.Expires, 0) }

// progressExpiry is when the store may forget what happened to a request
// expiring at expires: after the grace in which an approval can still be
// finished.
func progressExpiry(expires int64) time.Time { return time.Unix(expires, 0).Add(finishGrace) }

// progressID is the store key of the request: its id's SHA-256.
func progressID(id []byte) string { return hashHex(string(id)) }

// signalOf is the proof's signal: 64 lowercase hex digits derived from the
// request id, so that a proof belongs to exactly one request.
func signalOf(id []byte) string { return hashHex("worldid sign-in signal\x00" + string(id)) }

// matchAlphabet has no 0/O, 1/I/L: the code is read off one screen and
// compared with another.
const matchAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// matchCode is the 5-character code the wait page and the wallet both show.
func matchCode(id []byte) string {
	sum := sha256.Sum256(append([]byte("worldid sign-in match\x00"), id...))
	var b strings.Builder
	for _, c := range sum[:5] {
		b.WriteByte(matchAlphabet[int(c)%len(matchAlphabet)])
	}
	return b.String()
}

func (p *Provider) sealPending(r pendingRequest) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return p.seal(purposeBrowser, b)
}

func (p *Provider) openPending(token string) (pendingRequest, error) {
	var r pendingRequest
	b, err := p.open(purposeBrowser, token)
	if err != nil {
		return r, err
	}
	if err := strictjson.Decode(b, &r); err != nil || len(r.ID) != requestIDBytes || len(r.Binding) != bindingBytes {
		return r, errBadToken
	}
	return r, nil
}

// walletRequest is the wallet's token, kept small because it is the bulk
// of the QR code: id ‖ expiry (8 bytes) ‖ len(client_id) ‖ client_id ‖
// return host.
type walletRequest struct {
	ID         []byte
	Expires    int64
	ClientID   string
	ReturnHost string
}

func (p *Provider) sealWallet(r walletRequest) (string, error) {
	if len(r.ClientID) > 255 {
		return "", errors.New("oidc: client_id longer than 255 bytes")
	}
	b := append([]byte{}, r.ID...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Expires))
	b = append(b, byte(len(r.ClientID)))
	b = append(b, r.ClientID...)
	b = append(b, r.ReturnHost...)
	return p.seal(purposeWallet, b)
}

func (p *Provider) openWallet(token string) (walletRequest, error) {
	var r walletRequest
	b, err := p.open(purposeWallet, token)
	if err != nil {
		return r, err
	}
	if len(b) < requestIDBytes+9 || len(b) < requestIDBytes+9+int(b[requestIDBytes+8]) {
		return r, errBadToken
	}
	r.ID = b[:requestIDBytes]
	r.Expires = int64(binary.BigEndian.Uint64(b[requestIDBytes:]))
	n := int(b[requestIDBytes+8])
	rest := b[requestIDBytes+9:]
	r.ClientID, r.ReturnHost = string(rest[:n]), string(rest[n:])
	return r, nil
}

// Browser binding (doc.go "Binding"): a cookie per request, so that two
// tabs can sign in at once; __Host- when the issuer is served over HTTPS.
func (p *Provider) bindingCookieName(id []byte) string {
	name := "worldid-signin-" + hex.EncodeToString(id[:4])
	if strings.HasPrefix(p.issuer, "https://") {
		return "__Host-" + name
	}
	return name
}

// setBindingCookie binds the browser to the request for as long as it can
// be finished: its lifetime and the grace after it.
func (p *Provider) setBindingCookie(w http.ResponseWriter, id, secret []byte) {
	p.bindingCookie(w, id, base64.RawURLEncoding.EncodeToString(secret), int((signinLifetime + finishGrace).Seconds()))
}

// clearBindingCookie expires the request's cookie once its sign-in is
// over, so that cookies do not pile up for the rest of their lifetime.
func (p *Provider) clearBindingCookie(w http.ResponseWriter, id []byte) {
	p.bindingCookie(w, id, "", -1)
}

// bindingCookie sets the request's cookie; a removal needs the same name,
// path and Secure attribute (RFC 6265bis §4.1.3.2 for __Host-).
func (p *Provider) bindingCookie(w http.ResponseWriter, id []byte, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: p.bindingCookieName(id), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(p.issuer, "https://"),
	})
}

// boundBrowser reports whether r carries the binding cookie of req.
func (p *Provider) boundBrowser(r *http.Request, req pendingRequest) bool {
	c, err := r.Cookie(p.bindingCookieName(req.ID))
	if err != nil {
		return false
	}
	secret, err := base64.RawURLEncoding.Strict().DecodeString(c.Value)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(secret)
	return subtle.ConstantTimeCompare(sum[:], req.Binding) == 1
}

// restartURL is the authorization request of req again: the "start again"
// link of an expired wait page. The relying party's state, nonce and PKCE
// challenge are kept, so its callback accepts the new response.
func (p *Provider) restartURL(req pendingRequest) string {
	v := url.Values{"client_id": {req.ClientID}, "redirect_uri": {req.RedirectURI}, "response_type": {req.ResponseType},
		"response_mode": {req.Mode}, "scope": {req.Scope}}
	for name, val := range map[string]string{"state": req.State, "nonce": req.Nonce, "code_challenge": req.CodeChallenge} {
		if val != "" {
			v.Set(name, val)
		}
	}
	if req.CodeChallenge != "" {
		v.Set("code_challenge_method", pkceS256)
	}
	return p.issuer + pathAuthorize + "?" + v.Encode()
}

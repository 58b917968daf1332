package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"worldid/internal/leaf/strictjson"
	"worldid/internal/oauth"
)

// Pending sign-ins are not stored (doc.go "Pending sign-ins"): the
// browser's wait-page URL and the wallet's link each carry the request
// sealed by the provider (Provider.Seal: AES-256-GCM under a key derived
// from its signing key, which every replica loads from the store). The
// store only learns of a request when the wallet or the browser acts on it
// (record.SigninProgress).
const (
	requestIDBytes = 16
	bindingBytes   = 32
	// Purposes (the sealing's additional data) of the two token kinds,
	// so that one cannot be used as the other.
	purposeBrowser = "browser"
	purposeWallet  = "wallet"
)

var errBadToken = errors.New("signin: request token is malformed or was not issued here")

// pendingRequest is the browser's token: the validated authorization
// request, its id, expiry and the hash of the browser's binding secret.
type pendingRequest struct {
	ID      []byte `json:"i"`
	Binding []byte `json:"b"` // SHA-256 of the cookie's secret
	Expires int64  `json:"e"` // Unix seconds
	// Bridge is the page's bridge request, once the page was shown.
	Bridge *bridgeRef `json:"w,omitempty"`
	oauth.Request
}

func (r *pendingRequest) expiresAt() time.Time { return time.Unix(r.Expires, 0) }

// progressExpiry is when the store may forget what happened to a request
// expiring at expires: after the grace in which an approval can still be
// finished.
func progressExpiry(expires int64) time.Time { return time.Unix(expires, 0).Add(finishGrace) }

// progressID is the store key of the request: its id's SHA-256.
func progressID(id []byte) string { return oauth.HashHex(string(id)) }

// signalOf is the proof's signal: 64 lowercase hex digits derived from the
// request id, so that a proof belongs to exactly one request.
func signalOf(id []byte) string { return oauth.HashHex("worldid sign-in signal\x00" + string(id)) }

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

func (f *Flow) sealPending(r pendingRequest) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return f.provider.Seal(purposeBrowser, b)
}

func (f *Flow) openPending(token string) (pendingRequest, error) {
	var r pendingRequest
	b, err := f.provider.Open(purposeBrowser, token)
	if err != nil {
		return r, err
	}
	if err := strictjson.Decode(b, &r); err != nil || len(r.ID) != requestIDBytes || len(r.Binding) != bindingBytes ||
		r.Bridge != nil && !r.Bridge.valid() {
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

func (f *Flow) sealWallet(r walletRequest) (string, error) {
	if len(r.ClientID) > 255 {
		return "", errors.New("signin: client_id longer than 255 bytes")
	}
	b := append([]byte{}, r.ID...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Expires))
	b = append(b, byte(len(r.ClientID)))
	b = append(b, r.ClientID...)
	b = append(b, r.ReturnHost...)
	return f.provider.Seal(purposeWallet, b)
}

func (f *Flow) openWallet(token string) (walletRequest, error) {
	var r walletRequest
	b, err := f.provider.Open(purposeWallet, token)
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

// Browser binding (doc.go "Wait page"): a cookie per request, so that two
// tabs can sign in at once; __Host- when the issuer is served over HTTPS.
func (f *Flow) bindingCookieName(id []byte) string {
	name := "worldid-signin-" + hex.EncodeToString(id[:4])
	if strings.HasPrefix(f.issuer, "https://") {
		return "__Host-" + name
	}
	return name
}

// setBindingCookie binds the browser to the request for as long as it can
// be finished: its lifetime and the grace after it.
func (f *Flow) setBindingCookie(w http.ResponseWriter, id, secret []byte) {
	f.bindingCookie(w, id, base64.RawURLEncoding.EncodeToString(secret), int((signinLifetime + finishGrace).Seconds()))
}

// clearBindingCookie expires the request's cookie once its sign-in is
// over, so that cookies do not pile up for the rest of their lifetime.
func (f *Flow) clearBindingCookie(w http.ResponseWriter, id []byte) {
	f.bindingCookie(w, id, "", -1)
}

// bindingCookie sets the request's cookie; a removal needs the same name,
// path and Secure attribute (RFC 6265bis §4.1.3.2 for __Host-).
func (f *Flow) bindingCookie(w http.ResponseWriter, id []byte, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: f.bindingCookieName(id), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(f.issuer, "https://"),
	})
}

// boundBrowser reports whether r carries the binding cookie of req.
func (f *Flow) boundBrowser(r *http.Request, req pendingRequest) bool {
	c, err := r.Cookie(f.bindingCookieName(req.ID))
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

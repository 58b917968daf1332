package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
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
// browser's wait-page URL carries the request sealed by the provider (Provider.Seal: AES-256-GCM under a key derived
// from its signing key, which every replica loads from the store). The
// store only learns of a request when the wallet or the browser acts on it
// (record.SigninProgress).
const (
	requestIDBytes = 16
	bindingBytes   = 32
	// purposeBrowser is the sealing's additional data of the browser's
	// token, so that no value sealed for another purpose can be used as one.
	purposeBrowser = "browser"
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

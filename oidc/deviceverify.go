package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"time"

	"worldid/internal/leaf/page"
	"worldid/internal/leaf/ratelimit"
	"worldid/internal/oauth"
	"worldid/record"
)

// The verification page of the device grant (RFC 8628 §3.3):
//
//	GET  /device[?user_code=…]  the form (verification_uri, and _complete with the code filled in to compare)
//	POST /device                the entered code: the sign-in starts, as from /authorize
//
// A valid code starts the same browser sign-in as /authorize (Signin.Start:
// the wait page, its QR code and Wallet Bridge request) for an
// oauth.Request that names the device grant; the sign-in then comes back
// through AuthorizationResponse and Respond (approveDevice,
// respondDevice), which decide the grant and show the browser the outcome
// instead of redirecting.

const (
	pathDevice = "/device"
	// deviceCSRFCookie holds the form's double-submit token
	// (SameSite=Strict, so no other site's form carries it).
	deviceCSRFCookie = "worldid-device"
	deviceCSRFBytes  = 16
	// denyTimeout bounds the store write of a refusal, which Respond
	// makes without the request's context.
	denyTimeout = 5 * time.Second
	// maxGuessKeys bounds the entry limiter's table of client addresses.
	maxGuessKeys = 100_000
)

// Device page outcomes (the template's Result); a decision's is also its
// event.
const (
	deviceApproved = DeviceEventApproved
	deviceDenied   = DeviceEventDenied
	deviceExpired  = "expired"
	deviceUsed     = "used"
)

// DefaultDeviceEntryRate is the per-client-address rate of user code
// entries (RFC 8628 §5.1): 5 at once, then one every 10 s, per replica.
// deviceEntryGlobal bounds all entries of a replica, so that many
// addresses together cannot guess faster than 10 a second: over a code's
// 10 minutes at most 6,000 + 100 guesses, each hitting one of n live codes
// with probability n/20^8 (≈ 2.3·10⁻⁷·n for all of them).
var (
	DefaultDeviceEntryRate = ratelimit.Rate{Burst: 5, Every: 10 * time.Second}
	deviceEntryGlobal      = ratelimit.Rate{Burst: 100, Every: 100 * time.Millisecond}
)

type devicePageData struct {
	page.Head
	Action, CSRF string
	UserCode     string // the code to compare, XXXX-XXXX, or what was typed
	Message      string // why the entered code was not accepted
	Result       string // "" (the form) or a device page outcome
}

// deviceEntry is a parsed POST of the form.
type deviceEntry struct {
	csrf, typed, userCode string
}

func parseDeviceEntry(params map[string]string) (deviceEntry, *oauth.Error) {
	d := deviceEntry{csrf: params["csrf"], typed: params["user_code"]}
	if d.csrf == "" {
		return d, oauth.ErrRequired("csrf")
	}
	if d.typed == "" {
		return d, oauth.ErrRequired("user_code")
	}
	if code, ok := parseUserCode(d.typed); ok {
		d.userCode = code
	}
	return d, nil
}

// serveDevicePage shows the form; with user_code (verification_uri_complete)
// the code is filled in and shown to compare with the device's. Nothing is
// looked up, so the page tells nothing about codes.
func (p *Provider) serveDevicePage(w http.ResponseWriter, r *http.Request) {
	q, e := oauth.ParseQuery(r.URL.RawQuery)
	var params map[string]string
	if e == nil {
		params, e = oauth.StrictParams(q)
	}
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	var data devicePageData
	if typed := params["user_code"]; typed != "" {
		if code, ok := parseUserCode(typed); ok {
			data.UserCode = formatUserCode(code)
		} else {
			data.Message = msgBadUserCode
		}
	}
	p.deviceForm(r.Context(), w, http.StatusOK, data)
}

const (
	msgBadUserCode     = "That is not a code from a device: it has 8 letters, like BCDF-GHJK."
	msgUnknownUserCode = "No device is waiting for that code, or it expired. Check the code on your device."
)

// deviceForm renders the form with a fresh double-submit token.
func (p *Provider) deviceForm(ctx context.Context, w http.ResponseWriter, status int, data devicePageData) {
	raw, err := p.random(deviceCSRFBytes)
	if err != nil {
		p.out.ErrorPage(w, p.out.Internal(ctx, "device: random", err))
		return
	}
	data.CSRF, data.Action = base64.RawURLEncoding.EncodeToString(raw), p.issuer+pathDevice
	http.SetCookie(w, &http.Cookie{Name: p.deviceCookieName(), Value: data.CSRF, Path: "/", MaxAge: int(deviceLifetime.Seconds()),
		HttpOnly: true, Secure: p.secure(), SameSite: http.SameSiteStrictMode})
	p.renderDevice(w, status, data)
}

func (p *Provider) renderDevice(w http.ResponseWriter, status int, data devicePageData) {
	p.out.RenderPage(w, status, page.Device, func(base page.Head) any {
		data.Head = base
		return data
	})
}

// deviceCookieName: __Host- when the issuer is https (RFC 6265bis
// §4.1.3.2), as the other cookies; Path=/ also reaches the page behind a
// proxy that strips a path prefix of the issuer.
func (p *Provider) deviceCookieName() string {
	if p.secure() {
		return "__Host-" + deviceCSRFCookie
	}
	return deviceCSRFCookie
}

// serveDeviceEntry takes the entered code: within the entry rates, a code
// of a pending grant of an enabled app starts the browser sign-in.
func (p *Provider) serveDeviceEntry(w http.ResponseWriter, r *http.Request, s Signin) {
	v, e := oauth.ReadForm(w, r)
	var params map[string]string
	if e == nil {
		params, e = oauth.StrictParams(v)
	}
	var d deviceEntry
	if e == nil {
		d, e = parseDeviceEntry(params)
	}
	if e == nil && !p.sameForm(r, d.csrf) {
		e = oauth.NewError(http.StatusForbidden, "form_expired", "access_denied", "csrf",
			"this form is out of date or came from another site; open the device page again")
	}
	if e == nil {
		e = p.allowEntry(r)
	}
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	if d.userCode == "" {
		p.observe(DeviceEventBadCode)
		p.deviceForm(r.Context(), w, http.StatusBadRequest, devicePageData{UserCode: d.typed, Message: msgBadUserCode})
		return
	}
	g, err := p.store.DeviceGrantByUserCode(r.Context(), oauth.HashHex(d.userCode))
	switch {
	case errors.Is(err, record.ErrNotFound), err == nil && (g.State != record.DevicePending || !p.now().Before(g.ExpiresAt)):
		p.observe(DeviceEventBadCode)
		p.deviceForm(r.Context(), w, http.StatusBadRequest, devicePageData{UserCode: d.typed, Message: msgUnknownUserCode})
		return
	case err != nil:
		p.out.ErrorPage(w, p.out.Internal(r.Context(), "device: look up user code", err))
		return
	}
	app, err := p.store.App(r.Context(), g.ClientID)
	switch {
	case errors.Is(err, record.ErrNotFound), err == nil && app.Disabled:
		p.out.ErrorPage(w, errClientDisabled())
		return
	case err != nil:
		p.out.ErrorPage(w, p.out.Internal(r.Context(), "device: load app", err))
		return
	}
	s.Start(r.Context(), w, p.deviceRequest(g))
}

// deviceRequest is the authorization request a device grant's sign-in
// carries: its client and scope, and the grant (Device); the "redirect
// URI" is the device page, where the browser is told the outcome.
func (p *Provider) deviceRequest(g record.DeviceGrant) oauth.Request {
	return oauth.Request{ClientID: g.ClientID, RedirectURI: p.issuer + pathDevice, ResponseType: rtCode.String(), Mode: modeQuery,
		Scope: g.Scope, Device: g.ID}
}

// sameForm: the form's token equals its cookie (double submit).
func (p *Provider) sameForm(r *http.Request, token string) bool {
	c, err := r.Cookie(p.deviceCookieName())
	return err == nil && c.Value != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(token)) == 1
}

// allowEntry takes a token from the client address's entry rate and from
// the replica's.
func (p *Provider) allowEntry(r *http.Request) *oauth.Error {
	now := p.now()
	wait, ok := p.deviceEntries.Allow(ratelimit.ClientKey(r.RemoteAddr), now)
	if ok {
		wait, ok = p.deviceGuesses.Allow("", now)
	}
	if ok {
		return nil
	}
	return oauth.NewError(http.StatusTooManyRequests, "too_many_requests", "temporarily_unavailable", "user_code",
		"too many codes were entered just now; wait "+strconv.Itoa(ratelimit.RetryAfter(wait))+" seconds and try again")
}

// approveDevice decides a device grant for the sign-in the wallet
// approved: its outcome goes to Respond.
func (p *Provider) approveDevice(ctx context.Context, req oauth.Request, approved record.SigninProgress) (oauth.Response, error) {
	result, err := p.decideDevice(ctx, req.Device, record.DeviceGrant{State: record.DeviceApproved,
		Subject: approved.Subject, VerificationLevel: approved.VerificationLevel, AuthTime: approved.AuthTime})
	if err != nil {
		return oauth.Response{}, err
	}
	return oauth.Response{Device: result}, nil
}

// decideDevice moves a pending, unexpired grant to d's state (with d's
// subject, level and auth time) and returns the page's outcome.
func (p *Provider) decideDevice(ctx context.Context, id string, d record.DeviceGrant) (string, error) {
	now := p.now()
	var result string
	var decided bool
	_, err := p.store.UpdateDeviceGrant(ctx, id, func(g *record.DeviceGrant) bool {
		result, decided = decide(g, d, now)
		return decided
	})
	if err == nil && decided {
		p.observe(result) // DeviceEventApproved or DeviceEventDenied
	}
	if errors.Is(err, record.ErrNotFound) {
		return deviceExpired, nil
	}
	return result, err
}

// decide applies decision d to g at now: only a pending grant before its
// expiry is decided; it reports the outcome and whether g changed.
func decide(g *record.DeviceGrant, d record.DeviceGrant, now time.Time) (result string, write bool) {
	switch {
	case !now.Before(g.ExpiresAt):
		return deviceExpired, false
	case g.State != record.DevicePending:
		return deviceUsed, false
	}
	g.State, g.Subject, g.VerificationLevel, g.AuthTime = d.State, d.Subject, d.VerificationLevel, d.AuthTime
	if d.State == record.DeviceApproved {
		return deviceApproved, true
	}
	return deviceDenied, true
}

// respondDevice shows the browser the outcome of a device sign-in; an
// error response (the user cancelled, the app was disabled, the proof
// does not meet the request) denies the grant.
func (p *Provider) respondDevice(w http.ResponseWriter, req oauth.Request, resp oauth.Response) {
	result := resp.Device
	if resp.Params.Get("error") != "" {
		ctx, cancel := context.WithTimeout(context.Background(), denyTimeout)
		defer cancel()
		var err error
		if result, err = p.decideDevice(ctx, req.Device, record.DeviceGrant{State: record.DeviceDenied}); err != nil {
			p.out.ErrorPage(w, p.out.Internal(ctx, "device: deny", err))
			return
		}
	}
	p.renderDevice(w, http.StatusOK, devicePageData{Result: result})
}

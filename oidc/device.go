package oidc

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"time"

	"worldid/internal/oauth"
	"worldid/record"
)

// The device authorization endpoint (RFC 8628 §3.1, §3.2): a device that
// cannot show a browser (a CLI, a TV, an agent) asks for a device code and
// a user code; the user enters the user code at the verification page
// (deviceverify.go) and signs in there as at /authorize; the device polls
// /token with the device code (devicetoken.go).

const (
	grantDeviceCode = "urn:ietf:params:oauth:grant-type:device_code" // RFC 8628 §3.4
	// deviceLifetime bounds a device grant, as it bounds a sign-in page.
	deviceLifetime = 10 * time.Minute
	// deviceRetention keeps a grant after its expiry, so that a late
	// poll is told expired_token rather than invalid_grant.
	deviceRetention = 10 * time.Minute
	// deviceInterval is the polling interval handed out (RFC 8628 §3.2:
	// 5 s when absent); slow_down adds deviceSlowDown (§3.5).
	deviceInterval = 5
	deviceSlowDown = 5
	// deviceCodeBytes of randomness make a device code (256 bits).
	deviceCodeBytes = 32
	// userCodeTries bounds the draws of a user code that is not in use.
	userCodeTries = 4
)

// Device grant events (Options.ObserveDevice): a grant started, a wrong
// or unknown user code entered, the grant approved or denied at the
// verification page, a poll answered slow_down, the tokens issued.
const (
	DeviceEventStarted  = "started"
	DeviceEventBadCode  = "bad_code"
	DeviceEventApproved = "approved"
	DeviceEventDenied   = "denied"
	DeviceEventSlowDown = "slow_down"
	DeviceEventRedeemed = "redeemed"
)

func (p *Provider) observe(event string) {
	if p.observeDevice != nil {
		p.observeDevice(event)
	}
}

// deviceAuthResponse is RFC 8628 §3.2.
type deviceAuthResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// serveDeviceAuthorization starts a device grant: the client
// authenticates as at /token (RFC 8628 §3.1), then the requested scope is
// checked as at /authorize.
func (p *Provider) serveDeviceAuthorization(w http.ResponseWriter, r *http.Request) {
	app, params, e := p.enabledClientForm(w, r)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	scope, e := parseScope(params["scope"])
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	resp, err := p.newDeviceGrant(r.Context(), app.ID, scope)
	if err != nil {
		p.out.WriteError(w, p.out.Internal(r.Context(), "device authorization", err))
		return
	}
	p.out.WriteJSON(w, http.StatusOK, resp)
}

// newDeviceGrant draws the two codes and stores the grant under their
// hashes; a user code already in use (probability about n/20^8 with n
// grants kept) is drawn again.
func (p *Provider) newDeviceGrant(ctx context.Context, clientID, scope string) (deviceAuthResponse, error) {
	raw, err := p.random(deviceCodeBytes)
	if err != nil {
		return deviceAuthResponse{}, err
	}
	deviceCode := base64.RawURLEncoding.EncodeToString(raw)
	now := p.now()
	g := record.DeviceGrant{ID: oauth.HashHex(deviceCode), ClientID: clientID, Scope: scope, State: record.DevicePending,
		Interval: deviceInterval, ExpiresAt: now.Add(deviceLifetime), RetainUntil: now.Add(deviceLifetime + deviceRetention)}
	for range userCodeTries {
		userCode, err := newUserCode(p.rand)
		if err != nil {
			return deviceAuthResponse{}, err
		}
		g.UserCode = oauth.HashHex(userCode)
		err = p.store.SaveDeviceGrant(ctx, g)
		if errors.Is(err, record.ErrExists) {
			continue
		}
		if err != nil {
			return deviceAuthResponse{}, err
		}
		p.observe(DeviceEventStarted)
		shown := formatUserCode(userCode)
		return deviceAuthResponse{
			DeviceCode: deviceCode, UserCode: shown,
			VerificationURI:         p.issuer + pathDevice,
			VerificationURIComplete: p.issuer + pathDevice + "?" + url.Values{"user_code": {shown}}.Encode(),
			ExpiresIn:               int(deviceLifetime.Seconds()), Interval: deviceInterval,
		}, nil
	}
	return deviceAuthResponse{}, errors.New("no unused user code in a few draws")
}

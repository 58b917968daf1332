package oidc

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"worldid/internal/oauth"
	"worldid/record"
)

// The device's polling at /token (RFC 8628 §3.4, §3.5):
// grant_type=urn:ietf:params:oauth:grant-type:device_code with the device
// code, answered authorization_pending, slow_down, access_denied,
// expired_token, or, once, the tokens of the approved sign-in.

// pollSlack is how much earlier than its interval a poll may come without
// slow_down: a client that waits the interval between polls sees its own
// network and scheduling delays shift each poll by a fraction of it.
const pollSlack = time.Second

// deviceTokenRequest is a parsed device_code grant.
type deviceTokenRequest struct{ deviceCode string }

func parseDeviceTokenRequest(params map[string]string) (deviceTokenRequest, *oauth.Error) {
	req := deviceTokenRequest{deviceCode: params["device_code"]}
	if req.deviceCode == "" {
		return req, oauth.ErrRequired("device_code")
	}
	return req, nil
}

// serveDeviceToken answers one poll of an authenticated client.
func (p *Provider) serveDeviceToken(w http.ResponseWriter, r *http.Request, app record.App, params map[string]string) {
	req, e := parseDeviceTokenRequest(params)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	now := p.now()
	var outcome *oauth.Error
	g, err := p.store.UpdateDeviceGrant(r.Context(), oauth.HashHex(req.deviceCode), func(g *record.DeviceGrant) bool {
		var write bool
		write, outcome = pollDevice(g, app.ID, now)
		return write
	})
	switch {
	case errors.Is(err, record.ErrNotFound):
		outcome = errDeviceGrant("the device code is invalid")
	case err != nil:
		outcome = p.out.Internal(r.Context(), "token: poll device grant", err)
	}
	if outcome != nil {
		if outcome.OAuth == "slow_down" {
			p.observe(DeviceEventSlowDown)
		}
		p.out.WriteError(w, outcome)
		return
	}
	rawGrant, err := p.random(16)
	if err != nil {
		p.out.WriteError(w, p.out.Internal(r.Context(), "token: random", err))
		return
	}
	resp, err := p.issueTokens(grant{id: hex.EncodeToString(rawGrant), clientID: g.ClientID, scope: g.Scope,
		sub: g.Subject, level: g.VerificationLevel, authTime: g.AuthTime, profile: app.Profile})
	if err != nil {
		p.out.WriteError(w, p.out.Internal(r.Context(), "token: sign", err))
		return
	}
	p.observe(DeviceEventRedeemed)
	p.out.WriteJSON(w, http.StatusOK, resp)
}

// pollDevice applies one poll by clientID at now to g: it reports whether
// g changed (and must be stored) and the error to answer, nil when the
// tokens are to be issued (g is then redeemed, so a second poll fails).
func pollDevice(g *record.DeviceGrant, clientID string, now time.Time) (write bool, e *oauth.Error) {
	switch {
	case g.ClientID != clientID:
		return false, errDeviceGrant("the device code was issued to another client")
	case !now.Before(g.ExpiresAt):
		return false, deviceError("expired_token", "the device code expired; start again")
	case g.State == record.DeviceRedeemed:
		return false, errDeviceGrant("the device code was already used")
	case g.State == record.DeviceDenied:
		return false, deviceError("access_denied", "the user refused the sign-in")
	case g.State == record.DeviceApproved:
		g.State, g.PolledAt = record.DeviceRedeemed, now
		return true, nil
	}
	tooSoon := !g.PolledAt.IsZero() && now.Sub(g.PolledAt) < time.Duration(g.Interval)*time.Second-pollSlack
	g.PolledAt = now
	if tooSoon {
		g.Interval += deviceSlowDown
		return true, deviceError("slow_down", "polling too fast: wait at least "+strconv.Itoa(g.Interval)+" seconds between requests")
	}
	return true, deviceError("authorization_pending", "the user has not signed in yet")
}

// deviceError is an RFC 8628 §3.5 error: 400 with the error code.
func deviceError(code, detail string) *oauth.Error {
	return oauth.NewError(http.StatusBadRequest, code, code, "device_code", detail)
}

func errDeviceGrant(detail string) *oauth.Error {
	return oauth.NewError(http.StatusBadRequest, "invalid_grant", "invalid_grant", "device_code", detail)
}

package oidc

import (
	"net/http"
	"strings"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"worldid/record"
)

// setProfile registers the fixture's app under profile.
func (f *fixture) setProfile(profile string) {
	f.app.Profile = profile
	f.store.putApp(f.app)
}

// TestCurrentProfileClaims: an app on the current profile gets acr per
// level, amr pop and auth_time (checked by go-oidc), no legacy claims, and
// 5-minute codes and ID tokens.
func TestCurrentProfileClaims(t *testing.T) {
	for _, level := range []string{"orb", "device"} {
		t.Run(level, func(t *testing.T) {
			f := newFixture(t)
			f.setProfile(record.ProfileCurrent)
			rp := newRelyingParty(t, f, oauth2.AuthStyleInHeader)
			verifier := oauth2.GenerateVerifier()
			params := redirectParams(t, rp.authorize(t, rp.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), gooidc.Nonce("n")), level), modeQuery)
			if params.Get("iss") != f.issuer {
				t.Fatalf("iss %q", params.Get("iss"))
			}
			tok := must(rp.conf.Exchange(rp.ctx, params.Get("code"), oauth2.VerifierOption(verifier)))
			idt, claims := rp.verifyIDToken(t, tok.Extra("id_token").(string), "n")
			var c struct {
				ACR      string   `json:"acr"`
				AMR      []string `json:"amr"`
				AuthTime int64    `json:"auth_time"`
			}
			if err := idt.Claims(&c); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"orb": acrOrb, "device": acrDevice}[level]
			if c.ACR != want || len(c.AMR) != 1 || c.AMR[0] != "pop" || c.AuthTime != testStart.Unix() {
				t.Fatalf("acr %q amr %v auth_time %d", c.ACR, c.AMR, c.AuthTime)
			}
			if claims[f.issuer+"/beta"] != nil || claims[f.issuer+"/v1"] != nil {
				t.Fatalf("legacy claims in the current profile: %v", claims)
			}
			if got := idt.Expiry.Sub(idt.IssuedAt); got != 5*time.Minute {
				t.Fatalf("ID token lives %v", got)
			}
			if info := rp.userinfo(t, tok.AccessToken); info[f.issuer+"/beta"] != nil || info[f.issuer+"/v1"] != nil || info["sub"] != claims["sub"] {
				t.Fatalf("userinfo of the current profile: %v", info)
			}
		})
	}
}

// TestCurrentProfileCodeLifetime: the code expires after 5 minutes.
func TestCurrentProfileCodeLifetime(t *testing.T) {
	f := newFixture(t)
	f.setProfile(record.ProfileCurrent)
	params := responseParams(t, f.signIn(authorizeQuery(), "orb"), modeQuery)
	c := f.storedCode(params.Get("code"))
	if got := c.ExpiresAt.Sub(testStart); got != 5*time.Minute {
		t.Fatalf("code lives %v", got)
	}
}

// TestV1ProfileHasNoACR: the v1 contract is unchanged: no acr or amr,
// the legacy claims and one-hour ID tokens.
func TestV1ProfileHasNoACR(t *testing.T) {
	f := newFixture(t)
	rp := newRelyingParty(t, f, oauth2.AuthStyleInHeader)
	params := redirectParams(t, rp.authorize(t, rp.conf.AuthCodeURL("s", gooidc.Nonce("n")), "orb"), modeQuery)
	tok := must(rp.conf.Exchange(rp.ctx, params.Get("code")))
	idt, claims := rp.verifyIDToken(t, tok.Extra("id_token").(string), "n")
	if claims["acr"] != nil || claims["amr"] != nil || claims[f.issuer+"/v1"] == nil || idt.Expiry.Sub(idt.IssuedAt) != time.Hour {
		t.Fatalf("v1 claims changed: %v", claims)
	}
}

// TestACRValues: a proof weaker than every requested acr is refused with
// a clear error; a proof that satisfies one is accepted; unknown values
// are ignored.
func TestACRValues(t *testing.T) {
	for _, tc := range []struct {
		acrValues, level string
		ok               bool
	}{
		{acrOrb, "orb", true},
		{acrOrb, "device", false},
		{acrDevice, "orb", true},
		{acrOrb + " " + acrDevice, "device", true},
		{"1 2", "device", true},
		{"urn:unknown " + acrOrb, "device", false},
	} {
		t.Run(tc.acrValues+"/"+tc.level, func(t *testing.T) {
			f := newFixture(t)
			q := authorizeQuery()
			q.Set("acr_values", tc.acrValues)
			params := responseParams(t, f.signIn(q, tc.level), modeQuery)
			if tc.ok != (params.Get("code") != "") {
				t.Fatalf("params %v", params)
			}
			if !tc.ok && (params.Get("error") != "access_denied" || params.Get("state") != "st-1" || params.Get("iss") != f.issuer) {
				t.Fatalf("error params %v", params)
			}
		})
	}
}

// TestAppPolicy: an app limited to some response types refuses the others
// (unauthorized_client), and one requiring PKCE refuses a code request
// without a challenge; both as redirected errors.
func TestAppPolicy(t *testing.T) {
	f := newFixture(t)
	f.app.ResponseTypes = []string{"code"}
	f.app.PKCERequired = true
	f.store.putApp(f.app)
	q := authorizeQuery()
	q.Set("response_type", "id_token")
	wantRedirectError(t, f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, nil), modeFragment, "unauthorized_client", "st-1")
	wantRedirectError(t, f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil), modeQuery, "invalid_request", "st-1")
	q = authorizeQuery()
	q.Set("code_challenge", s256Challenge(testVerifier))
	q.Set("code_challenge_method", "S256")
	if w := f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, nil); w.Code != http.StatusSeeOther ||
		!strings.HasPrefix(w.Header().Get("Location"), f.issuer+"/authorize/wait?") {
		t.Fatalf("code with PKCE: %s", describe(w))
	}
}

// TestResponseTypeListsAgree: the response types an operator may limit an
// app to are the ones the provider supports.
func TestResponseTypeListsAgree(t *testing.T) {
	for _, rt := range supportedResponseTypes() {
		if !record.ValidResponseType(rt) {
			t.Errorf("%q supported but not valid for an app", rt)
		}
	}
	for _, rt := range []string{"token", "id_token code", "", "none"} {
		if record.ValidResponseType(rt) {
			t.Errorf("%q valid for an app", rt)
		}
	}
}

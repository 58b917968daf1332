package oidc

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"worldid/internal/oauth"
)

// FuzzVerifyJWT: the parser never panics, and whatever it accepts has the
// structure it promises.
func FuzzVerifyJWT(f *testing.F) {
	fx := newFixture(f)
	set := fx.p.keySet()
	g := grant{id: "g", clientID: testClientID, scope: "openid", sub: testNullifier, level: "orb", authTime: testStart}
	valid := must(fx.p.signAccessToken(set, g, testStart))
	f.Add(valid)
	f.Add(must(fx.p.signIDToken(set, g, testStart, "c", "a")))
	f.Add(valid + ".")
	f.Add(strings.Replace(valid, ".", "..", 1))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("")
	f.Add("...")
	f.Fuzz(func(t *testing.T, token string) {
		payload, err := verifyJWT(token, typAccessToken, set.byHeader)
		if err != nil {
			return
		}
		if strings.Count(token, ".") != 2 || len(token) > maxJWTBytes || len(payload) == 0 {
			t.Fatalf("accepted malformed token %q", token)
		}
		if _, err := fx.p.parseAccessToken(token); err != nil && token == valid {
			t.Fatal("valid token rejected")
		}
	})
}

// FuzzParseAuthorize: every accepted request satisfies the rules the
// handler relies on.
func FuzzParseAuthorize(f *testing.F) {
	f.Add(authorizeQuery().Encode())
	f.Add("response_type=id_token+token&scope=openid&client_id=a&redirect_uri=b&nonce=n&response_mode=form_post")
	f.Add("response_type=code&scope=openid&client_id=a&redirect_uri=b&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256")
	f.Add("client_id=a&client_id=b")
	f.Add("response_type=code&response_type=code&scope=openid&client_id=a&redirect_uri=b&prompt=none")
	f.Fuzz(func(t *testing.T, raw string) {
		v, e := oauth.ParseQuery(raw)
		if e != nil {
			return
		}
		req, local, redirect := parseAuthorize(v)
		if local != nil {
			return
		}
		if req.clientID == "" || req.redirectURI == "" || len(v["client_id"]) != 1 || len(v["redirect_uri"]) != 1 {
			t.Fatalf("client_id/redirect_uri not validated: %q", raw)
		}
		if req.mode != modeQuery && req.mode != modeFragment && req.mode != modeFormPost {
			t.Fatalf("mode %q", req.mode)
		}
		if req.state != "" && !validEcho(req.state) {
			t.Fatalf("state %q echoed", req.state)
		}
		if redirect != nil {
			return
		}
		if !req.responseType.supported() || !hasScope(req.scope, scopeOpenID) ||
			(req.responseType&rtIDToken != 0 && req.nonce == "") || (req.mode == modeQuery && req.responseType != rtCode) {
			t.Fatalf("accepted invalid request %q: %+v", raw, req)
		}
		for name, vals := range v {
			if len(vals) > 1 {
				t.Fatalf("duplicate %q accepted", name)
			}
		}
	})
}

func FuzzParseTokenRequest(f *testing.F) {
	f.Add("grant_type=authorization_code&code=abc&redirect_uri=https%3A%2F%2Frp&code_verifier="+testVerifier, "Basic YTpi")
	f.Add("grant_type=refresh_token", "")
	f.Add("client_id=a&client_secret=b&code=c", "basic Og==")
	f.Fuzz(func(t *testing.T, raw, authorization string) {
		v, e := oauth.ParseQuery(raw)
		if e != nil {
			return
		}
		params, e := oauth.StrictParams(v)
		if e != nil {
			return
		}
		if creds, e := parseClientCredentials(authorization, params); e == nil && (creds.id == "" || (authorization == "" && creds.secret == "")) {
			t.Fatalf("credentials %+v accepted", creds)
		}
		req, e := parseTokenRequest(params)
		if e == nil && (req.code == "" || req.redirectURI == "" || params["grant_type"] != grantAuthorizationCode) {
			t.Fatalf("token request %+v accepted", req)
		}
	})
}

func FuzzParseBearer(f *testing.F) {
	f.Add("Bearer abc.def.ghi", "")
	f.Add("", "abc")
	f.Add("bearer  x", "")
	f.Fuzz(func(t *testing.T, authorization, body string) {
		token, e := parseBearer(authorization, body)
		if e == nil && token == "" {
			t.Fatal("empty token accepted")
		}
	})
}

// FuzzEndpoints sends arbitrary requests to every route: never a 500, and
// never a redirect to anything but a registered redirect URI.
func FuzzEndpoints(f *testing.F) {
	fx := newFixture(f)
	// The provider's routes and the sign-in flow's (package signin).
	paths := []string{pathDiscovery, pathJWKS, pathAuthorize, "/authorize/retry", pathToken, pathIntrospect, pathUserinfo,
		"/authorize/wait", "/authorize/status", "/authorize/cancel"}
	methods := []string{http.MethodGet, http.MethodPost, http.MethodOptions, http.MethodPut, http.MethodHead}
	f.Add(uint8(2), uint8(0), authorizeQuery().Encode(), "", "", "")
	f.Add(uint8(2), uint8(1), "", "application/x-www-form-urlencoded", authorizeQuery().Encode(), "")
	f.Add(uint8(4), uint8(1), "", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=x&redirect_uri=y", "Basic YTpi")
	f.Add(uint8(6), uint8(0), "", "", "", "Bearer x.y.z")
	f.Add(uint8(3), uint8(1), "", "application/x-www-form-urlencoded; charset=utf-8", "request=00&proof=1", "")
	f.Add(uint8(7), uint8(0), "r=abcdefgh.AAAA", "", "", "")
	f.Add(uint8(10), uint8(0), "request=abcdefgh.AAAA", "", "", "")
	f.Add(uint8(2), uint8(0), "response_type=code&scope=openid&client_id="+testClientID+"&redirect_uri="+url.QueryEscape(testRedirect)+"&state=%00", "", "", "")
	f.Fuzz(func(t *testing.T, path, method uint8, query, contentType, body, authorization string) {
		target := paths[int(path)%len(paths)]
		if query != "" {
			target += "?" + query
		}
		if _, err := url.ParseRequestURI(target); err != nil || strings.ContainsAny(target, " #") {
			return // not a request line
		}
		header := map[string]string{}
		if contentType != "" {
			header["Content-Type"] = contentType
		}
		if authorization != "" {
			header["Authorization"] = authorization
		}
		w := fx.do(methods[int(method)%len(methods)], target, strings.NewReader(body), header)
		if w.Code >= 500 {
			t.Fatalf("%d for %s %q: %s", w.Code, target, body, w.Body)
		}
		if loc := w.Header().Get("Location"); loc != "" && !strings.HasPrefix(loc, testRedirect) && !strings.HasPrefix(loc, fx.issuer+"/authorize/wait?r=") &&
			!strings.HasPrefix(loc, "https://rp.example/cb?x=1") && !strings.HasPrefix(loc, "com.example.app:/cb") {
			t.Fatalf("redirect to %q", loc)
		}
	})
}

// FuzzOpen feeds arbitrary strings to Open for both purposes the
// sign-in flow seals: never a panic, and nothing opens that this provider
// did not seal for that purpose.
func FuzzOpen(f *testing.F) {
	fx := newFixture(f)
	sealed := map[string]string{}
	for _, purpose := range []string{"browser", "wallet"} {
		token := must(fx.p.Seal(purpose, []byte("plaintext of "+purpose)))
		sealed[purpose] = token
		f.Add(token)
		f.Add(token[:sealKIDPrefix] + "." + strings.Repeat("A", 40))
	}
	f.Add("x.")
	f.Fuzz(func(t *testing.T, token string) {
		for purpose, want := range sealed {
			if plain, err := fx.p.Open(purpose, token); err == nil && token != want {
				t.Fatalf("opened a %s token it did not seal: %q → %q", purpose, token, plain)
			}
		}
	})
}

// FuzzParseAssertion: an accepted client assertion is RS256 or ES256,
// within the size bound, and its signing input is the token's first two
// segments.
func FuzzParseAssertion(f *testing.F) {
	f.Add(unsecuredJWT(`{"iss":"a","sub":"a","aud":"x","exp":1,"jti":"j"}`), "")
	f.Add(signRaw(must(parseSigningKey(sharedKey())).priv, `{"alg":"RS256","kid":"k"}`, `{"iss":"a"}`), "")
	f.Add("a.b.c", "Basic YTpi")
	f.Fuzz(func(t *testing.T, token, authorization string) {
		a, e := parseAssertion(map[string]string{"client_assertion_type": assertionType, "client_assertion": token}, authorization)
		if e != nil {
			return
		}
		if (a.header.Alg != algRS256 && a.header.Alg != algES256) || len(token) > maxJWTBytes || authorization != "" ||
			!strings.HasPrefix(token, a.signingInput+".") {
			t.Fatalf("accepted %q: %+v", token, a)
		}
	})
}

// FuzzRouteByRequestObject: whatever a request object says, the error
// goes to a known mode and echoes only a valid state.
func FuzzRouteByRequestObject(f *testing.F) {
	f.Add(unsecuredJWT(`{"state":"s","response_mode":"form_post"}`), "")
	f.Add(unsecuredJWT(`{"response_type":"code token","response_mode":"query"}`), "fragment")
	f.Add("..", "query")
	f.Fuzz(func(t *testing.T, object, mode string) {
		req := authzRequest{responseType: rtCode, mode: modeQuery, state: "st"}
		routeByRequestObject(&req, object, mode)
		if req.mode != modeQuery && req.mode != modeFragment && req.mode != modeFormPost {
			t.Fatalf("mode %q", req.mode)
		}
		if !validEcho(req.state) {
			t.Fatalf("state %q", req.state)
		}
	})
}

// FuzzParseLogout: an accepted logout request has a valid state, and
// max_age parses to -1 or a bounded non-negative value.
func FuzzParseLogout(f *testing.F) {
	f.Add("id_token_hint=a.b.c&post_logout_redirect_uri=https%3A%2F%2Frp%2Fbye&state=s", "30")
	f.Add("state=%0A", "-1")
	f.Add("client_id=a&client_id=b", "+5")
	f.Fuzz(func(t *testing.T, raw, maxAge string) {
		if v, e := oauth.ParseQuery(raw); e == nil {
			if req, e := parseLogout(v); e == nil && req.state != "" && !validEcho(req.state) {
				t.Fatalf("state %q accepted", req.state)
			}
		}
		if n, e := parseMaxAge(maxAge); e == nil && (n < -1 || n > maxMaxAge || (maxAge != "" && n < 0)) {
			t.Fatalf("max_age %q parsed as %d", maxAge, n)
		}
	})
}

// FuzzParseSectorDocument: an accepted sector identifier document is a
// JSON array whose every listed URI is absolute and has no fragment, and
// it lists at least one.
func FuzzParseSectorDocument(f *testing.F) {
	f.Add([]byte(`["https://a.example/cb","https://b.example/cb","com.example.app:/cb"]`))
	f.Add([]byte(`["https://a.example/cb#x"]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"redirect_uris":["https://a.example/cb"]}`))
	f.Add([]byte(`["https://a.example/cb",1]`))
	f.Add([]byte(`["\u0068ttps://a.example/cb"] x`))
	f.Fuzz(func(t *testing.T, body []byte) {
		listed, err := parseSectorDocument(body)
		if err != nil {
			return
		}
		var all []string
		if json.Unmarshal(body, &all) != nil || len(listed) == 0 {
			t.Fatalf("accepted %q, which is not a non-empty array of strings", body)
		}
		for _, s := range all {
			if u, err := url.Parse(s); !listed[s] || err != nil || !u.IsAbs() || strings.Contains(s, "#") {
				t.Fatalf("accepted %q with element %q", body, s)
			}
		}
	})
}

// FuzzParseDeviceForms: the device grant's parsers (the verification
// page's form and user code, the device_code poll) accept only what the
// handlers rely on: 8 letters of the alphabet, whatever the case, dashes
// and spaces around them, and a device code and CSRF token that are set.
func FuzzParseDeviceForms(f *testing.F) {
	f.Add("csrf=abc&user_code=BCDF-GHJK")
	f.Add("csrf=abc&user_code=bcdf+ghjk")
	f.Add("user_code=ABCD-EFGH")
	f.Add("csrf=x&user_code=" + strings.Repeat("B", 40))
	f.Add("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=abc")
	f.Fuzz(func(t *testing.T, raw string) {
		v, e := oauth.ParseQuery(raw)
		if e != nil {
			return
		}
		params, e := oauth.StrictParams(v)
		if e != nil {
			return
		}
		if req, e := parseDeviceTokenRequest(params); e == nil && req.deviceCode == "" {
			t.Fatal("empty device_code accepted")
		}
		d, e := parseDeviceEntry(params)
		if e != nil {
			return
		}
		if d.csrf == "" || d.typed == "" {
			t.Fatalf("entry %+v accepted", d)
		}
		if d.userCode == "" {
			return
		}
		if len(d.userCode) != userCodeLen || strings.Trim(d.userCode, userCodeAlphabet) != "" ||
			strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(d.typed)) != d.userCode {
			t.Fatalf("user code %q from %q", d.userCode, d.typed)
		}
		if again, ok := parseUserCode(formatUserCode(d.userCode)); !ok || again != d.userCode {
			t.Fatalf("formatted code %q does not parse back", formatUserCode(d.userCode))
		}
	})
}

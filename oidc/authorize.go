package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"worldid/internal/leaf/page"
	"worldid/internal/oauth"
	"worldid/record"
)

// Response modes (OAuth 2.0 Multiple Response Types §2, Form Post).
const (
	modeQuery    = "query"
	modeFragment = "fragment"
	modeFormPost = "form_post"
)

const (
	grantAuthorizationCode = "authorization_code"
	pkceS256               = "S256"
	// maxEchoBytes bounds state and nonce, which are echoed into
	// redirects, pages and tokens.
	maxEchoBytes = 512
)

// responseType is a set of the response_type values code, id_token, token.
type responseType uint8

const (
	rtCode responseType = 1 << iota
	rtIDToken
	rtToken
)

type responseTypeName struct {
	bit  responseType
	name string
}

var responseTypeNames = [...]responseTypeName{{rtCode, "code"}, {rtIDToken, "id_token"}, {rtToken, "token"}}

// String is the canonical spelling: code, id_token, token in this order.
func (t responseType) String() string {
	var parts []string
	for _, n := range responseTypeNames {
		if t&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, " ")
}

// supported: every non-empty combination except token alone, which is
// plain OAuth rather than OpenID Connect (doc/design.md §4).
func (t responseType) supported() bool { return t != 0 && t != rtToken }

func supportedResponseTypes() []string {
	var out []string
	for _, t := range []responseType{rtCode, rtIDToken, rtIDToken | rtToken, rtCode | rtIDToken, rtCode | rtToken, rtCode | rtIDToken | rtToken} {
		out = append(out, t.String())
	}
	return out
}

// parseResponseType reads space-separated values in any order (OAuth 2.0
// Multiple Response Types §3), each once.
func parseResponseType(s string) (responseType, bool) {
	var t responseType
	for part := range strings.SplitSeq(s, " ") {
		i := slices.IndexFunc(responseTypeNames[:], func(n responseTypeName) bool { return n.name == part })
		if i < 0 || t&responseTypeNames[i].bit != 0 {
			return 0, false
		}
		t |= responseTypeNames[i].bit
	}
	return t, t.supported()
}

// defaultMode is query for the code flow, fragment otherwise
// (doc/interfaces.md §4.1).
func (t responseType) defaultMode() string {
	if t == rtCode {
		return modeQuery
	}
	return modeFragment
}

// authzRequest is a parsed authorization request.
type authzRequest struct {
	clientID, redirectURI string
	responseType          responseType
	mode                  string // where the response (or a redirected error) goes
	scope                 string // granted scopes, canonical order
	state, nonce          string
	codeChallenge         string
	acr                   string // weakest level acr_values accept
	promptNone            bool   // answer from the login session, never the wallet
	silent                silentRequest
}

// oauthRequest is the request as the sign-in flow and the response carry it.
func (req authzRequest) oauthRequest() oauth.Request {
	return oauth.Request{ClientID: req.clientID, RedirectURI: req.redirectURI, ResponseType: req.responseType.String(),
		Mode: req.mode, Scope: req.scope, State: req.state, Nonce: req.nonce, CodeChallenge: req.codeChallenge, ACR: req.acr}
}

// parseAuthorize parses the parameters of an authorization request. A
// local error (client_id or redirect_uri missing or repeated) must be shown
// to the user; a redirect error may be sent to the redirect URI once the
// handler has validated it (RFC 6749 §4.1.2.1). req.mode and req.state are
// set as far as they could be parsed, for the redirect.
func parseAuthorize(v url.Values) (req authzRequest, local, redirect *oauth.Error) {
	if req.clientID, local = singleLocal(v, "client_id"); local != nil {
		return req, local, nil
	}
	if req.redirectURI, local = singleLocal(v, "redirect_uri"); local != nil {
		return req, local, nil
	}
	if s := v["state"]; len(s) == 1 && validEcho(s[0]) {
		req.state = s[0]
	}
	rt, rtOK := parseResponseType(first(v, "response_type"))
	mode := first(v, "response_mode")
	req.mode = errorMode(rt, rtOK, mode)
	req.responseType = rt
	if e := parseRest(v, &req, rtOK, mode); e != nil {
		if raw, ok := v["request"]; ok && len(raw) == 1 {
			routeByRequestObject(&req, raw[0], mode)
		}
		return req, nil, e
	}
	return req, nil, nil
}

// requestObjectRouting is what a request object (OIDC Core §6.1) says
// about where its answer goes. Its parameters supersede the query's, so
// the refusal of an object (request_not_supported) goes to the
// response_mode and carries the state the object carried; nothing else of
// the object is used, and its signature is not checked, because only the
// already validated redirect URI receives the error.
type requestObjectRouting struct {
	ResponseType string `json:"response_type"`
	ResponseMode string `json:"response_mode"`
	State        string `json:"state"`
}

// routeByRequestObject sets req.mode and req.state from the payload of a
// compact JWS or unsecured JWT (RFC 7519 §6) given as the request
// parameter; an undecodable object changes nothing.
func routeByRequestObject(req *authzRequest, object, mode string) {
	if len(object) > maxTokenBytes || strings.Count(object, ".") != 2 {
		return
	}
	_, rest, _ := strings.Cut(object, ".")
	payload, _, _ := strings.Cut(rest, ".")
	raw, err := decodeSegment(payload)
	var o requestObjectRouting
	if err != nil || json.Unmarshal(raw, &o) != nil {
		return
	}
	rt, rtOK := req.responseType, req.responseType.supported()
	if o.ResponseType != "" {
		rt, rtOK = parseResponseType(o.ResponseType)
	}
	if o.ResponseMode != "" {
		mode = o.ResponseMode
	}
	req.mode = errorMode(rt, rtOK, mode)
	if validEcho(o.State) {
		req.state = o.State
	}
}

// parseRest checks every parameter after client_id and redirect_uri, in a
// fixed order; the first failure is the redirected error.
func parseRest(v url.Values, req *authzRequest, rtOK bool, mode string) *oauth.Error {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if len(v[name]) > 1 {
			return oauth.ErrDuplicate(name) // RFC 6749 §3.1
		}
	}
	for _, param := range []string{"request", "request_uri", "registration"} {
		if first(v, param) != "" { // OIDC Core §6, §7.2.1
			code := param + "_not_supported"
			return oauth.NewError(http.StatusBadRequest, code, code, param, param+" is not supported")
		}
	}
	switch rt := first(v, "response_type"); {
	case rt == "":
		return oauth.ErrRequired("response_type")
	case !rtOK:
		return oauth.NewError(http.StatusBadRequest, "unsupported_response_type", "unsupported_response_type", "response_type",
			"response_type must be one of "+strings.Join(supportedResponseTypes(), ", "))
	}
	switch mode {
	case "":
	case modeQuery:
		if req.responseType != rtCode {
			// Tokens must never travel in a query (doc/interfaces.md §4.1).
			return oauth.ErrInvalid("response_mode", "response_mode query is supported only for response_type code")
		}
	case modeFragment, modeFormPost:
	default:
		return oauth.ErrInvalid("response_mode", "response_mode must be query, fragment or form_post")
	}
	var e *oauth.Error
	if req.scope, e = parseScope(first(v, "scope")); e != nil {
		return e
	}
	if s := first(v, "state"); s != "" && !validEcho(s) {
		return oauth.ErrInvalid("state", "state must be 1 to 512 visible ASCII characters")
	}
	if req.nonce, e = parseNonce(first(v, "nonce"), req.responseType); e != nil {
		return e
	}
	if req.codeChallenge, e = parsePKCE(first(v, "code_challenge"), first(v, "code_challenge_method")); e != nil {
		return e
	}
	if req.acr, e = parseACRValues(first(v, "acr_values")); e != nil {
		return e
	}
	if req.promptNone, req.silent.ask, e = parsePrompt(first(v, "prompt")); e != nil {
		return e
	}
	if req.silent.maxAge, e = parseMaxAge(first(v, "max_age")); e != nil {
		return e
	}
	req.silent.hint = first(v, "id_token_hint")
	return nil
}

// maxMaxAge bounds max_age (a year of seconds), so that it converts to a
// time.Duration without overflow.
const maxMaxAge = 366 * 24 * 3600

// parseMaxAge: a non-negative decimal number of seconds (OIDC Core
// §3.1.2.1); absent is -1.
func parseMaxAge(s string) (int64, *oauth.Error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || s[0] == '+' {
		return 0, oauth.ErrInvalid("max_age", "max_age must be a non-negative number of seconds")
	}
	return min(n, maxMaxAge), nil
}

// singleLocal returns the one non-empty value of a parameter that decides
// where errors go.
func singleLocal(v url.Values, name string) (string, *oauth.Error) {
	switch vals := v[name]; {
	case len(vals) > 1:
		return "", oauth.ErrDuplicate(name)
	case len(vals) == 0 || vals[0] == "":
		return "", oauth.ErrRequired(name)
	default:
		return vals[0], nil
	}
}

// first is the first value of name ("" if absent); callers reject
// duplicates before relying on it.
func first(v url.Values, name string) string {
	if vals := v[name]; len(vals) > 0 {
		return vals[0]
	}
	return ""
}

// errorMode is where the response goes: the requested mode when it is
// valid for the response type, else the type's default, else query.
func errorMode(rt responseType, rtOK bool, mode string) string {
	switch {
	case mode == modeFragment || mode == modeFormPost:
		return mode
	case mode == modeQuery && (!rtOK || rt == rtCode):
		return mode
	case rtOK:
		return rt.defaultMode()
	}
	return modeQuery
}

// parseScope requires openid, ignores scopes it does not know (OIDC Core
// §3.1.2.1) and returns the granted ones in canonical order.
func parseScope(s string) (string, *oauth.Error) {
	if s == "" {
		return "", oauth.ErrRequired("scope")
	}
	invalid := func(detail string) *oauth.Error {
		return oauth.NewError(http.StatusBadRequest, "invalid_scope", "invalid_scope", "scope", detail)
	}
	requested := map[string]bool{}
	for tok := range strings.SplitSeq(s, " ") {
		if tok == "" || !isScopeToken(tok) {
			return "", invalid("scope must be scope tokens separated by single spaces")
		}
		requested[tok] = true
	}
	if !requested[scopeOpenID] {
		return "", invalid("scope must include openid")
	}
	var granted []string
	for _, k := range knownScopes {
		if requested[k] {
			granted = append(granted, k)
		}
	}
	return strings.Join(granted, " "), nil
}

// isScopeToken: 1*( %x21 / %x23-5B / %x5D-7E ) (RFC 6749 §3.3).
func isScopeToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// validEcho: 1 to maxEchoBytes visible ASCII characters or spaces
// (RFC 6749 Appendix A.5 VSCHAR).
func validEcho(s string) bool {
	if s == "" || len(s) > maxEchoBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// parseNonce: required whenever an ID token is returned from the
// authorization endpoint (OIDC Core §3.2.2.1 for id_token and id_token
// token, §3.3.2.1 for code id_token and code id_token token); optional
// for code and code token.
func parseNonce(nonce string, rt responseType) (string, *oauth.Error) {
	switch {
	case nonce == "" && rt&rtIDToken != 0:
		return "", oauth.ErrRequired("nonce")
	case nonce != "" && !validEcho(nonce):
		return "", oauth.ErrInvalid("nonce", "nonce must be 1 to 512 visible ASCII characters")
	}
	return nonce, nil
}

// parsePKCE accepts only S256 (doc/design.md §4): the challenge is the
// base64url SHA-256 of the verifier, exactly 43 characters (RFC 7636 §4.2).
// An absent method means plain (RFC 7636 §4.3), which is refused.
func parsePKCE(challenge, method string) (string, *oauth.Error) {
	switch {
	case challenge == "" && method == "":
		return "", nil
	case challenge == "":
		return "", oauth.ErrRequired("code_challenge")
	case method != pkceS256:
		return "", oauth.ErrInvalid("code_challenge_method", "code_challenge_method must be S256")
	}
	if b, err := decodeSegment(challenge); err != nil || len(b) != 32 {
		return "", oauth.ErrInvalid("code_challenge", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)")
	}
	return challenge, nil
}

// parsePrompt reads prompt (OIDC Core §3.1.2.1) and reports whether it
// is none, which is answered from the login session alone (session.go),
// or asks for the user (login, consent, select_account), which the wallet
// does in a fresh sign-in, whatever the session.
func parsePrompt(prompt string) (none, ask bool, e *oauth.Error) {
	if prompt == "" {
		return false, false, nil
	}
	values := strings.Split(prompt, " ")
	for _, v := range values {
		if !slices.Contains([]string{"none", "login", "consent", "select_account"}, v) {
			return false, false, oauth.ErrInvalid("prompt", "prompt values are none, login, consent and select_account")
		}
	}
	if slices.Contains(values, "none") {
		if len(values) > 1 {
			return false, false, oauth.ErrInvalid("prompt", "prompt none cannot be combined with other values")
		}
		return true, false, nil
	}
	return false, true, nil
}

// serveAuthorize handles GET (query) and POST (form body) authorization
// requests (OIDC Core §3.1.2.1); a valid one goes to the browser sign-in.
func (p *Provider) serveAuthorize(w http.ResponseWriter, r *http.Request, s Signin) {
	v, e := authorizeParams(w, r)
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	req, local, redirect := parseAuthorize(v)
	if local != nil {
		p.out.ErrorPage(w, local)
		return
	}
	app, target, e := p.validateClient(r.Context(), req.clientID, req.redirectURI)
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	if redirect == nil {
		redirect = checkAppPolicy(app, req)
	}
	if redirect != nil {
		p.respond(w, target, req.mode, oauth.ErrorParams(redirect, req.state))
		return
	}
	if params, ok := p.sessionResponse(r, req, app); ok {
		p.respond(w, target, req.mode, params)
		return
	}
	s.Start(r.Context(), w, req.oauthRequest())
}

// checkAppPolicy applies the app's registered posture (RFC 9700 §2.1.1,
// §2.1.2): the response types it may use, and PKCE when it requires it.
func checkAppPolicy(app record.App, req authzRequest) *oauth.Error {
	rt := req.responseType.String()
	switch {
	case len(app.ResponseTypes) > 0 && !slices.Contains(app.ResponseTypes, rt):
		return oauth.NewError(http.StatusBadRequest, "unauthorized_client", "unauthorized_client", "response_type",
			"this client may not use response_type "+rt)
	case app.PKCERequired && req.responseType&rtCode != 0 && req.codeChallenge == "":
		return oauth.NewError(http.StatusBadRequest, "required", "invalid_request", "code_challenge",
			"this client must send a PKCE code_challenge (S256)")
	}
	return nil
}

func authorizeParams(w http.ResponseWriter, r *http.Request) (url.Values, *oauth.Error) {
	if r.Method == http.MethodPost {
		return oauth.ReadForm(w, r)
	}
	return oauth.ParseQuery(r.URL.RawQuery)
}

// validateClient finds the app and checks that redirectURI is exactly one
// of its registered URIs (string equality) and usable as a redirect target.
func (p *Provider) validateClient(ctx context.Context, clientID, redirectURI string) (record.App, *url.URL, *oauth.Error) {
	app, err := p.store.App(ctx, clientID)
	if errors.Is(err, record.ErrNotFound) {
		return app, nil, oauth.NewError(http.StatusBadRequest, "invalid_client", "invalid_request", "client_id", "unknown client_id")
	}
	if err != nil {
		return app, nil, p.out.Internal(ctx, "authorize: load app", err)
	}
	if app.Disabled {
		return app, nil, errClientDisabled()
	}
	invalid := oauth.NewError(http.StatusBadRequest, "invalid_redirect_uri", "invalid_request", "redirect_uri",
		"redirect_uri is not registered for this client")
	if !slices.Contains(app.RedirectURIs, redirectURI) {
		return app, nil, invalid
	}
	target, err := url.Parse(redirectURI)
	if err != nil || !target.IsAbs() || target.Fragment != "" || target.RawFragment != "" ||
		slices.Contains([]string{"javascript", "data", "vbscript", "blob", "file"}, target.Scheme) {
		invalid.Detail = "the registered redirect_uri is not a usable redirect target"
		invalid.Description = invalid.Detail
		return app, nil, invalid
	}
	return app, target, nil
}

// Respond delivers an authorization response to the redirect URI of a
// request this provider validated, in its response mode; the login
// session of a completed sign-in (resp.Session) becomes the session
// cookie.
func (p *Provider) Respond(ctx context.Context, w http.ResponseWriter, req oauth.Request, resp oauth.Response) {
	if req.Device != "" {
		p.respondDevice(w, req, resp) // deviceverify.go
		return
	}
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		p.out.ErrorPage(w, p.out.Internal(ctx, "respond: redirect_uri", err))
		return
	}
	if resp.Session != "" {
		p.setSessionCookie(w, resp.Session)
	}
	p.respond(w, target, req.Mode, resp.Params)
}

// Denied is the access_denied response of a request (RFC 6749 §4.1.2.1).
func (p *Provider) Denied(req oauth.Request, detail string) oauth.Response {
	return oauth.Response{Params: oauth.ErrorParams(oauth.NewError(http.StatusForbidden, "access_denied", "access_denied", "", detail), req.State)}
}

// respond delivers authorization response parameters, with the issuer
// identifier (RFC 9207), to the validated redirect URI in the given mode: a 303 with a query or fragment, or a
// self-submitting form (OAuth 2.0 Form Post Response Mode).
func (p *Provider) respond(w http.ResponseWriter, target *url.URL, mode string, params url.Values) {
	params = maps.Clone(params)
	params.Set("iss", p.issuer) // RFC 9207 §2, on success and error alike
	if mode == modeFormPost {
		p.formPostPage(w, target, params)
		return
	}
	u := *target
	switch mode {
	case modeQuery:
		if u.RawQuery != "" {
			u.RawQuery += "&" + params.Encode()
		} else {
			u.RawQuery = params.Encode()
		}
	case modeFragment:
		u.Fragment, u.RawFragment = "", ""
	}
	loc := u.String()
	if mode == modeFragment {
		loc += "#" + params.Encode()
	}
	oauth.Redirect(w, loc)
}

type formPostData struct {
	page.Head
	Action template.URL // a registered redirect URI (validated in validateClient)
	Params []formParam
}

type formParam struct{ Name, Value string }

// formPostPage auto-submits params to target (OAuth 2.0 Form Post Response
// Mode §2) with a no-script fallback button.
func (p *Provider) formPostPage(w http.ResponseWriter, target *url.URL, params url.Values) {
	var fields []formParam
	for _, name := range slices.Sorted(maps.Keys(params)) {
		fields = append(fields, formParam{name, params.Get(name)})
	}
	p.out.RenderPage(w, http.StatusOK, page.FormPost, func(base page.Head) any {
		return formPostData{Head: base, Action: template.URL(target.String()), Params: fields}
	})
}

// RestartURL is the authorization request req again: the "start again"
// link of an expired sign-in. The relying party's state, nonce and PKCE
// challenge are kept, so its callback accepts the new response.
func (p *Provider) RestartURL(req oauth.Request) string {
	if req.Device != "" {
		return p.issuer + pathDevice // the user enters the device's code again
	}
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
	if req.ACR != "" {
		v.Set("acr_values", acrOf(req.ACR))
	}
	return p.issuer + pathAuthorize + "?" + v.Encode()
}

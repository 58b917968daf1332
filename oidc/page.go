package oidc

import (
	"bytes"
	"context"
	"encoding/base64"
	"html/template"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"worldid/internal/qr"
)

// The HTML pages: the wait page, the expired page, the error page and the
// form_post page.
// Each response has its own CSP nonce; nothing runs or loads that the page
// did not inline under that nonce.

const pageStyle = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
a.button,button{display:inline-block;padding:.6rem 1.2rem;border-radius:.5rem;border:0;font:inherit;cursor:pointer}
a.button{background:#000;color:#fff;text-decoration:none}
#qr{display:block;width:16rem;height:16rem;max-width:100%}
#match-code{font-size:1.6rem;letter-spacing:.3rem;font-family:ui-monospace,monospace}
.warning{border-left:4px solid #c60;padding-left:.8rem}`

var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>{{.Title}}</title><style nonce="{{.Nonce}}">{{.Style}}</style>{{if .Refresh}}
<noscript><meta http-equiv="refresh" content="{{.Refresh}}"></noscript>{{end}}</head>
{{end}}
{{define "wait"}}{{template "head" .}}<body><main>
<h1>Sign in to {{.AppName}} with World ID</h1>
<p>After you approve, you return to <strong id="return-host">{{.ReturnHost}}</strong>.</p>
<p id="status">{{if .Scanned}}Confirm the sign-in in your wallet.{{else}}Scan this code with your World ID wallet.{{end}}</p>
{{.QR}}
<p>Your wallet shows the same match code: <strong id="match-code">{{.MatchCode}}</strong></p>
<p><a id="wallet-link" class="button" href="{{.WalletLink}}">Open the wallet on this device</a></p>
<p class="warning">Never scan a sign-in code that someone sent you: it would sign them in as you.</p>
{{with .SimulatorURL}}<p><a id="simulator" href="{{.}}" target="_blank" rel="noopener">Complete with a test identity (developer simulator)</a></p>{{end}}
<p>{{.AppName}} (<code>{{.ClientID}}</code>) will receive:</p><ul>{{range .Grants}}<li>{{.}}</li>{{end}}</ul>
<p>This request expires at {{.Expires}}.</p>
<form method="post" action="{{.CancelURL}}"><input type="hidden" name="r" value="{{.Token}}"><button id="cancel" type="submit">Cancel</button></form>
<p>{{.Deprecation}}</p>
</main>
<script nonce="{{.Nonce}}">(function(){
var url={{.StatusURL}},busy=false,status=document.getElementById("status");
function poll(){if(busy)return;busy=true;
fetch(url,{credentials:"same-origin",cache:"no-store"}).then(function(r){return r.json()}).then(function(s){busy=false;
if(s.state==="scanned"){status.textContent="Confirm the sign-in in your wallet."}
else if(s.state!=="pending"){location.replace(location.href)}}).catch(function(){busy=false})}
setInterval(poll,1500);document.addEventListener("visibilitychange",function(){if(!document.hidden)poll()});})();</script>
</body></html>
{{end}}
{{define "expired"}}{{template "head" .}}<body><main>
<h1>This sign-in request expired</h1>
<p>The request to sign in to {{.AppName}} expired at {{.Expires}} before the wallet approved it.</p>
<p><a id="restart" class="button" href="{{.RestartURL}}">Start again</a></p>
</main></body></html>
{{end}}
{{define "error"}}{{template "head" .}}<body><main>
<h1>Sign-in failed</h1>
<p id="error-detail">{{.Err.Detail}}</p>
<p><code>{{.Err.Code}}</code>{{with .Err.Attribute}} (<code>{{.}}</code>){{end}}</p>
</main></body></html>
{{end}}
{{define "formpost"}}{{template "head" .}}<body>
<form method="post" action="{{.Action}}">
{{range .Params}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<noscript><p>Your browser does not run scripts: continue to the application.</p><button type="submit">Continue</button></noscript>
</form>
<script nonce="{{.Nonce}}">document.forms[0].submit();</script>
</body></html>
{{end}}`))

// qrLabel is the accessible name of the wait page's QR code.
const qrLabel = "QR code of the sign-in request"

// waitRefresh is the no-script reload period of the wait page, seconds.
const waitRefresh = 2

// pageData is what the "head" template needs; each page embeds it.
type pageData struct {
	Title, Nonce string
	Style        template.CSS
	Refresh      int // seconds; 0: no <noscript> refresh
}

type waitPageData struct {
	pageData
	AppName, ClientID, ReturnHost string
	Grants                        []string
	QR                            template.HTML // server-rendered SVG (internal/qr)
	MatchCode                     string
	WalletLink                    template.URL // worldid:// is not a scheme html/template lets through
	Token, CancelURL, StatusURL   string
	Scanned                       bool
	Expires, Deprecation          string
	SimulatorURL                  string // "" unless the developer simulator serves this client
}

type expiredPageData struct {
	pageData
	AppName, Expires string
	RestartURL       string
}

type errorPageData struct {
	pageData
	Err *apiError
}

type formPostData struct {
	pageData
	Action template.URL // a registered redirect URI (validated in validateClient)
	Params []formParam
}

type formParam struct{ Name, Value string }

// scopeDescriptions say what each granted scope gives the app.
var scopeDescriptions = map[string]string{
	scopeOpenID:  "a pairwise identifier and your verification level",
	scopeEmail:   "an e-mail-style address derived from that identifier",
	scopeProfile: "a generic profile name",
}

// waitPage shows a pending request: the QR code and link of the wallet
// request, the match code, Cancel, and the polling script.
func (p *Provider) waitPage(w http.ResponseWriter, r *http.Request, req pendingRequest, token string, scanned bool) {
	app, err := p.store.App(r.Context(), req.ClientID)
	if err != nil {
		p.errorPage(w, p.errInternal("wait: load app", err))
		return
	}
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		p.errorPage(w, p.errInternal("wait: redirect_uri", err))
		return
	}
	walletToken, err := p.sealWallet(walletRequest{ID: req.ID, Expires: req.Expires, ClientID: req.ClientID, ReturnHost: target.Host})
	if err != nil {
		p.errorPage(w, p.errInternal("wait: seal wallet request", err))
		return
	}
	link := p.walletLink(walletToken)
	code, err := qr.Encode([]byte(link))
	if err != nil {
		p.errorPage(w, p.errInternal("wait: QR code", err))
		return
	}
	var grants []string
	for s := range strings.SplitSeq(req.Scope, " ") {
		grants = append(grants, scopeDescriptions[s])
	}
	data := waitPageData{
		AppName: app.Name, ClientID: app.ID, ReturnHost: target.Host, Grants: grants,
		QR: template.HTML(code.SVG("qr", qrLabel)), MatchCode: matchCode(req.ID), WalletLink: template.URL(link),
		Token: token, CancelURL: p.issuer + pathCancel, StatusURL: p.issuer + pathStatus + "?" + url.Values{"r": {token}}.Encode(),
		Scanned: scanned, Expires: req.expiresAt().UTC().Format(time.RFC1123), Deprecation: p.deprecationSentence(),
	}
	if p.simPath != "" && p.simAllowed(r) {
		data.SimulatorURL = p.simPath + "?" + url.Values{"link": {link}}.Encode()
	}
	p.renderPage(w, http.StatusOK, "wait", func(base pageData) any {
		data.pageData = base
		data.Refresh = waitRefresh
		return data
	})
}

// deprecationSentence is true on the day it is shown (doc/design.md §4).
func (p *Provider) deprecationSentence() string {
	date := p.sunset.UTC().Format(time.DateOnly)
	if p.now().Before(p.sunset) {
		return "Sign-in v1 is deprecated and shuts down on " + date + "."
	}
	return "Sign-in v1 is deprecated: its announced shutdown date, " + date + ", has passed, and this server still runs it."
}

// expiredPage tells the user the request expired and offers the same
// authorization request again.
func (p *Provider) expiredPage(ctx context.Context, w http.ResponseWriter, req pendingRequest) {
	name := req.ClientID
	if app, err := p.store.App(ctx, req.ClientID); err == nil {
		name = app.Name
	}
	p.renderPage(w, http.StatusGone, "expired", func(base pageData) any {
		return expiredPageData{pageData: base, AppName: name, Expires: req.expiresAt().UTC().Format(time.RFC1123), RestartURL: p.restartURL(req)}
	})
}

// errorPage shows e to the user: the authorization endpoint's answer when
// there is no validated redirect URI to send it to (RFC 6749 §4.1.2.1).
func (p *Provider) errorPage(w http.ResponseWriter, e *apiError) {
	if e.allow != "" {
		w.Header().Set("Allow", e.allow)
	}
	p.renderPage(w, e.Status, "error", func(base pageData) any {
		return errorPageData{pageData: base, Err: e}
	})
}

// formPostPage auto-submits params to target (OAuth 2.0 Form Post Response
// Mode §2) with a no-script fallback button.
func (p *Provider) formPostPage(w http.ResponseWriter, target *url.URL, params url.Values) {
	var fields []formParam
	for _, name := range slices.Sorted(maps.Keys(params)) {
		fields = append(fields, formParam{name, params.Get(name)})
	}
	p.renderPage(w, http.StatusOK, "formpost", func(base pageData) any {
		return formPostData{pageData: base, Action: template.URL(target.String()), Params: fields}
	})
}

// renderPage renders a page into memory (so that a template failure never
// leaves a half-written response) under a CSP with a fresh nonce. Only the
// form_post and wait pages may run a script (the wait page also polls its
// status route); the form_post page's CSP has no
// form-action, because browsers apply form-action to the redirects that
// follow the submission, which would break relying parties whose callback
// redirects to another origin.
func (p *Provider) renderPage(w http.ResponseWriter, status int, name string, data func(pageData) any) {
	var nonce [16]byte
	if _, err := io.ReadFull(p.rand, nonce[:]); err != nil {
		p.log.Error("oidc: page nonce", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	base := pageData{Title: "Sign in with World ID", Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]), Style: pageStyle}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data(base)); err != nil {
		p.log.Error("oidc: render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	form := "form-action 'none'; "
	switch name {
	case "formpost":
		form = "script-src 'nonce-" + base.Nonce + "'; "
	case "wait":
		// The Cancel form's answer redirects to the relying party, which
		// form-action would also govern; so the wait page has none.
		form = "script-src 'nonce-" + base.Nonce + "'; connect-src 'self'; "
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; "+form+"style-src 'nonce-"+base.Nonce+"'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	writeBody(w, status, "text/html; charset=utf-8", buf.Bytes())
}

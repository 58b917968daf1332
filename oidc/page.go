package oidc

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The HTML pages: the sign-in page, the error page and the form_post page.
// Each response has its own CSP nonce; nothing runs or loads that the page
// did not inline under that nonce.

const pageStyle = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
a#wallet-link{display:inline-block;padding:.6rem 1.2rem;background:#000;color:#fff;border-radius:.5rem;text-decoration:none}
pre{white-space:pre-wrap;word-break:break-all;background:#f3f3f3;padding:.5rem}`

var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>{{.Title}}</title><style nonce="{{.Nonce}}">{{.Style}}</style></head>
{{end}}
{{define "signin"}}{{template "head" .}}<body><main>
<h1>Sign in with World ID</h1>
<p><strong>{{.AppName}}</strong> (<code>{{.ClientID}}</code>) asks you to sign in.</p>
<p>It will receive:</p><ul>{{range .Grants}}<li>{{.}}</li>{{end}}</ul>
<p><a id="wallet-link" href="{{.WalletLink}}">Sign in with your World ID wallet</a></p>
<p>Or give this request to your wallet:</p><pre>{{.WalletLink}}</pre>
<p>The request expires at {{.Expires}}. Sign-in v1 is deprecated and shuts down on {{.Sunset}}.</p>
</main></body></html>
{{end}}
{{define "error"}}{{template "head" .}}<body><main>
<h1>Sign-in failed</h1>
<p>{{.Err.Detail}}</p>
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

// pageData is what the "head" template needs; each page embeds it.
type pageData struct {
	Title, Nonce string
	Style        template.CSS
}

type signinPageData struct {
	pageData
	AppName, ClientID string
	Grants            []string
	WalletLink        template.URL // worldid:// is not a scheme html/template lets through
	Expires, Sunset   string
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

func (p *Provider) signinPage(w http.ResponseWriter, appName, clientID, scope, link string, expires time.Time) {
	var grants []string
	for s := range strings.SplitSeq(scope, " ") {
		grants = append(grants, scopeDescriptions[s])
	}
	p.renderPage(w, http.StatusOK, "signin", func(base pageData) any {
		return signinPageData{
			pageData: base, AppName: appName, ClientID: clientID, Grants: grants,
			WalletLink: template.URL(link),
			Expires:    expires.UTC().Format(time.RFC1123), Sunset: p.sunset.UTC().Format(time.DateOnly),
		}
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
// form_post page may run a script and submit a form; its CSP has no
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
	if name == "formpost" {
		form = "script-src 'nonce-" + base.Nonce + "'; "
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; "+form+"style-src 'nonce-"+base.Nonce+"'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	writeBody(w, status, "text/html; charset=utf-8", buf.Bytes())
}

package oidc

import (
	"context"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"worldid/internal/page"
	"worldid/internal/qr"
)

// The HTML pages (internal/page): the wait page, the expired page, the
// error page and the form_post page.

// qrLabel is the accessible name of the wait page's QR code.
const qrLabel = "QR code of the sign-in request"

// waitRefresh is the no-script reload period of the wait page, seconds.
const waitRefresh = 2

type waitPageData struct {
	page.Head
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
	page.Head
	AppName, Expires string
	RestartURL       string
}

type errorPageData struct {
	page.Head
	Err *apiError
}

type formPostData struct {
	page.Head
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
	p.renderPage(w, http.StatusOK, page.Wait, func(base page.Head) any {
		data.Head = base
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
	p.renderPage(w, http.StatusGone, page.Expired, func(base page.Head) any {
		return expiredPageData{Head: base, AppName: name, Expires: req.expiresAt().UTC().Format(time.RFC1123), RestartURL: p.restartURL(req)}
	})
}

// errorPage shows e to the user: the authorization endpoint's answer when
// there is no validated redirect URI to send it to (RFC 6749 §4.1.2.1).
func (p *Provider) errorPage(w http.ResponseWriter, e *apiError) {
	if e.allow != "" {
		w.Header().Set("Allow", e.allow)
	}
	p.renderPage(w, e.Status, page.Error, func(base page.Head) any {
		return errorPageData{Head: base, Err: e}
	})
}

// formPostPage auto-submits params to target (OAuth 2.0 Form Post Response
// Mode §2) with a no-script fallback button.
func (p *Provider) formPostPage(w http.ResponseWriter, target *url.URL, params url.Values) {
	var fields []formParam
	for _, name := range slices.Sorted(maps.Keys(params)) {
		fields = append(fields, formParam{name, params.Get(name)})
	}
	p.renderPage(w, http.StatusOK, page.FormPost, func(base page.Head) any {
		return formPostData{Head: base, Action: template.URL(target.String()), Params: fields}
	})
}

// renderPage writes a page (internal/page); a failure is logged and
// answered with a plain 500.
func (p *Provider) renderPage(w http.ResponseWriter, status int, name string, data func(page.Head) any) {
	if err := page.Render(w, p.rand, status, name, data); err != nil {
		p.log.Error("oidc: render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
}

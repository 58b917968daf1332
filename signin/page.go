package signin

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"worldid/internal/leaf/page"
	"worldid/internal/leaf/qr"
)

// The flow's pages (internal/leaf/page): the wait page here, the pages of
// an ended sign-in in ended.go; errors are internal/oauth's error page, the
// form_post answer the provider's.

// qrLabel is the accessible name of the wait page's QR code.
const qrLabel = "QR code of the sign-in request"

// waitRefresh is the no-script reload period of the wait page, seconds.
const waitRefresh = 2

type waitPageData struct {
	page.Head
	AppName, ClientID, ReturnHost string
	Grants                        []string
	QR                            template.HTML // server-rendered SVG (internal/leaf/qr)
	ConnectURL                    template.URL  // the "Open World App" button: the request's link
	MatchCode                     string
	Token, CancelURL, StatusURL   string
	RetryURL                      string // "" while the flow offers no "Try again"
	State, Message                string // the status route's state and message
	Expires                       string // RFC 3339, UTC
	ExpiresUnix                   int64
	SimulatorURL                  string // "" unless the developer simulator serves this client
}

// scopeDescriptions say what each scope the provider grants gives the app.
var scopeDescriptions = map[string]string{
	"openid":  "a pairwise identifier and your verification level",
	"email":   "an e-mail-style address derived from that identifier",
	"profile": "a generic profile name",
}

// waitPage shows a pending request in state (the status route's): the QR
// code and link of the wallet request, the match code, Cancel, and the
// polling script.
func (f *Flow) waitPage(w http.ResponseWriter, r *http.Request, req pendingRequest, token, state string) {
	app, err := f.store.App(r.Context(), req.ClientID)
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("wait: load app", err))
		return
	}
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("wait: redirect_uri", err))
		return
	}
	walletToken, err := f.sealWallet(walletRequest{ID: req.ID, Expires: req.Expires, ClientID: req.ClientID, ReturnHost: target.Host})
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("wait: seal wallet request", err))
		return
	}
	link := f.walletLink(walletToken)
	code, err := qr.Encode([]byte(link))
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("wait: QR code", err))
		return
	}
	var grants []string
	for s := range strings.SplitSeq(req.Scope, " ") {
		grants = append(grants, scopeDescriptions[s])
	}
	data := waitPageData{
		AppName: app.Name, ClientID: app.ID, ReturnHost: target.Host, Grants: grants,
		QR: template.HTML(code.SVG("qr", qrLabel)), MatchCode: matchCode(req.ID), ConnectURL: template.URL(link),
		Token: token, CancelURL: f.issuer + pathCancel, StatusURL: f.issuer + pathStatus + "?" + url.Values{"r": {token}}.Encode(),
		State: state, Expires: req.expiresAt().UTC().Format(time.RFC3339), ExpiresUnix: req.Expires,
	}
	if f.simPath != "" && f.simAllowed(r) {
		data.SimulatorURL = f.simPath + "?" + url.Values{"link": {link}}.Encode()
	}
	f.out.RenderPage(w, http.StatusOK, page.Wait, func(base page.Head) any {
		data.Head = base
		data.Refresh = waitRefresh
		return data
	})
}

package signin

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"worldid/internal/leaf/page"
	"worldid/internal/leaf/qr"
	"worldid/record"
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
	QR                            template.HTML // server-rendered SVG (internal/leaf/qr) of the connect URL; empty without one
	// ConnectURL is the "Open World App" button's connect URL (with
	// return_to, the same-device flow).
	ConnectURL                            template.URL
	Token, CancelURL, StatusURL, RetryURL string
	State, Message                        string // the initial state (waitState)
	ExpiresUnix                           int64
	Expires                               string // RFC 3339, UTC
	SimulatorURL                          string // "" unless the developer simulator serves this client
}

// scopeDescriptions say what each scope the provider grants gives the app.
var scopeDescriptions = map[string]string{
	"openid":  "a pairwise identifier and your verification level",
	"email":   "an e-mail-style address derived from that identifier",
	"profile": "a generic profile name",
}

// waitPage shows a pending request: the QR code and button of its bridge
// request, Cancel, Try again, and the polling script.
func (f *Flow) waitPage(w http.ResponseWriter, r *http.Request, req pendingRequest, token string, st waitState) {
	app, e := f.signinApp(r.Context(), req.ClientID)
	if e != nil {
		f.out.ErrorPage(w, e)
		return
	}
	f.renderWait(w, r, req, app, token, st)
}

func (f *Flow) renderWait(w http.ResponseWriter, r *http.Request, req pendingRequest, app record.App, token string, st waitState) {
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal(r.Context(), "wait: redirect_uri", err))
		return
	}
	qrText, button := f.walletLinks(req, app, token)
	var grants []string
	for s := range strings.SplitSeq(req.Scope, " ") {
		grants = append(grants, scopeDescriptions[s])
	}
	data := waitPageData{
		AppName: app.Name, ClientID: app.ID, ReturnHost: target.Host, Grants: grants,
		ConnectURL: template.URL(button),
		Token:      token, CancelURL: f.issuer + pathCancel, StatusURL: f.issuer + pathStatus + "?" + url.Values{"r": {token}}.Encode(),
		RetryURL: f.issuer + pathRetry,
		State:    pageState(st.State), Message: st.Message,
		ExpiresUnix: req.Expires, Expires: req.expiresAt().UTC().Format(time.RFC3339),
	}
	if qrText != "" {
		code, err := qr.Encode([]byte(qrText))
		if err != nil {
			f.out.ErrorPage(w, f.out.Internal(r.Context(), "wait: QR code", err))
			return
		}
		data.QR = template.HTML(code.SVG("qr", qrLabel))
		if f.simPath != "" && f.simAllowed(r) {
			data.SimulatorURL = f.simPath + "?" + url.Values{"link": {qrText}}.Encode()
		}
	}
	f.out.RenderPage(w, http.StatusOK, page.Wait, func(base page.Head) any {
		data.Head = base
		data.Refresh = waitRefresh
		return data
	})
}

// walletLinks are the QR code's text and the button's link: the connect
// URL of the page's bridge request (the button's with return_to, this
// page; the QR code's without, as it is read on another device, which
// could not finish here); none if it could not be created.
func (f *Flow) walletLinks(req pendingRequest, app record.App, token string) (qrText, button string) {
	if req.Bridge == nil {
		return "", ""
	}
	return f.connect(app, req.Bridge, ""), f.connect(app, req.Bridge, f.waitURL(token))
}

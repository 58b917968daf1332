package page

import (
	"bytes"
	"html"
	"html/template"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

var nonceRE = regexp.MustCompile(`<style nonce="([A-Za-z0-9_-]{22})">`)

// TestRenderFailureWritesNothing: a page whose data lacks a field it
// shows fails before anything is written.
func TestRenderFailureWritesNothing(t *testing.T) {
	for _, name := range []string{Wait, Ended, Error, FormPost, Device, SignOut} {
		w := httptest.NewRecorder()
		err := Render(w, bytes.NewReader(make([]byte, 16)), http.StatusOK, name, func(h Head) any { return h })
		if err == nil || w.Body.Len() != 0 || len(w.Header()) != 0 {
			t.Errorf("%s: err %v, wrote %d bytes", name, err, w.Body.Len())
		}
	}
}

type errorData struct {
	Head
	Headline, Message, Advice string
	Err                       struct{ Detail, Code, Attribute string }
}

// TestRenderCSP: the stylesheet is inlined under a fresh nonce that the
// CSP names; a page without a script may run none; values are escaped.
func TestRenderCSP(t *testing.T) {
	w := httptest.NewRecorder()
	err := Render(w, bytes.NewReader(bytes.Repeat([]byte{7}, 16)), http.StatusGone, Error, func(h Head) any {
		d := errorData{Head: h, Headline: "Gone", Message: "<detail>"}
		d.Err.Code = "gone"
		return d
	})
	if err != nil {
		t.Fatal(err)
	}
	m := nonceRE.FindStringSubmatch(w.Body.String())
	csp := w.Header().Get("Content-Security-Policy")
	if w.Code != http.StatusGone || m == nil || !strings.Contains(csp, "style-src 'nonce-"+m[1]+"'") || strings.Contains(csp, "script-src") ||
		!strings.Contains(csp, "default-src 'none'") || !strings.Contains(w.Body.String(), "&lt;detail&gt;") || !strings.Contains(w.Body.String(), ".qr-frame{") {
		t.Fatalf("%d %q\n%s", w.Code, csp, w.Body)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Error("page may be cached")
	}
}

// TestRenderNeedsRandomness: no nonce, no page.
func TestRenderNeedsRandomness(t *testing.T) {
	w := httptest.NewRecorder()
	if err := Render(w, bytes.NewReader(nil), http.StatusOK, Error, func(h Head) any { return h }); err == nil || w.Body.Len() != 0 {
		t.Fatalf("err %v, body %q", err, w.Body)
	}
}

// waitData has the fields of the wait page, as package signin fills them.
type waitData struct {
	Head
	AppName, ClientID, ReturnHost string
	Grants                        []string
	QR                            template.HTML
	ConnectURL                    template.URL
	Token, CancelURL, StatusURL   string
	RetryURL                      string
	State, Message                string
	Expires                       string
	ExpiresUnix                   int64
	SimulatorURL                  string
}

const testQR = `<svg xmlns="http://www.w3.org/2000/svg" id="qr" role="img" aria-label="QR code"><path d="M4 4h1v1h-1z"/></svg>`

func sampleWait(state, message string) waitData {
	return waitData{AppName: "Example <App>", ClientID: "app_1", ReturnHost: "rp.example", Grants: []string{"a pairwise identifier"},
		QR: testQR, ConnectURL: "https://world.org/verify?t=wld&i=abc&k=key", Token: "tok",
		CancelURL: "/authorize/cancel", StatusURL: "/authorize/status?r=tok", RetryURL: "/authorize/retry",
		State: state, Message: message, Expires: "2026-11-28T00:10:00Z", ExpiresUnix: 1795824600}
}

// render renders a page and returns its body, checking what every page
// must: the CSP names the nonce that the page's style (and script) carry,
// and nothing is loaded from elsewhere.
func render(t *testing.T, status int, name string, data func(Head) any) string {
	t.Helper()
	w := httptest.NewRecorder()
	if err := Render(w, bytes.NewReader(bytes.Repeat([]byte{9}, 16)), status, name, data); err != nil {
		t.Fatal(err)
	}
	body, csp := w.Body.String(), w.Header().Get("Content-Security-Policy")
	m := nonceRE.FindStringSubmatch(body)
	if w.Code != status || m == nil || !strings.Contains(csp, "style-src 'nonce-"+m[1]+"'") || !strings.HasPrefix(csp, "default-src 'none'; ") {
		t.Fatalf("%s: %d %q\n%s", name, w.Code, csp, body)
	}
	for _, s := range regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1) {
		if s != `<script nonce="`+m[1]+`">` || !strings.Contains(csp, "script-src 'nonce-"+m[1]+"'") {
			t.Errorf("%s: script %q under CSP %q", name, s, csp)
		}
	}
	// Assets are what a page loads by itself: the only absolute URLs
	// may be links and the SVG namespace.
	for _, u := range regexp.MustCompile(`(?i)\ssrc=|url\(|@import|<link|<iframe|<object|<embed|[a-z]+="https?://[^"]*`).FindAllString(body, -1) {
		if u != `xmlns="http://www.w3.org/2000/svg` && !strings.HasPrefix(u, `href="https://`) {
			t.Errorf("%s: external reference %q", name, u)
		}
	}
	if strings.Contains(body, "deprecated") {
		t.Errorf("%s: the operator's sunset notice is shown to the user", name)
	}
	return body
}

// TestWaitPageStates: the wait page renders in every state of the status
// route with the state's line in an announced status element, "Try again"
// shown only for a refused proof or a wallet error, and a message the
// flow gives instead of the line.
func TestWaitPageStates(t *testing.T) {
	for _, tc := range []struct{ state, message, line string }{
		{"pending", "", "Scan this code with World App, or open World App on this device."},
		{"", "", "Scan this code with World App, or open World App on this device."},
		{"scanned", "", "Confirm the sign-in in World App."},
		{"done", "", "Approved. Taking you back to the application…"},
		{"refused", "", "World App's answer could not be verified, so you are not signed in."},
		{"refused", "The proof is for another app.", "World App's answer could not be verified, so you are not signed in."},
		{"wallet_error", "World App says the credential is not available.", "World App could not complete the sign-in."},
		{"unavailable", "", "Can't reach World App's bridge just now; retrying…"},
	} {
		body := render(t, http.StatusOK, Wait, func(h Head) any {
			d := sampleWait(tc.state, tc.message)
			d.Head = h
			return d
		})
		live := regexp.MustCompile(`<div id="state" role="status" aria-live="polite" data-tone="[a-z]*"><p id="status">([^<]*)</p><p id="message"( hidden)?>([^<]*)</p></div>`).FindStringSubmatch(body)
		if live == nil || html.UnescapeString(live[1]) != tc.line || live[3] != tc.message || (live[2] == "") != (tc.message != "") {
			t.Errorf("%q: status %q, want line %q and message %q", tc.state, live, tc.line, tc.message)
		}
		retryShown := strings.Contains(body, `<form id="retry-form" method="post" action="/authorize/retry">`)
		if want := tc.state == "refused" || tc.state == "wallet_error"; retryShown != want || !strings.Contains(body, `<button id="retry" class="primary" type="submit">Try again</button>`) {
			t.Errorf("%q: Try again shown %v, want %v", tc.state, retryShown, want)
		}
		for _, want := range []string{`Sign in to <span id="app-name">Example &lt;App&gt;</span>`, `<strong id="return-host">rp.example</strong>`,
			`<a id="wallet-link" class="button" href="https://world.org/verify?t=wld&amp;i=abc&amp;k=key">Open World App</a>`,
			`<button id="cancel" class="secondary" type="submit">Cancel</button>`, `<div class="qr-frame"><svg`,
			`<time id="expires" datetime="2026-11-28T00:10:00Z">00:10 UTC</time>`, `exp= 1795824600 *1000`,
			`<input type="hidden" name="r" value="tok">`} {
			if !strings.Contains(body, want) {
				t.Errorf("%q: page lacks %s", tc.state, want)
			}
		}
	}
}

// TestWaitPageOptional: without a retry route, simulator,
// QR code or connect URL (no bridge request yet) the page has none of
// their elements and still renders.
func TestWaitPageOptional(t *testing.T) {
	body := render(t, http.StatusOK, Wait, func(h Head) any {
		d := sampleWait("unavailable", "")
		d.Head, d.RetryURL, d.QR, d.ConnectURL = h, "", "", ""
		return d
	})
	for _, absent := range []string{`id="retry`, `id="simulator"`, `class="qr-frame"`, `id="wallet-link"`} {
		if strings.Contains(body, absent) {
			t.Errorf("page has %s", absent)
		}
	}
}

// TestWaitPageScript: the script knows every line, reloads on a non-2xx
// answer and on a state it does not show, and counts the expiry down in
// local time.
func TestWaitPageScript(t *testing.T) {
	body := render(t, http.StatusOK, Wait, func(h Head) any {
		d := sampleWait("pending", "")
		d.Head = h
		return d
	})
	for _, want := range []string{`if(!r.ok){reload()`, `if(t===undefined){reload()`, `toLocaleTimeString(`,
		`"wallet_error":"World App could not complete the sign-in."`, `"unavailable":"warn"`} {
		if !strings.Contains(body, want) {
			t.Errorf("script lacks %s", want)
		}
	}
}

type endedData struct {
	Head
	AppName, State, RestartURL string
	ExpiresUnix                int64
	Code                       string
}

// TestEndedPages: each ended state says what happened, in the app's name;
// cancelled and expired offer "Start again"; the code is small print.
func TestEndedPages(t *testing.T) {
	for _, tc := range []struct{ state, restart, heading string }{
		{"finished", "", "This sign-in is already finished"},
		{"cancelled", "https://id.example/authorize?client_id=app_1", "This sign-in was cancelled"},
		{"expired", "https://id.example/authorize?client_id=app_1", "This sign-in request expired"},
	} {
		body := render(t, http.StatusBadRequest, Ended, func(h Head) any {
			return endedData{Head: h, AppName: "Example", State: tc.state, RestartURL: tc.restart, ExpiresUnix: 1795824600, Code: "already_completed"}
		})
		if !strings.Contains(body, "<h1>"+tc.heading+"</h1>") || !strings.Contains(body, `<div class="fine"><p><code>already_completed</code>`) {
			t.Errorf("%s: %s", tc.state, body)
		}
		if restart := strings.Contains(body, `<a id="restart" class="button" href="`+tc.restart+`">Start again</a>`); restart != (tc.restart != "") {
			t.Errorf("%s: Start again %v", tc.state, restart)
		}
	}
}

// TestErrorPagePlain: the headline and message are words; the code is
// only small print.
func TestErrorPagePlain(t *testing.T) {
	body := render(t, http.StatusForbidden, Error, func(h Head) any {
		d := errorData{Head: h, Headline: "This sign-in belongs to another browser", Message: "Only that browser can finish it.", Advice: "Go back."}
		d.Err.Code, d.Err.Attribute = "other_browser", "r"
		return d
	})
	for _, want := range []string{"<h1>This sign-in belongs to another browser</h1>", `<p id="error-detail">Only that browser can finish it.</p>`,
		`<div class="fine"><p><code>other_browser</code> (<code>r</code>)`} {
		if !strings.Contains(body, want) {
			t.Errorf("error page lacks %s:\n%s", want, body)
		}
	}
}

// TestStatusLinesComplete: the lines cover the contract's live states.
func TestStatusLinesComplete(t *testing.T) {
	for _, s := range []string{"pending", "scanned", "done", "refused", "wallet_error", "unavailable"} {
		if statusLines[s].text == "" {
			t.Errorf("no line for %q", s)
		}
	}
	for _, s := range []string{"cancelled", "expired", "finished"} {
		if _, ok := statusLines[s]; ok {
			t.Errorf("%q has a line: the script would not reload", s)
		}
	}
}

type deviceData struct {
	Head
	Action, CSRF, UserCode, Message, Result string
}

// TestDevicePage: the form posts to its own origin only (form-action
// 'self', no script), escapes what the user typed, and each outcome says
// what happened.
func TestDevicePage(t *testing.T) {
	w := httptest.NewRecorder()
	err := Render(w, bytes.NewReader(make([]byte, 16)), http.StatusBadRequest, Device, func(h Head) any {
		return deviceData{Head: h, Action: "https://id.example/device", CSRF: "tok", UserCode: `"><b>`, Message: "No device is waiting"}
	})
	body := w.Body.String()
	csp := w.Header().Get("Content-Security-Policy")
	if err != nil || w.Code != http.StatusBadRequest || !strings.Contains(csp, "form-action 'self'") || strings.Contains(csp, "script-src") ||
		strings.Contains(body, "<script") || strings.Contains(body, `"><b>`) || !strings.Contains(body, `action="https://id.example/device"`) ||
		!strings.Contains(body, `name="csrf" value="tok"`) || !strings.Contains(body, `role="alert"`) {
		t.Fatalf("device form: %v %d %q\n%s", err, w.Code, csp, body)
	}
	for result, want := range map[string]string{
		"approved": "You are signed in on your device", "denied": "Sign-in refused",
		"expired": "This device code expired", "used": "already used",
	} {
		w := httptest.NewRecorder()
		if err := Render(w, bytes.NewReader(make([]byte, 16)), http.StatusOK, Device, func(h Head) any {
			return deviceData{Head: h, Result: result}
		}); err != nil || !strings.Contains(w.Body.String(), want) || strings.Contains(w.Body.String(), "<form") {
			t.Errorf("%s: %v\n%s", result, err, w.Body)
		}
	}
}

package e2e

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserLoginSession: the login session (doc/interfaces.md §4.1.1) in
// headless Chromium, over HTTPS through the binary, so that the cookie is
// the __Host- one a deployment sets. The relying party, on another site
// (plain http), sends the browser with ordinary top-level navigations, as
// the OpenID certification plans' modules do: a sign-in with the wallet
// leaves the session cookie; prompt=none, an id_token_hint and a max_age
// the session satisfies then sign the browser in again without the
// wallet, with the first sign-in's subject and auth_time; another app
// gets login_required; max_age=0 and prompt=login show the wait page;
// RP-initiated logout with the ID token as hint returns to the registered
// URI with the state, removes the cookie, and prompt=none is
// login_required again; without a hint the user is asked first.
func TestBrowserLoginSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and a browser")
	}
	t.Parallel()
	e := newHTTPSBrowserEnv(t)
	tab, _ := e.tab(t)

	before := time.Now().Unix()
	_, link := e.waitPage(t, tab, "")
	if err := e.w.Approve(e.ctx, link, "orb"); err != nil {
		t.Fatal(err)
	}
	signedIn(t, tab)
	first := e.rp.lastSignIn(t)
	if first.acr != "https://world.org/oidc/acr/orb-v3" || !slices.Equal(first.amr, []string{"pop"}) ||
		first.authTime < before || first.authTime > time.Now().Unix() {
		t.Fatalf("first sign-in: acr %q, amr %q, auth_time %d (started at %d)", first.acr, first.amr, first.authTime, before)
	}
	c := sessionCookie(t, tab, e.p.public)
	if c == nil || c.Name != "__Host-worldid-session" || !c.HTTPOnly || !c.Secure || c.SameSite != network.CookieSameSiteLax || c.Session {
		t.Fatalf("session cookie after the sign-in: %+v", c)
	}

	// oidcc-prompt-none-logged-in, oidcc-id-token-hint, oidcc-max-age-10000:
	// the wallet is not asked, so only the session can sign the browser in.
	for _, query := range []url.Values{
		{"prompt": {"none"}},
		{"prompt": {"none"}, "id_token_hint": {first.raw}},
		{"max_age": {"10000"}},
	} {
		if id, text := rpVisit(t, tab, e.rp, query); id != "signed-in" {
			t.Fatalf("%v with the session: the browser shows %s %q", query, id, text)
		}
		again := e.rp.lastSignIn(t)
		if again.sub != first.sub || again.authTime != first.authTime || again.acr != first.acr || again.raw == first.raw {
			t.Fatalf("%v: sign-in %+v, first %+v", query, again, first)
		}
	}

	// A session names one app: another app's prompt=none is login_required.
	other := newTestRP(t, e.ctx, e.p, "current")
	if id, text := rpVisit(t, tab, other, url.Values{"prompt": {"none"}}); id != "rp-error" || text != "error=login_required" {
		t.Fatalf("prompt=none for another app: %s %q", id, text)
	}

	// oidcc-max-age-1 (max_age=0 here) and oidcc-prompt-login: a fresh proof.
	for _, query := range []url.Values{{"max_age": {"0"}}, {"prompt": {"login"}}} {
		if id, _ := rpVisit(t, tab, e.rp, query); id != "wallet-link" {
			t.Fatalf("%v: the browser shows %s, not the wait page", query, id)
		}
	}

	// RP-initiated logout with the ID token as hint and a registered URI.
	state := "bye-" + first.sub[2:10]
	logout := e.rp.srv.URL + "/logout?" + url.Values{"id_token_hint": {first.raw}, "state": {state}}.Encode()
	if err := chromedp.Do(tab, chromedp.Navigate(logout)); err != nil {
		t.Fatal(err)
	}
	if id, text := landing(t, tab); id != "signed-out" || text != state {
		t.Fatalf("after logout the browser shows %s %q, want the post-logout page with state %q", id, text, state)
	}
	if c := sessionCookie(t, tab, e.p.public); c != nil {
		t.Fatalf("the session cookie survived logout: %+v", c)
	}
	if id, text := rpVisit(t, tab, e.rp, url.Values{"prompt": {"none"}}); id != "rp-error" || text != "error=login_required" {
		t.Fatalf("prompt=none after logout: %s %q", id, text)
	}

	// Without a hint the user is asked; leaving the question keeps the
	// session, answering it signs out and returns with the state.
	_, link = e.waitPage(t, tab, "")
	if err := e.w.Approve(e.ctx, link, "orb"); err != nil {
		t.Fatal(err)
	}
	signedIn(t, tab)
	logout = e.rp.srv.URL + "/logout?" + url.Values{"state": {state}}.Encode()
	if err := chromedp.Do(tab, chromedp.Navigate(logout)); err != nil {
		t.Fatal(err)
	}
	if id, _ := landing(t, tab); id != "signout" {
		t.Fatalf("logout without a hint shows %s, not the question", id)
	}
	if id, text := rpVisit(t, tab, e.rp, url.Values{"prompt": {"none"}}); id != "signed-in" {
		t.Fatalf("the unanswered question ended the session: %s %q", id, text)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(logout)); err != nil {
		t.Fatal(err)
	}
	if id, _ := landing(t, tab); id != "signout" {
		t.Fatalf("logout without a hint shows %s, not the question", id)
	}
	answered, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(answered, chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("signed-out"))); err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		t.Fatalf("answering the question did not return to the relying party: %v; at %s", err, loc)
	}
	if text, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("signed-out"))); text != state {
		t.Fatalf("after answering the question the state is %q, want %q", text, state)
	}
	if c := sessionCookie(t, tab, e.p.public); c != nil {
		t.Fatalf("the session cookie survived the answered question: %+v", c)
	}
}

// sessionCookie is the browser's login session cookie for the server, as
// Chrome DevTools reports it (HttpOnly cookies included), or nil.
func sessionCookie(t *testing.T, tab context.Context, public string) *network.Cookie {
	t.Helper()
	res, err := chromedp.Call(tab, network.GetCookies, network.GetCookiesParams{URLs: []string{public + "/authorize"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if strings.HasSuffix(c.Name, "worldid-session") {
			return c
		}
	}
	return nil
}

// rpVisit opens the relying party's login link with the authorization
// request parameters of query and returns where the browser lands.
func rpVisit(t *testing.T, tab context.Context, rp *testRP, query url.Values) (id, text string) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Navigate(rp.srv.URL+"/login?"+query.Encode())); err != nil {
		t.Fatal(err)
	}
	return landing(t, tab)
}

// landing waits until the tab shows the relying party's callback (signed
// in, or its error), its post-logout page, or the provider's wait page or
// sign-out question, and returns that element's id and text.
func landing(t *testing.T, tab context.Context) (id, text string) {
	t.Helper()
	const found = `(() => {
		for (const id of ["signed-in", "rp-error", "signed-out", "wallet-link", "signout"]) {
			const el = document.getElementById(id);
			if (el) return id + " " + el.textContent;
		}
		return "";
	})()`
	got, err := chromedp.Run(tab, chromedp.Poll[string](found, chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		body, _ := chromedp.Run(tab, chromedp.OuterHTML(chromedp.CSS("body")))
		t.Fatalf("the browser reached neither the relying party nor the wait page: %v; at %s: %.500s", err, loc, body)
	}
	id, text, _ = strings.Cut(got, " ")
	return id, text
}

package oidc

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestEndedSigninWithoutCookie: the browser that started a sign-in has
// lost its cookie once the sign-in is over (cleared on finish and cancel,
// expired with the request), so loading its page then shows the true
// state, not "another browser"; the status route says it too. A live
// sign-in still refuses a browser without the cookie.
func TestEndedSigninWithoutCookie(t *testing.T) {
	f := newFixture(t)
	noCookie := func(target string) *httptest.ResponseRecorder { return f.do(http.MethodGet, target, nil, nil) }
	status := func(b browser) string {
		t.Helper()
		w := noCookie(strings.Replace(b.waitURL, "/authorize/wait", "/authorize/status", 1))
		var s struct{ State string }
		if w.Code != http.StatusOK || decodeJSON(w.Body, &s) != nil {
			t.Fatalf("status without the cookie: %s", describe(w))
		}
		return s.State
	}
	live := f.authorize(authorizeQuery())
	wantPage(t, noCookie(live.waitURL), http.StatusForbidden, "other_browser")

	finished := f.authorize(authorizeQuery())
	f.approve(finished, "orb")
	wantPage(t, noCookie(finished.waitURL), http.StatusForbidden, "other_browser") // approved is live
	responseParams(t, f.open(finished), modeQuery)
	w := noCookie(finished.waitURL)
	wantPage(t, w, http.StatusBadRequest, "already_completed")
	if !strings.Contains(w.Body.String(), "<h1>This sign-in is already finished</h1>") || strings.Contains(w.Body.String(), `id="restart"`) {
		t.Fatalf("finished: %s", w.Body)
	}
	if s := status(finished); s != "finished" {
		t.Fatalf("status of a finished sign-in %q", s)
	}

	cancelled := f.authorize(authorizeQuery())
	token := must(url.ParseQuery(must(url.Parse(cancelled.waitURL)).RawQuery)).Get("r")
	f.postForm("/authorize/cancel", url.Values{"r": {token}}, map[string]string{"Cookie": cancelled.cookie})
	w = noCookie(cancelled.waitURL)
	wantPage(t, w, http.StatusBadRequest, "already_completed")
	if !strings.Contains(w.Body.String(), "<h1>This sign-in was cancelled</h1>") || !strings.Contains(w.Body.String(), `<a id="restart" class="button" href="`) {
		t.Fatalf("cancelled: %s", w.Body)
	}
	if s := status(cancelled); s != "cancelled" {
		t.Fatalf("status of a cancelled sign-in %q", s)
	}

	expired := f.authorize(authorizeQuery())
	f.clock.Advance(signinLifetime)
	w = noCookie(expired.waitURL)
	if w.Code != http.StatusGone || !strings.Contains(w.Body.String(), "<h1>This sign-in request expired</h1>") || !strings.Contains(w.Body.String(), `id="restart"`) {
		t.Fatalf("expired: %s", describe(w))
	}
	if s := status(expired); s != "expired" {
		t.Fatalf("status of an expired sign-in %q", s)
	}
}

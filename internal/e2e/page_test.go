package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"worldid/internal/leaf/page"
	"worldid/internal/leaf/qr"
)

// What a person sees on the sign-in pages in a real browser: the true
// state of an ended sign-in, the wait page's states as its script shows
// them, the expiry in local time, and a layout whose Cancel button is
// above the fold on common screens, in light and dark.

// headlessTab starts a browser of its own and returns its first tab.
func headlessTab(t *testing.T) context.Context {
	t.Helper()
	exe := browserPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return tab
}

// pageSays waits until the tab's heading is heading (across the page's
// own reloads), and returns the page's text.
func pageSays(t *testing.T, tab context.Context, heading string) string {
	t.Helper()
	js := `(document.querySelector("h1") || {}).textContent`
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got, err := chromedp.Run(tab, chromedp.Evaluate[string](js)); err == nil && got == heading {
			text, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("body")))
			return text
		}
		if time.Now().After(deadline) {
			loc, _ := chromedp.Run(tab, chromedp.Location())
			body, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("body")))
			t.Fatalf("the page does not say %q; at %s it says %.600s", heading, loc, body)
		}
		time.Sleep(100 * time.Millisecond) // polling the page with a deadline
	}
}

// TestPageEndedStates: Back after a finished sign-in, and Back and reload
// after Cancel, tell the browser that started the sign-in what happened
// (its cookie is gone by then), never "another browser"; a cancelled
// sign-in starts again.
func TestPageEndedStates(t *testing.T) {
	t.Parallel()
	e := newBrowserEnv(t)

	t.Run("Back after finish", func(t *testing.T) {
		// The same-device flow: from the wait page the person follows
		// "Open World App" in the same tab, approves, and World App's
		// return_to opens the wait page again, which finishes; Back twice
		// returns to the first wait page.
		tab, _ := e.tab(t)
		waitURL, link := e.waitPage(t, tab, "")
		if err := chromedp.Do(tab, chromedp.Navigate(e.p.public+"/.well-known/openid-configuration")); err != nil {
			t.Fatal(err)
		}
		if err := e.w.Approve(e.ctx, link, "orb"); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Navigate(waitURL)); err != nil {
			t.Fatal(err)
		}
		signedIn(t, tab)
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`history.go(-2), true`)); err != nil {
			t.Fatal(err)
		}
		text := pageSays(t, tab, "This sign-in is already finished")
		if loc, _ := chromedp.Run(tab, chromedp.Location()); loc != waitURL {
			t.Fatalf("Back led to %s", loc)
		}
		if strings.Contains(text, "another browser") || strings.Contains(text, "Start again") {
			t.Fatalf("after Back the finished sign-in says: %s", text)
		}
	})

	t.Run("reopening a finished sign-in", func(t *testing.T) {
		tab, _ := e.tab(t)
		waitURL, link := e.waitPage(t, tab, "")
		if err := e.w.Approve(e.ctx, link, "device"); err != nil {
			t.Fatal(err)
		}
		signedIn(t, tab)
		if err := chromedp.Do(tab, chromedp.Navigate(waitURL)); err != nil {
			t.Fatal(err)
		}
		pageSays(t, tab, "This sign-in is already finished")
	})

	t.Run("Back and reload after Cancel", func(t *testing.T) {
		tab, _ := e.tab(t)
		e.waitPage(t, tab, "")
		if err := chromedp.Do(tab, chromedp.Click(chromedp.ID("cancel")), chromedp.WaitVisible(chromedp.ID("rp-error"))); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`history.back(), true`)); err != nil {
			t.Fatal(err)
		}
		pageSays(t, tab, "This sign-in was cancelled")
		if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		if text := pageSays(t, tab, "This sign-in was cancelled"); strings.Contains(text, "another browser") {
			t.Fatalf("after a reload the cancelled sign-in says: %s", text)
		}
		if err := chromedp.Do(tab, chromedp.Click(chromedp.ID("restart")), chromedp.WaitVisible(chromedp.ID("cancel"))); err != nil {
			t.Fatalf("Start again: %v", err)
		}
		if loc, _ := chromedp.Run(tab, chromedp.Location()); !strings.HasPrefix(loc, e.p.public+"/authorize/wait?r=") {
			t.Fatalf("Start again led to %s", loc)
		}
	})
}

// TestPageExpiry: the wait page counts down to the expiry it shows in the
// browser's local time; after the request expired and the cookie with it
// (a laptop that slept past both), the page says by itself that the
// request expired and offers to start again.
func TestPageExpiry(t *testing.T) {
	t.Parallel()
	h := newSigninHarness(t)
	tab := headlessTab(t)
	const zone = "Asia/Kolkata" // +05:30: a local time no UTC rendering matches
	if _, err := chromedp.Call(tab, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(h.authorizeURL()), chromedp.WaitVisible(chromedp.ID("cancel"))); err != nil {
		t.Fatal(err)
	}
	at, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.ID("expires"), "datetime"))
	if err != nil {
		t.Fatal(err)
	}
	expires, err := time.Parse(time.RFC3339, at.Value)
	if err != nil || expires.Sub(h.clock.Now()) > 10*time.Minute || expires.Sub(h.clock.Now()) < 9*time.Minute {
		t.Fatalf("expiry %q (%v), now %s", at.Value, err, h.clock.Now())
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	local := expires.In(loc)
	shown, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("expires")))
	if shown != local.Format("15:04") && shown != local.Format("03:04 PM") {
		t.Errorf("the expiry shows %q, want %s in local time", shown, local.Format("15:04"))
	}
	if left, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("countdown"))); !regexp.MustCompile(`^ \((9|10):[0-5]\d left\)$`).MatchString(left) {
		t.Errorf("countdown %q", left)
	}
	h.clock.Add(11 * time.Minute)
	if _, err := chromedp.Call(tab, network.ClearBrowserCookies, struct{}{}); err != nil {
		t.Fatal(err)
	}
	text := pageSays(t, tab, "This sign-in request expired")
	if strings.Contains(text, "another browser") {
		t.Fatalf("the expired page says: %s", text)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.ID("restart")), chromedp.WaitVisible(chromedp.ID("cancel"))); err != nil {
		t.Fatalf("Start again: %v", err)
	}
}

// statusStub serves the wait page and answers its polls with what the test
// sets: the states of the status route, one after another.
type statusStub struct {
	srv    *httptest.Server
	loads  atomic.Int32
	mu     sync.Mutex
	status int
	answer string
	retry  chan string // the r of each "Try again"
}

func newStatusStub(t *testing.T) *statusStub {
	s := &statusStub{status: http.StatusOK, answer: `{"state":"pending"}`, retry: make(chan string, 1)}
	connect := "https://world.org/verify?t=wld&i=0f9c&k=key"
	code, err := qr.Encode([]byte(connect))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /wait", func(w http.ResponseWriter, r *http.Request) {
		s.loads.Add(1)
		exp := time.Now().Add(10 * time.Minute).Truncate(time.Second)
		err := page.Render(w, strings.NewReader(strings.Repeat("n", 16)), http.StatusOK, page.Wait, func(h page.Head) any {
			// The wait page's fields (package signin fills them).
			return map[string]any{"Title": h.Title, "Nonce": h.Nonce, "Style": h.Style, "Refresh": 0,
				"AppName": "Stub RP", "ClientID": "app_stub", "ReturnHost": "rp.example", "Grants": []string{"a pairwise identifier"},
				"QR": template.HTML(code.SVG("qr", "QR code")), "ConnectURL": template.URL(connect),
				"Token": "tok", "CancelURL": "/cancel", "StatusURL": "/status", "RetryURL": "/retry", "State": "pending", "Message": "",
				"Expires": exp.UTC().Format(time.RFC3339), "ExpiresUnix": exp.Unix(), "SimulatorURL": ""}
		})
		if err != nil {
			t.Error(err)
		}
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		fmt.Fprintln(w, s.answer)
	})
	mux.HandleFunc("POST /retry", func(w http.ResponseWriter, r *http.Request) {
		s.retry <- r.FormValue("r")
		http.Redirect(w, r, "/wait", http.StatusSeeOther)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *statusStub) set(status int, answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.answer = status, answer
}

// TestPageScriptStates drives the wait page's script through the status
// route's states: each is shown in the announced status line, a refused
// proof and a wallet error with "Try again" (a POST of r) instead of the
// spent request's QR code, a bridge that
// cannot be reached as retrying; a non-2xx answer reloads the page.
func TestPageScriptStates(t *testing.T) {
	t.Parallel()
	s := newStatusStub(t)
	tab := headlessTab(t)
	if err := chromedp.Do(tab, chromedp.Navigate(s.srv.URL+"/wait"), chromedp.WaitVisible(chromedp.ID("qr"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.samePage = true`)); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Text, Message, Role, Live, Tone string
		Retry, QR                       bool
	}
	look := `(() => { const box = document.getElementById("state"), m = document.getElementById("message"), r = document.getElementById("retry");
		return {Text: document.getElementById("status").textContent, Message: m.hidden ? "" : m.textContent,
			Role: box.getAttribute("role"), Live: box.getAttribute("aria-live"), Tone: box.dataset.tone,
			Retry: r.getBoundingClientRect().height > 0, QR: document.getElementById("qr").getBoundingClientRect().height > 0}; })()`
	for _, tc := range []struct {
		answer string
		want   view
	}{
		{`{"state":"scanned"}`, view{Text: "Confirm the sign-in in World App.", QR: true}},
		{`{"state":"refused","message":"The proof was made for another app."}`, view{Text: "World App's answer could not be verified, so you are not signed in.",
			Message: "The proof was made for another app.", Tone: "bad", Retry: true}},
		{`{"state":"wallet_error"}`, view{Text: "World App could not complete the sign-in.", Tone: "bad", Retry: true}},
		{`{"state":"unavailable"}`, view{Text: "Can't reach World App's bridge just now; retrying…", Tone: "warn", QR: true}},
		{`{"state":"pending"}`, view{Text: "Scan this code with World App, or open World App on this device.", QR: true}},
	} {
		s.set(http.StatusOK, tc.answer)
		tc.want.Role, tc.want.Live = "status", "polite"
		want, _ := json.Marshal(tc.want)
		quoted, _ := json.Marshal(string(want))
		js := `JSON.stringify(` + look + `) === ` + string(quoted)
		ctx, cancel := context.WithTimeout(tab, 15*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err != nil {
			got, _ := chromedp.Run(tab, chromedp.Evaluate[view](look))
			t.Fatalf("after %s the page shows %+v, want %s", tc.answer, got, want)
		}
	}
	if same, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`window.samePage === true`)); !same || s.loads.Load() != 1 {
		t.Fatalf("the page reloaded while live (%d loads)", s.loads.Load())
	}
	s.set(http.StatusOK, `{"state":"refused"}`)
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("retry")), chromedp.Click(chromedp.ID("retry"))); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-s.retry:
		if r != "tok" {
			t.Fatalf("Try again sent r=%q", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Try again posted nothing")
	}
	s.set(http.StatusOK, `{"state":"pending"}`)
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("qr"))); err != nil {
		t.Fatal(err)
	}
	// Any non-2xx answer: the page reloads, so that the server shows the
	// true state.
	before := s.loads.Load()
	s.set(http.StatusForbidden, `{"code":"other_browser"}`)
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	for s.loads.Load() <= before {
		select {
		case <-ctx.Done():
			t.Fatal("a 403 answer did not reload the page")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// viewport is a screen the wait page must fit.
type viewport struct {
	name          string
	width, height int64
	phone         bool
}

var viewports = []viewport{{"1280x800", 1280, 800, false}, {"1366x768", 1366, 768, false}, {"390x844", 390, 844, true}}

// TestPageLayout: on each screen, light and dark, Cancel is above the
// fold; a phone leads with "Open World App", a desktop with the QR code;
// the QR code stays dark on white in dark mode; the primary button shows
// a focus ring from the keyboard. With WORLDID_PAGE_SCREENSHOTS set to a
// directory, the pages are saved there as PNG for a person to look at.
func TestPageLayout(t *testing.T) {
	t.Parallel()
	h := newSigninHarness(t)
	tab := headlessTab(t)
	shots := os.Getenv("WORLDID_PAGE_SCREENSHOTS")
	type layout struct {
		Cancel, QR, Open, Height float64
		Body, Frame, Outline     string
	}
	measure := `(() => { const r = id => document.getElementById(id).getBoundingClientRect();
		return {Cancel: r("cancel").bottom, QR: r("qr").top, Open: r("wallet-link").top, Height: innerHeight,
			Body: getComputedStyle(document.body).backgroundColor, Frame: getComputedStyle(document.querySelector(".qr-frame")).backgroundColor}; })()`
	backgrounds := map[string]string{}
	for _, vp := range viewports {
		for _, scheme := range []string{"light", "dark"} {
			opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
			if vp.phone {
				opts = []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch}
			}
			if err := chromedp.Do(tab, chromedp.EmulateViewport(vp.width, vp.height, opts...)); err != nil {
				t.Fatal(err)
			}
			media := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}
			if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, media); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(tab, chromedp.Navigate(h.authorizeURL()), chromedp.WaitVisible(chromedp.ID("cancel"))); err != nil {
				t.Fatal(err)
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[layout](measure))
			if err != nil {
				t.Fatal(err)
			}
			if got.Cancel > got.Height || got.Height != float64(vp.height) {
				t.Errorf("%s %s: Cancel ends at %.0f px of a %.0f px viewport", vp.name, scheme, got.Cancel, got.Height)
			}
			if phoneFirst := got.Open < got.QR; phoneFirst != vp.phone {
				t.Errorf("%s %s: Open World App at %.0f px, QR code at %.0f px", vp.name, scheme, got.Open, got.QR)
			}
			if got.Frame != "rgb(255, 255, 255)" {
				t.Errorf("%s %s: the QR code's frame is %s", vp.name, scheme, got.Frame)
			}
			backgrounds[scheme] = got.Body
			if shots != "" {
				png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(shots, "wait-"+vp.name+"-"+scheme+".png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if backgrounds["light"] == backgrounds["dark"] {
		t.Errorf("light and dark pages have the same background %s", backgrounds["light"])
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(h.authorizeURL()), chromedp.WaitVisible(chromedp.ID("cancel")),
		chromedp.KeyEvent("\t")); err != nil {
		t.Fatal(err)
	}
	focus, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => { const a = document.activeElement, s = getComputedStyle(a);
		return a.id + " " + s.outlineStyle + " " + s.outlineWidth; })()`))
	if err != nil || focus != "wallet-link solid 3px" {
		t.Errorf("after Tab the focus is %q (%v), want the primary button with a 3px ring", focus, err)
	}
}

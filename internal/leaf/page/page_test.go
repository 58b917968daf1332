package page

import (
	"bytes"
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
	for _, name := range []string{Wait, Expired, Error, FormPost} {
		w := httptest.NewRecorder()
		err := Render(w, bytes.NewReader(make([]byte, 16)), http.StatusOK, name, func(h Head) any { return h })
		if err == nil || w.Body.Len() != 0 || len(w.Header()) != 0 {
			t.Errorf("%s: err %v, wrote %d bytes", name, err, w.Body.Len())
		}
	}
}

// TestRenderCSP: the stylesheet is inlined under a fresh nonce that the
// CSP names; a page without a script may run none; values are escaped.
func TestRenderCSP(t *testing.T) {
	w := httptest.NewRecorder()
	err := Render(w, bytes.NewReader(bytes.Repeat([]byte{7}, 16)), http.StatusGone, Error, func(h Head) any {
		return struct {
			Head
			Err struct{ Detail, Code, Attribute string }
		}{h, struct{ Detail, Code, Attribute string }{"<detail>", "gone", ""}}
	})
	if err != nil {
		t.Fatal(err)
	}
	m := nonceRE.FindStringSubmatch(w.Body.String())
	csp := w.Header().Get("Content-Security-Policy")
	if w.Code != http.StatusGone || m == nil || !strings.Contains(csp, "style-src 'nonce-"+m[1]+"'") || strings.Contains(csp, "script-src") ||
		!strings.Contains(csp, "default-src 'none'") || !strings.Contains(w.Body.String(), "&lt;detail&gt;") || !strings.Contains(w.Body.String(), "#match-code{") {
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

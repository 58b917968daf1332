package page

import (
	"bytes"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"net/http"
	"strings"
	"time"
)

//go:embed templates/*.html style.css
var files embed.FS

// templates holds one template per page plus the shared "head" and
// "brand".
var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"status":      func(state string) string { return statusLine(state).text },
	"tone":        func(state string) string { return statusLine(state).tone },
	"retry":       func(state string) bool { return state == "refused" || state == "wallet_error" },
	"statusTexts": func() map[string]string { return column(func(l line) string { return l.text }) },
	"statusTones": func() map[string]string { return column(func(l line) string { return l.tone }) },
	"clock":       func(unix int64) string { return time.Unix(unix, 0).UTC().Format("15:04 UTC") },
	"rfc3339":     func(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) },
}).ParseFS(files, "templates/*.html"))

// line is the wait page's status line in one state: its words and its
// tone (the colour: "", ok, warn or bad).
type line struct{ text, tone string }

// statusLines are the wait page's status lines by the state of the sign-in
// (the status route's "state"); the page's script shows the same lines.
// States not here (cancelled, expired, finished, and any other) make the
// script reload the page, so that the server shows the true state.
var statusLines = map[string]line{
	"pending":      {"Scan this code with World App, or open World App on this device.", ""},
	"scanned":      {"Confirm the sign-in in World App.", ""},
	"done":         {"Approved. Taking you back to the application…", "ok"},
	"refused":      {"World App's answer could not be verified, so you are not signed in.", "bad"},
	"wallet_error": {"World App could not complete the sign-in.", "bad"},
	"unavailable":  {"Can't reach World App's bridge just now; retrying…", "warn"},
}

// statusLine is the line of state; an unknown state is shown as pending.
func statusLine(state string) line {
	if l, ok := statusLines[state]; ok {
		return l
	}
	return statusLines["pending"]
}

func column(f func(line) string) map[string]string {
	m := make(map[string]string, len(statusLines))
	for state, l := range statusLines {
		m[state] = f(l)
	}
	return m
}

// style is the one stylesheet, inlined under each response's nonce.
var style = template.CSS(strings.TrimSpace(string(must(files.ReadFile("style.css")))))

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The pages, by template name.
const (
	Wait     = "wait"     // a pending sign-in: QR code, Open World App, Cancel, the polling script
	Ended    = "ended"    // a sign-in that is over: finished, cancelled or expired (the latter two: "Start again")
	Error    = "error"    // an error shown to the user
	FormPost = "formpost" // the self-submitting form_post response
	Device   = "device"   // the device grant's code entry form, or its outcome
	SignOut  = "signout"  // the question before a logout no ID token hint asked for
)

// scriptPolicy is the script part of each page's CSP: only the form_post
// and wait pages run a script, under the response's nonce; the wait page
// also polls its status route. They and the sign-out question have no
// form-action: browsers apply it to the redirects that follow a submission
// (the Cancel answer, the form_post callback and the signed-out return go
// to the relying party, possibly another origin).
var scriptPolicy = map[string]string{
	FormPost: "script-src 'nonce-{nonce}'; ",
	Wait:     "script-src 'nonce-{nonce}'; connect-src 'self'; ",
	// The device page's form posts to itself, whose answer redirects
	// to the wait page on the same origin.
	Device:  "form-action 'self'; ",
	SignOut: "", // no script; its form's answer redirects to the relying party
}

// Head is what the "head" template needs; each page's data embeds it.
type Head struct {
	Title, Nonce string
	Style        template.CSS
	Refresh      int // seconds; 0: no <noscript> refresh
}

// Render renders the named page into memory (so that a template failure
// never leaves a half-written response) with a fresh 128-bit nonce read
// from rand, and writes it with status under a CSP that allows nothing
// the page did not inline under that nonce. data builds the page's data
// from its Head. On an error nothing is written.
func Render(w http.ResponseWriter, rand io.Reader, status int, name string, data func(Head) any) error {
	var raw [16]byte
	if _, err := io.ReadFull(rand, raw[:]); err != nil {
		return err
	}
	head := Head{Title: "Sign in with World ID", Nonce: base64.RawURLEncoding.EncodeToString(raw[:]), Style: style}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data(head)); err != nil {
		return err
	}
	script := "form-action 'none'; "
	if p, ok := scriptPolicy[name]; ok {
		script = strings.ReplaceAll(p, "{nonce}", head.Nonce)
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; "+script+"style-src 'nonce-"+head.Nonce+"'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

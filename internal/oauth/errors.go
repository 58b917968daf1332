package oauth

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"worldid/internal/httpapi"
	"worldid/internal/leaf/page"
)

// Error is every error Sign in with World ID answers with (doc/design.md
// §4). Code is the doc/interfaces.md §7.1 name, OAuth the RFC 6749 / RFC
// 6750 / OIDC Core error name; JSON routes write both, HTML pages show
// them, and a redirected authorization error carries OAuth and Detail.
type Error struct {
	Status    int    `json:"-"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	Attribute string `json:"attribute"`
	// OAuth is omitted, with Description, only for a request without any
	// credentials at a bearer route (RFC 6750 §3.1).
	OAuth string `json:"error,omitempty"`
	// Description mirrors Detail under the OAuth member name.
	Description string `json:"error_description,omitempty"`

	Allow     string `json:"-"` // Allow header (405)
	Challenge string `json:"-"` // WWW-Authenticate header (401)
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// NewError is an error whose error_description repeats detail.
func NewError(status int, code, oauth, attribute, detail string) *Error {
	return &Error{Status: status, Code: code, OAuth: oauth, Attribute: attribute, Detail: detail, Description: detail}
}

// Request errors shared by every route.

func ErrMethod(method, allow string) *Error {
	e := NewError(http.StatusMethodNotAllowed, "method_not_allowed", "invalid_request", "", method+" is not allowed; allowed: "+allow)
	e.Allow = allow
	return e
}

func ErrContentType() *Error {
	return NewError(http.StatusUnsupportedMediaType, "invalid_content_type", "invalid_request", "Content-Type",
		"the content type must be application/x-www-form-urlencoded")
}

func ErrTooLarge() *Error {
	return NewError(http.StatusRequestEntityTooLarge, "request_too_large", "invalid_request", "", "the request body exceeds 64 KiB")
}

func ErrRequired(attribute string) *Error {
	return NewError(http.StatusBadRequest, "required", "invalid_request", attribute, attribute+" is required")
}

func ErrDuplicate(attribute string) *Error {
	return NewError(http.StatusBadRequest, "invalid_request", "invalid_request", attribute, attribute+" is given more than once")
}

func ErrInvalid(attribute, detail string) *Error {
	return NewError(http.StatusBadRequest, "invalid_request", "invalid_request", attribute, detail)
}

// ErrorParams are the parameters of a redirected error (RFC 6749 §4.1.2.1).
func ErrorParams(e *Error, state string) url.Values {
	v := url.Values{"error": {e.OAuth}, "error_description": {e.Detail}}
	if state != "" {
		v.Set("state", state)
	}
	return v
}

// Responder writes the answers of one package: JSON, pages and the
// triage of store and checker failures, logged under its Log.
type Responder struct {
	Log    *slog.Logger // required; slog.DiscardHandler to discard
	Prefix string       // of every log message: the package, "oidc: "
	Rand   io.Reader    // page nonces
}

// Internal is a failure of the store or the proof checker, triaged by
// internal/httpapi: 499 when the client went away (logged at Debug), 503
// when the store says it cannot write, else 500. The cause is logged,
// never sent, with the request's context ctx (so the line names the
// request id).
func (o Responder) Internal(ctx context.Context, where string, err error) *Error {
	switch status := httpapi.FailureStatus(ctx, o.Log, o.Prefix+where, err); status {
	case httpapi.StatusClientClosed:
		return NewError(status, "client_closed", "server_error", "", "the client closed the request")
	case http.StatusServiceUnavailable:
		return NewError(status, "unavailable", "temporarily_unavailable", "", "the service is temporarily unavailable")
	}
	return NewError(http.StatusInternalServerError, "internal", "server_error", "", "internal error")
}

// WriteError writes e as JSON, the one error writer of the JSON routes.
func (o Responder) WriteError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	if e.Allow != "" {
		h.Set("Allow", e.Allow)
	}
	if e.Challenge != "" {
		h.Set("WWW-Authenticate", e.Challenge)
	}
	o.WriteJSON(w, e.Status, e)
}

// WriteJSON writes v with internal/httpapi's JSON writer (no-store),
// adding what every answer of this interface carries: Pragma: no-cache
// for HTTP/1.0 caches (RFC 6749 §5.1) and X-Content-Type-Options: nosniff.
func (o Responder) WriteJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Pragma", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	httpapi.WriteJSON(w, status, v)
}

// RenderPage writes a page (internal/leaf/page); a failure is logged and
// answered with a plain 500.
func (o Responder) RenderPage(w http.ResponseWriter, status int, name string, data func(page.Head) any) {
	if err := page.Render(w, o.Rand, status, name, data); err != nil {
		o.Log.Error(o.Prefix+"render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
}

// errorPageData is the error page: a plain headline and advice for the
// kind of failure, the error's detail as a sentence, and its code only in
// small print, for the application's support.
type errorPageData struct {
	page.Head
	Headline, Message, Advice string
	Err                       *Error
}

// ErrorPage shows e to the user: the answer of every page route, and of
// the authorization endpoint when there is no validated redirect URI to
// send it to (RFC 6749 §4.1.2.1).
func (o Responder) ErrorPage(w http.ResponseWriter, e *Error) {
	if e.Allow != "" {
		w.Header().Set("Allow", e.Allow)
	}
	headline, advice := plainWords(e)
	o.RenderPage(w, e.Status, page.Error, func(base page.Head) any {
		return errorPageData{Head: base, Headline: headline, Message: sentence(e.Detail), Advice: advice, Err: e}
	})
}

// plainWords are the error page's headline and advice for e, in words a
// person who only wanted to sign in understands.
func plainWords(e *Error) (headline, advice string) {
	switch {
	case e.Code == "other_browser":
		return "This sign-in belongs to another browser",
			"Finish it in the browser where you started it, or go back to the application and sign in again here."
	case e.Status == http.StatusGone:
		return "Sign-in is no longer available here", "Go back to the application: it needs to use another way to sign in."
	case e.Status >= http.StatusInternalServerError:
		return "Something went wrong on our side", "Nothing was shared with the application. Please try again in a moment."
	}
	return "This sign-in can't continue",
		"Go back to the application and sign in again. If this keeps happening, tell the application's support what this page says."
}

// sentence ends detail with a full stop; the page's style capitalises
// its first letter, so the text stays the detail that the JSON routes
// send.
func sentence(detail string) string {
	if detail == "" || strings.HasSuffix(detail, ".") {
		return detail
	}
	return detail + "."
}

// Redirect answers 303 to loc without caching.
func Redirect(w http.ResponseWriter, loc string) {
	h := w.Header()
	h.Set("Location", loc)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusSeeOther)
}

package oidc

import (
	"encoding/json"
	"errors"
	"net/http"

	"worldid/internal/httpapi"
	"worldid/record"
)

// apiError is every error the provider answers with (doc/design.md §4). Code is
// the doc/interfaces.md §7.1 name, OAuth the RFC 6749 / RFC 6750 / OIDC Core
// error name; JSON routes write both, HTML pages show them, and a
// redirected authorization error carries OAuth and Detail.
type apiError struct {
	Status    int    `json:"-"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	Attribute string `json:"attribute"`
	// OAuth is omitted, with Description, only for a request without any
	// credentials at a bearer route (RFC 6750 §3.1).
	OAuth string `json:"error,omitempty"`
	// Description mirrors Detail under the OAuth member name.
	Description string `json:"error_description,omitempty"`

	allow     string // Allow header (405)
	challenge string // WWW-Authenticate header (401)
}

func (e *apiError) Error() string { return e.Code + ": " + e.Detail }

func newError(status int, code, oauth, attribute, detail string) *apiError {
	return &apiError{Status: status, Code: code, OAuth: oauth, Attribute: attribute, Detail: detail, Description: detail}
}

// Request errors shared by several endpoints.

func errMethod(method, allow string) *apiError {
	e := newError(http.StatusMethodNotAllowed, "method_not_allowed", "invalid_request", "", method+" is not allowed; allowed: "+allow)
	e.allow = allow
	return e
}

func errContentType() *apiError {
	return newError(http.StatusUnsupportedMediaType, "invalid_content_type", "invalid_request", "Content-Type",
		"the content type must be application/x-www-form-urlencoded")
}

func errTooLarge() *apiError {
	return newError(http.StatusRequestEntityTooLarge, "request_too_large", "invalid_request", "", "the request body exceeds 64 KiB")
}

func errRequired(attribute string) *apiError {
	return newError(http.StatusBadRequest, "required", "invalid_request", attribute, attribute+" is required")
}

func errDuplicate(attribute string) *apiError {
	return newError(http.StatusBadRequest, "invalid_request", "invalid_request", attribute, attribute+" is given more than once")
}

// errClientDisabled: the operator disabled the app (worldid app disable).
func errClientDisabled() *apiError {
	return newError(http.StatusBadRequest, "client_disabled", "unauthorized_client", "client_id", "this client is disabled by the operator")
}

func errInvalid(attribute, detail string) *apiError {
	return newError(http.StatusBadRequest, "invalid_request", "invalid_request", attribute, detail)
}

func errGone() *apiError {
	return newError(http.StatusGone, "gone", "invalid_request", "", "sign-in v1 has been shut down")
}

// Client authentication (RFC 6749 §5.2: 401 with a challenge for the scheme).
func errUnauthenticated(detail string) *apiError {
	e := newError(http.StatusUnauthorized, "unauthenticated", "invalid_client", "", detail)
	e.challenge = `Basic realm="worldid"`
	return e
}

// Bearer token errors (RFC 6750 §3). A request without any token gets the
// bare challenge and no OAuth error code (§3.1: "SHOULD NOT include an
// error code or other error information").
func errNoBearer() *apiError {
	e := newError(http.StatusUnauthorized, "unauthenticated", "", "Authorization", "a bearer access token is required")
	e.Description = ""
	e.challenge = `Bearer realm="worldid"`
	return e
}

func errInvalidToken() *apiError {
	const detail = "the access token is invalid, expired or revoked"
	e := newError(http.StatusUnauthorized, "invalid_token", "invalid_token", "", detail)
	e.challenge = `Bearer realm="worldid", error="invalid_token", error_description="` + detail + `"`
	return e
}

func errInvalidGrant(detail string) *apiError {
	return newError(http.StatusBadRequest, "invalid_grant", "invalid_grant", "code", detail)
}

// errInternal is a failure of the store or the proof checker: 503 when the
// store says it cannot write, else 500. The cause is logged, never sent.
func (p *Provider) errInternal(where string, err error) *apiError {
	if httpapi.ClientGone(err) {
		p.log.Debug("oidc: client went away", "where", where)
		return newError(httpapi.StatusClientClosed, "client_closed", "server_error", "", "the client closed the request")
	}
	p.log.Error("oidc: "+where, "err", err)
	if errors.Is(err, record.ErrUnavailable) {
		return newError(http.StatusServiceUnavailable, "unavailable", "temporarily_unavailable", "", "the service is temporarily unavailable")
	}
	return newError(http.StatusInternalServerError, "internal", "server_error", "", "internal error")
}

// writeError writes e as JSON, the one error writer of the JSON routes.
func (p *Provider) writeError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	if e.allow != "" {
		h.Set("Allow", e.allow)
	}
	if e.challenge != "" {
		h.Set("WWW-Authenticate", e.challenge)
	}
	p.writeJSON(w, e.Status, e)
}

// writeJSON writes v with the headers every JSON answer here carries.
func (p *Provider) writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		p.log.Error("oidc: encode response", "err", err)
		status, body = http.StatusInternalServerError, []byte(`{"code":"internal","detail":"internal error","attribute":"","error":"server_error","error_description":"internal error"}`)
	}
	writeBody(w, status, "application/json", append(body, '\n'))
}

// writeBody writes a complete response that must not be cached (doc/design.md
// §4: token, introspect, userinfo; also every error and page).
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

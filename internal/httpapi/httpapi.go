package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"

	"worldid/record"
)

// StatusClientClosed is the status a handler records for a request whose
// client went away before it was answered (nginx's 499, "client closed
// request"): nobody reads it, and it is no failure of the server, so it
// must not count as a 5xx in the metrics nor be logged as an error.
const StatusClientClosed = 499

// WriteJSON writes v as the whole answer with status, as JSON that must
// not be cached. An encoding error means the client went away (every
// value written here encodes); there is no one left to tell.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ClientGone reports whether err is the cancellation of a request's
// context: its client disconnected (net/http cancels the context then). A
// backend's own deadline, which it reports as record.ErrUnavailable, is not.
func ClientGone(err error) bool {
	return errors.Is(err, context.Canceled) && !errors.Is(err, record.ErrUnavailable)
}

// FailureStatus classifies err, a failure that ends a request without
// being the handler's verdict, logs it under the prefix (the handler's
// name, "verify") with the request's context ctx (so the line names the
// request id, internal/leaf/metrics) and returns the status to answer:
// StatusClientClosed for a client that went away (logged at Debug, the
// client is the cause), 503 for storage that cannot write
// (record.ErrUnavailable) and 500 for anything else (both logged at Error
// with the cause, which the answer never carries).
func FailureStatus(ctx context.Context, log *slog.Logger, prefix string, err error) int {
	switch {
	case ClientGone(err):
		log.DebugContext(ctx, prefix+": client went away")
		return StatusClientClosed
	case errors.Is(err, record.ErrUnavailable):
		log.ErrorContext(ctx, prefix+": storage unavailable", "err", err)
		return http.StatusServiceUnavailable
	}
	log.ErrorContext(ctx, prefix+": internal error", "err", err)
	return http.StatusInternalServerError
}

// AllowMethod reports whether r's method is one of allowed. If it is not,
// it sets the Allow header to the allowed methods (RFC 9110 §15.5.6: a 405
// answer lists them), and the caller writes its own 405 body.
func AllowMethod(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	if slices.Contains(allowed, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	return false
}

// HasMediaType reports whether the Content-Type header value contentType
// parses as a whole (RFC 9110 §8.3.1) and names exactly the media type
// want (type and subtype compare case-insensitively), and returns its
// parameters, names lowercased.
func HasMediaType(contentType, want string) (params map[string]string, ok bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != want {
		return nil, false
	}
	return params, true
}

// CharsetUTF8 reports whether the media type parameters name no charset
// or charset=utf-8 (RFC 8259 §8.1: JSON exchanged between systems is
// UTF-8; the value compares case-insensitively, RFC 9110 §8.3.2).
func CharsetUTF8(params map[string]string) bool {
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

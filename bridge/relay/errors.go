package relay

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"worldid/record"
)

// Error is every failure the relay answers: a status code (the body is
// empty, as wallet-bridge's) and a reason for the debug log.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return "relay: " + strconv.Itoa(e.Status) + " " + e.Reason }

func statusError(status int, reason string) error { return &Error{Status: status, Reason: reason} }

// storeError maps a store error to the answer wallet-bridge gives in that
// case: notFound for ErrNotFound, 409 for ErrExists, 503 when full or down.
func storeError(err error, notFound int) error {
	switch {
	case errors.Is(err, record.ErrNotFound):
		return statusError(notFound, "unknown or expired id")
	case errors.Is(err, record.ErrExists):
		return statusError(http.StatusConflict, "already there")
	case errors.Is(err, record.ErrUnavailable):
		return statusError(http.StatusServiceUnavailable, err.Error())
	}
	return err
}

// writeError writes e's status with an empty body; anything else is a
// 500 and logged as an error (store errors name no payload or key).
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		log.Error("bridge relay", "method", r.Method, "path", r.URL.Path, "err", err)
		e = &Error{Status: http.StatusInternalServerError}
	} else {
		log.Debug("bridge relay refused", "method", r.Method, "status", e.Status, "reason", e.Reason)
	}
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if e.Status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", allowedMethods)
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(e.Status)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // unreachable: bridge's types marshal
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

package relay

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"worldid/internal/httpapi"
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
// case: notFound for ErrNotFound, 409 for ErrExists; the rest (full, down,
// client gone) is writeError's triage.
func storeError(err error, notFound int) error {
	switch {
	case errors.Is(err, record.ErrNotFound):
		return statusError(notFound, "unknown or expired id")
	case errors.Is(err, record.ErrExists):
		return statusError(http.StatusConflict, "already there")
	}
	return err
}

// writeError writes e's status with an empty body, as wallet-bridge
// answers; any other error is triaged by internal/httpapi like every
// handler's (499 client gone, 503 storage unavailable, else 500), logged
// with the request's context (store errors name no payload or key).
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: httpapi.FailureStatus(r.Context(), log, "bridge relay "+r.Method, err)}
	} else {
		log.DebugContext(r.Context(), "bridge relay refused", "method", r.Method, "status", e.Status, "reason", e.Reason)
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

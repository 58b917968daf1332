package refresh

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"worldid/internal/httpapi"
)

// Error codes of the refresh endpoint. The first five are doc/interfaces.md
// §7.2; the others are this server's (see doc.go).
const (
	CodeInvalidSub          = "INVALID_SUB"
	CodeSubMismatch         = "SUB_MISMATCH"
	CodeNoSignupRecord      = "NO_SIGNUP_RECORD"
	CodeRateLimitExceeded   = "RATE_LIMIT_EXCEEDED"
	CodePCPValidationFailed = "PCP_VALIDATION_FAILED"
	CodeInvalidProof        = "INVALID_PROOF"
	CodeInvalidRequest      = "INVALID_REQUEST"
	CodePayloadTooLarge     = "PAYLOAD_TOO_LARGE"
	CodeMethodNotAllowed    = "METHOD_NOT_ALLOWED"
	CodeServiceUnavailable  = "SERVICE_UNAVAILABLE"
	CodeInternal            = "INTERNAL_ERROR"
)

// Error is the endpoint's one error type: everything that ends a request
// early becomes one, and writeError renders it.
type Error struct {
	Status  int
	Code    string // "" only for the disabled endpoint (doc/interfaces.md §7.2: no error name)
	Message string
	// Check names the failed PCP check (doc/crypto.md §h bracketed names, plus
	// partial, signup_id and pcp_reuse); set only with PCP_VALIDATION_FAILED.
	Check string
	// RetryAfter is the whole seconds for the Retry-After header of a 429.
	RetryAfter int
}

func (e *Error) Error() string { return fmt.Sprintf("refresh: %d %s: %s", e.Status, e.Code, e.Message) }

func newError(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

func pcpFailed(check, detail string) *Error {
	return &Error{
		Status:  http.StatusUnprocessableEntity,
		Code:    CodePCPValidationFailed,
		Message: "PCP validation failed: " + check + ": " + detail,
		Check:   check,
	}
}

// errorBody is {success:false, error, message} (doc/design.md §7).
type errorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error,omitempty"`
	Message string `json:"message"`
}

// writeError renders err. Errors other than an *Error (storage failures
// that escape the handler's own mapping) are triaged by
// httpapi.FailureStatus: 499, 503 or 500, logged without request data.
// It returns the error code written.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) (code string) {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		e = failure(httpapi.FailureStatus(r.Context(), log, "refresh", err))
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	httpapi.WriteJSON(w, e.Status, errorBody{Error: e.Code, Message: e.Message})
	return e.Code
}

// failure is this endpoint's body for a triaged failure status.
func failure(status int) *Error {
	switch status {
	case httpapi.StatusClientClosed:
		return newError(status, CodeInternal, "the client closed the request")
	case http.StatusServiceUnavailable:
		return newError(status, CodeServiceUnavailable, "storage cannot accept writes")
	default:
		return newError(status, CodeInternal, "internal error")
	}
}

package verify

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Top-level error codes (see doc.go for the full table).
const (
	codeInvalidRequest  = "invalid_request"
	codeValidation      = "validation_error"
	codeNotFound        = "not_found"
	codeAppDisabled     = "app_disabled"
	codeMethod          = "method_not_allowed"
	codeContentType     = "invalid_content_type"
	codeTooLarge        = "request_too_large"
	codeAllFailed       = "all_verifications_failed"
	codeLimitReached    = "max_verifications_reached" // also a per-result code
	codeInternal        = "internal_error"
	codeUnavailable     = "service_unavailable"
	codeVerificationErr = "verification_error" // per-result: the check itself failed
)

// Error is every answer other than 200: a rejected request, or a request
// whose proofs were checked and none was accepted (then Results is set).
type Error struct {
	Status    int      // HTTP status
	Code      string   // machine-readable code
	Detail    string   // human-readable, safe to show the caller
	Attribute string   // the request attribute at fault ("responses[0].nullifier"), or ""
	Results   []Result // one per request item when verification ran, else nil
}

func (e *Error) Error() string {
	if e.Attribute != "" {
		return fmt.Sprintf("verify: %s: %s: %s", e.Code, e.Attribute, e.Detail)
	}
	return fmt.Sprintf("verify: %s: %s", e.Code, e.Detail)
}

// MarshalJSON writes the two bodies of doc/design.md §5: a request error is
// {code, detail, attribute} (attribute null when none); a verification
// outcome is {success: false, code, detail, results}.
func (e *Error) MarshalJSON() ([]byte, error) {
	if e.Results != nil {
		return json.Marshal(struct {
			Success bool     `json:"success"`
			Code    string   `json:"code"`
			Detail  string   `json:"detail"`
			Results []Result `json:"results"`
		}{false, e.Code, e.Detail, e.Results})
	}
	var attr *string
	if e.Attribute != "" {
		attr = &e.Attribute
	}
	return json.Marshal(struct {
		Code      string  `json:"code"`
		Detail    string  `json:"detail"`
		Attribute *string `json:"attribute"`
	}{e.Code, e.Detail, attr})
}

func invalid(attribute, detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: codeValidation, Detail: attribute + " " + detail, Attribute: attribute}
}

func badRequest(detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequest, Detail: detail}
}

package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"worldid/bridge"
)

// parseID reads the {id} path value under wallet-bridge's rule.
func parseID(r *http.Request) (string, error) {
	id, err := bridge.NormalizeRequestID(r.PathValue("id"))
	if err != nil {
		return "", statusError(http.StatusBadRequest, "request id")
	}
	return id, nil
}

// envelopeBody is the JSON body of POST /request and PUT /response; the
// pointers tell a missing member from an empty one.
type envelopeBody struct {
	IV        *string `json:"iv"`
	Payload   *string `json:"payload"`
	RequestID *string `json:"request_id"`
}

// parseBody reads a JSON body of at most max bytes into an envelope and
// the optional request_id.
func parseBody(r *http.Request, max int64) (bridge.Envelope, *string, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return bridge.Envelope{}, nil, statusError(http.StatusUnsupportedMediaType, "content type")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return bridge.Envelope{}, nil, statusError(http.StatusRequestEntityTooLarge, "body")
	}
	if err != nil {
		return bridge.Envelope{}, nil, statusError(http.StatusBadRequest, "reading body")
	}
	return decodeEnvelope(raw)
}

// decodeEnvelope: 400 for JSON that does not parse (or trails data), 422
// for a missing or mistyped member, as axum's Json extractor.
func decodeEnvelope(raw []byte) (bridge.Envelope, *string, error) {
	if !json.Valid(raw) {
		return bridge.Envelope{}, nil, statusError(http.StatusBadRequest, "body is not JSON")
	}
	var b envelopeBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&b); err != nil || b.IV == nil || b.Payload == nil {
		return bridge.Envelope{}, nil, statusError(http.StatusUnprocessableEntity, "iv and payload must be strings")
	}
	return bridge.Envelope{IV: *b.IV, Payload: *b.Payload}, b.RequestID, nil
}

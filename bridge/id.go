package bridge

import (
	"errors"
	"strings"
)

// Request-id bounds of wallet-bridge (src/utils.rs REQUEST_ID_MIN_LEN,
// REQUEST_ID_MAX_LEN): a UUID is 36 characters.
const (
	minRequestID = 16
	maxRequestID = 256
)

// ErrRequestID reports a request id outside the relay's rule.
var ErrRequestID = errors.New("bridge: request id must be 16 to 256 characters of A-Z, a-z, 0-9, hyphen, underscore or dot")

// NormalizeRequestID applies wallet-bridge's rule to an id from a path or a
// body: the relay lowercases it, then requires 16–256 characters of
// [a-z0-9-_.]. It returns the lowercased id.
func NormalizeRequestID(id string) (string, error) {
	if len(id) < minRequestID || len(id) > maxRequestID {
		return "", ErrRequestID
	}
	for i := 0; i < len(id); i++ {
		if !isIDByte(id[i]) {
			return "", ErrRequestID
		}
	}
	return strings.ToLower(id), nil
}

func isIDByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

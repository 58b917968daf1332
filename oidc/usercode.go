package oidc

import (
	"io"
	"strings"
)

// User codes of the device authorization grant (RFC 8628 §6.1): 8
// characters of 20 consonants, shown as XXXX-XXXX. Without vowels no word
// can be spelled, and the alphabet has no look-alike pairs (no 0/O, 1/I/L,
// 5/S split: only letters, none of A E I O U Y). 20^8 ≈ 2^34.6 codes; the
// verification page bounds guesses (deviceverify.go).
const (
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ" // RFC 8628 §6.1's example alphabet
	userCodeLen      = 8
	userCodeHalf     = userCodeLen / 2
)

// newUserCode draws a user code from rand without modulo bias: a byte
// below 240 (12 × 20) picks letter b mod 20, others are drawn again.
func newUserCode(rand io.Reader) (string, error) {
	out := make([]byte, 0, userCodeLen)
	var buf [16]byte
	for len(out) < userCodeLen {
		if _, err := io.ReadFull(rand, buf[:]); err != nil {
			return "", err
		}
		for _, b := range buf {
			if b < 240 && len(out) < userCodeLen {
				out = append(out, userCodeAlphabet[b%20])
			}
		}
	}
	return string(out), nil
}

// formatUserCode is how a user code is shown: XXXX-XXXX.
func formatUserCode(code string) string {
	return code[:userCodeHalf] + "-" + code[userCodeHalf:]
}

// maxUserCodeInput bounds what the user may type around the 8 letters.
const maxUserCodeInput = 32

// parseUserCode reads what the user typed (RFC 8628 §6.1: case-
// insensitive, punctuation ignored): letters of the alphabet in either
// case, with any dashes and spaces; it returns the 8 letters in upper
// case, or false.
func parseUserCode(s string) (string, bool) {
	if len(s) > maxUserCodeInput {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		if strings.IndexByte(userCodeAlphabet, c) < 0 || b.Len() == userCodeLen {
			return "", false
		}
		b.WriteByte(c)
	}
	if b.Len() != userCodeLen {
		return "", false
	}
	return b.String(), true
}
